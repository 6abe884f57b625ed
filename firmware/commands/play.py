"""``egm round`` and ``egm simulate``: one round, or many, through the real kernel."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from firmware.commands._common import emit_json, game_id, game_ids, json_argument, positive_int
from firmware.errors import UsageError

if TYPE_CHECKING:  # imported where used: the CLI starts without the game modules
    from collections.abc import Callable

    from rich.progress import Progress

    from firmware.cards.source import CardSource
    from firmware.config.schema import Config
    from firmware.games.base import DecisionRequest
    from firmware.games.options import GameOptions
    from firmware.games.registry import AnyGame
    from firmware.kernel.limits import BetLimits
    from firmware.rng.service import RngService

DEFAULT_UNIT = 10


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser(
        "round",
        help="play exactly one round through the real kernel",
        description="Play one round. Cards come from --cards (stacked, in the game's dealing order), "
        "--seed (a deterministic DRBG) or, by default, the production RNG. Decisions not given with "
        "--decision are taken by the game's documented automatic strategy.",
    )
    _game_arguments(r)
    r.add_argument("--seats", type=positive_int, help="seats 1..N play the default wagers when no --wager is given")
    r.add_argument("--wager", action="append", default=[], metavar="SEAT:NAME=AMOUNT",
                   help="a wager, e.g. 1:bac=10 (repeatable)")
    src = r.add_mutually_exclusive_group()
    src.add_argument("--cards", help="stack the shoe: cards in dealing order, e.g. 'Qs 3h 2d Ah'")
    src.add_argument("--seed", help="seed a deterministic DRBG (replayable)")
    r.add_argument("--dice", help="fix the dice of games that roll them: N or N,N,N")
    r.add_argument("--decision", action="append", default=[], metavar="SEAT:ACTION",
                   help="a player decision: play, fold, set:<cards>|<cards>, house-way (repeatable)")
    r.add_argument("--json", action="store_true", help="print the round record as JSON")
    r.set_defaults(func=_round)

    s = sub.add_parser(
        "simulate",
        help="play many rounds with the automatic strategy and report each wager's return",
    )
    _game_arguments(s)
    s.add_argument("--rounds", type=positive_int, required=True, help="how many rounds to play")
    s.add_argument("--seed", help="seed a deterministic DRBG (default: the production RNG)")
    s.add_argument("--seats", type=positive_int, default=1, help="seats played (default 1)")
    s.add_argument("--unit", type=positive_int, default=DEFAULT_UNIT,
                   help=f"credits on each automatic wager (default {DEFAULT_UNIT})")
    s.add_argument("--wager", action="append", default=[], metavar="SEAT:NAME=AMOUNT",
                   help="play these wagers every round instead of the automatic ones (repeatable)")
    json_argument(s)
    s.set_defaults(func=_simulate)


def _game_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", metavar="GAME", type=game_id, choices=game_ids(), help=f"game id: {', '.join(game_ids())}")
    _option_arguments(p)


def _option_arguments(p: argparse.ArgumentParser) -> None:
    """``--config`` and ``--option``: which game options a command plays (:func:`_configured`)."""
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a rules option over the configuration's, e.g. war_scoring=high_card or "
                        "pool.commission=5 (repeatable)")
    p.add_argument("--config", metavar="FILE",
                   help="terminal configuration (TOML, as egm run --config) whose game options and table "
                        "limits to use (default: the terminal's default configuration)")


def _configured(game_id: str, args: argparse.Namespace) -> tuple[Config, GameOptions]:
    """The configuration (``--config``, else the terminal's default one) and ``game_id``'s options
    under it, ``--option`` last: the options the terminal itself would play."""
    from firmware.commands._common import load_terminal_config
    from firmware.games.options import parse_assignments
    from firmware.games.registry import configured_options

    cfg = load_terminal_config(args.config)
    return cfg, configured_options(cfg, game_id, parse_assignments(args.option))


def _load(args: argparse.Namespace) -> tuple[AnyGame, GameOptions, BetLimits]:
    """The game, its options (:func:`_configured`) and the configuration's table limits."""
    from firmware.games.registry import get_game
    from firmware.kernel.limits import BetLimits

    game = get_game(args.game)
    cfg, options = _configured(game.id, args)
    return game, options, BetLimits.from_config(cfg.limits)


def parse_wager(text: str) -> tuple[int, str, int]:
    seat_part, sep, rest = text.partition(":")
    name, sep2, amount_part = rest.partition("=")
    if not sep or not sep2 or not seat_part.strip() or not name.strip():
        raise UsageError(f"bad --wager {text!r}: expected SEAT:NAME=AMOUNT, e.g. 1:bac=10")
    try:
        seat = int(seat_part)
    except ValueError:
        raise UsageError(f"bad --wager {text!r}: seat {seat_part!r} is not a number") from None
    try:
        amount = int(amount_part)
    except ValueError:
        raise UsageError(
            f"bad --wager {text!r}: amount {amount_part!r} is not a whole number of credits"
        ) from None
    return seat, name.strip().lower(), amount


def parse_decision(text: str) -> tuple[int, str]:
    seat_part, sep, action = text.partition(":")
    if not sep or not action.strip():
        raise UsageError(f"bad --decision {text!r}: expected SEAT:ACTION, e.g. 1:play")
    try:
        return int(seat_part), action.strip()
    except ValueError:
        raise UsageError(f"bad --decision {text!r}: seat {seat_part!r} is not a number") from None


def parse_dice(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(p) for p in text.split(","))
    except ValueError:
        raise UsageError(f"bad --dice {text!r}: expected N or N,N,N") from None


def _wagers(texts: list[str], seats: int | None) -> dict[int, dict[str, int]]:
    wagers: dict[int, dict[str, int]] = {}
    for text in texts:
        seat, name, amount = parse_wager(text)
        if seats and seat > seats:
            raise UsageError(f"--wager {text!r} names seat {seat} but --seats is {seats}")
        bets = wagers.setdefault(seat, {})
        if name in bets:
            raise UsageError(f"seat {seat}: {name} is given twice")
        bets[name] = amount
    return wagers


def _make_rng(seed: str | None) -> RngService:
    from firmware.rng.service import RngService

    return RngService.seeded(seed) if seed is not None else RngService.production()


def _round(args: argparse.Namespace) -> int:
    from firmware.cards.card import parse_cards
    from firmware.cards.source import RngShoe, StackedSource
    from firmware.kernel.round import RoundKernel

    game, options, limits = _load(args)
    wagers = _wagers(args.wager, args.seats)
    if not wagers:
        unit = max(limits.min_bet, min(DEFAULT_UNIT, limits.max_bet))
        wagers = game.automatic_wagers(options, args.seats or 1, unit)
    decisions: dict[int, list[str]] = {}
    for text in args.decision:
        seat, action = parse_decision(text)
        decisions.setdefault(seat, []).append(action)
    dice = parse_dice(args.dice)
    if args.cards is not None:
        source: CardSource = StackedSource(parse_cards(args.cards), shoe=game.shoe(options))
        if dice is None and game.dice:
            raise UsageError(f"{game.id} rolls dice: give --dice with --cards")
    else:
        rng = _make_rng(args.seed)
        if dice is None and game.dice:
            dice = game.roll_dice(rng)
        source = RngShoe(rng, game.shoe(options))

    kernel = RoundKernel(game, options, limits=limits)

    def decider(request: DecisionRequest) -> str:
        queue = decisions.get(request.seat)
        if queue:
            return queue.pop(0)
        return game.automatic_decision(kernel.round, request)

    kernel.play(wagers, source, dice=dice, decider=decider)
    unused = {s: q for s, q in decisions.items() if q}
    if unused:
        raise UsageError(f"decision(s) not asked for: {unused}")
    record = kernel.record()
    if args.json:
        emit_json(record)
    else:
        _print_round(record)
    return 0


def _print_round(record: dict[str, Any]) -> None:
    from firmware.games.outcome_label import outcome_label

    out = sys.stdout
    out.write(f"{record['game']}  round {record['round_id'][:12]}\n")
    if record.get("dice"):
        out.write(f"dice    {' '.join(map(str, record['dice']))}\n")
    dealer = record.get("dealer")
    if dealer:
        war = f"  war cards {' '.join(dealer['war_cards'])}" if dealer.get("war_cards") else ""
        out.write(f"dealer  {' '.join(dealer['cards'])}  score {dealer['score']}{war}\n")
    for seat in record["seats"]:
        war = f"  war cards {' '.join(seat['war_cards'])}" if seat.get("war_cards") else ""
        out.write(f"seat {seat['seat']}  {' '.join(seat['cards'])}  score {seat['score']}{war}\n")
        stakes = seat.get("stakes", seat["wagers"])     # final stakes: PLAY, fees included
        for name, res in seat.get("results", {}).items():
            stake = stakes.get(name, 0)
            label = outcome_label(res["outcome"], res["net"], stake)
            out.write(f"    {name:<10s} {stake:>6d}  {label:<24s} {res['net']:+d}\n")
    pool = record.get("war_pool")
    if pool and pool.get("pot"):
        out.write(f"war pool {pool['pot']}: contestants {pool['contestants']}, winner {pool['winner']}, "
                  f"commission {pool['commission']}\n")
    out.write(f"net {record['net']:+d}\n")


def _simulate(args: argparse.Namespace) -> int:
    from firmware.kernel.limits import NO_LIMITS, validate_wagers
    from firmware.kernel.simulate import simulate

    game, options, _limits = _load(args)
    wagers = _wagers(args.wager, None) or None
    if wagers is not None:
        wagers = validate_wagers(game, options, wagers, NO_LIMITS)
    rng = _make_rng(args.seed)
    progress_cm = _progress(args.rounds, f"simulate {game.id}")
    with progress_cm as advance:
        result = simulate(game, options, args.rounds, rng=rng, seed=args.seed, seats=args.seats,
                          unit=args.unit, wagers=wagers, progress=advance)
    doc = result.to_json()
    if args.json:
        emit_json(doc)
    else:
        _print_simulation(doc)
    return 0


class _progress:
    """A rich progress bar on stderr when it is a terminal; otherwise nothing."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.label = total, label
        self._progress: Progress | None = None

    def __enter__(self) -> Callable[[int], None] | None:
        if not sys.stderr.isatty():
            return None
        from rich.console import Console
        from rich.progress import Progress

        progress = self._progress = Progress(console=Console(stderr=True), transient=True)
        progress.start()
        task = progress.add_task(self.label, total=self.total)
        return lambda n: progress.advance(task, n)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()


def _print_simulation(doc: dict[str, Any]) -> None:
    out = sys.stdout
    out.write(f"{doc['game']}: {doc['rounds']:,} rounds, {doc['seats']} seat(s), "
              f"{doc['rounds_per_second']:,.0f} rounds/s\n")
    out.write(f"{'wager':<12s} {'wagered':>14s} {'net':>12s} {'rtp':>9s}  95% interval\n")
    for name, w in doc["wagers"].items():
        ci = w["ci95"]
        ci_text = f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "-"
        out.write(f"{name:<12s} {w['wagered']:>14,d} {w['net']:>12,d} {w['rtp']:>9.4f}  {ci_text}\n")
