"""What the lab suite's table-game tests (GLI-24) share: the card-reading shoe as the card source,
a round played to its end from the cards the dealer draws, the order a Baccarat War round deals its
cards in, and the product's own pure game code as the judge of a round's outcome.

* :data:`SHOE_CONFIG`: the configuration that makes the simulated cabinet deal from its simulated
  card-reading shoe (``[devices] shoe = "sim:shoe"``) instead of the RNG.
* :func:`dealing_order`: a Baccarat War round record's cards in the order the rules deal them
  (two cards to each seat in ascending order and then the dealer, twice; then each war step: the
  seats still at war, ascending, then the dealer's shared war card), so a record's hands can be
  compared with the cards its source dealt.
* :func:`rules_outcome`: ``egm round GAME --cards ... --wager ... --json`` in its own process, the
  product's pure game code (no cabinet, no ledger) playing the same cards and wagers.
* :func:`hands`: every hand of a record (each seat, the dealer) with its cards and war cards.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from firmware.hil.checks_money import until
from firmware.hil.checks_rng import egm
from firmware.hil.errors import TargetError
from firmware.hil.target import Target

GAME = "baccarat-war"
SHOE_CONFIG = '[devices]\nshoe = "sim:shoe"\n'


def dealing_order(record: Mapping[str, Any]) -> list[str]:
    """The cards of a Baccarat War round ``record`` (recall's seats and dealer) in dealing order."""
    seats = sorted(record["seats"], key=lambda s: int(s["seat"]))
    dealer = record["dealer"]
    order: list[str] = []
    for i in range(2):
        order += [seat["cards"][i] for seat in seats if len(seat["cards"]) > i]
        if len(dealer["cards"]) > i:
            order.append(dealer["cards"][i])
    steps = max([len(s.get("war_cards") or []) for s in seats] + [len(dealer.get("war_cards") or [])])
    for i in range(steps):
        order += [seat["war_cards"][i] for seat in seats if len(seat.get("war_cards") or []) > i]
        if len(dealer.get("war_cards") or []) > i:
            order.append(dealer["war_cards"][i])
    return order


def hands(record: Mapping[str, Any]) -> dict[str, dict[str, list[str]]]:
    """``{"seat 1": {"cards": [...], "war_cards": [...]}, ..., "dealer": {...}}`` of a round record."""
    out = {f"seat {s['seat']}": {"cards": list(s["cards"]), "war_cards": list(s.get("war_cards") or [])}
           for s in sorted(record["seats"], key=lambda s: int(s["seat"]))}
    dealer = record["dealer"]
    out["dealer"] = {"cards": list(dealer["cards"]), "war_cards": list(dealer.get("war_cards") or [])}
    return out


def results(record: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each seat's wager results (``{"seat 1": {"bac": {"outcome", "net"}, ...}}``) of a record."""
    return {f"seat {s['seat']}": s.get("results") for s in record["seats"]}


def rules_outcome(cards: list[str], wagers: Mapping[int, Mapping[str, int]], *, game: str = GAME,
                  config: Path | None = None) -> dict[str, Any]:
    """The round the product's pure game code plays from ``cards`` with ``wagers`` (``egm round``,
    a fresh process, the terminal's configuration for the game's options): its record."""
    args = ["round", game, "--cards", " ".join(cards), "--json"]
    args += [f"--wager={seat}:{name}={amount}" for seat, bets in sorted(wagers.items())
             for name, amount in bets.items()]
    if config is not None:
        args += ["--config", str(config)]
    done = egm(*args, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"egm {' '.join(args)} failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    record: dict[str, Any] = json.loads(done.stdout)
    return record


def within_time(check: Callable[[], Any], *, timeout: float) -> Any:
    """``check()``'s first true answer within ``timeout`` seconds, else None: the caller measures
    it, so a round that never ends is a FAIL with its measurement, not an error."""
    try:
        return until(check, timeout=timeout)
    except TargetError:
        return None


def round_over(cabinet: Target, rounds: int) -> dict[str, Any] | None:
    """The status once ``rounds`` rounds were played and none is open (else None)."""
    snap = cabinet.status()
    return snap if snap.get("rounds_played", 0) >= rounds and snap.get("round") is None else None
