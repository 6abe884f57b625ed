"""Autoplay over the kernel and critical memory: the interim terminal loop of ``egm run --sim
--autoplay`` until the cabinet (the terminal issue) replaces it, and the power-fail harness's target.

Each cycle: at start-up verify critical memory and log the power-up; finish a round the power cut
short; then play rounds with the documented automatic wagers, inserting a simulated note when the
credits run short and cashing out by ticket now and then. Every money movement and every round
transition is committed to critical memory before the loop goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from firmware.cards.source import RngShoe
from firmware.games.registry import get_game, make_options
from firmware.kernel.limits import BetLimits
from firmware.kernel.round import RoundKernel
from firmware.ledger.ledger import Ledger
from firmware.ledger.resume import resume_round

NOTE_CENTS = 2000          #: the simulated note: $20
CASHOUT_EVERY = 25         #: rounds between simulated cash-outs by ticket


@dataclass(slots=True)
class AutoplayResult:
    rounds: int
    resumed: str | None
    credits_cents: int


def autoplay(
    ledger: Ledger,
    *,
    game_id: str,
    options_table: dict[str, Any],
    limits: BetLimits,
    seats: int,
    rng: Any,
    rounds: int,
    on_round: Callable[[dict[str, Any]], None] | None = None,
) -> AutoplayResult:
    game = get_game(game_id)
    options = make_options(game_id, options_table)
    resumed = None
    kernel = resume_round(ledger, rng, decider=lambda req: req.default)
    if kernel is not None:
        resumed = kernel.round_id
        if on_round is not None:
            on_round(kernel.record())
    unit = max(limits.min_bet, min(10, limits.max_bet))
    wagers = game.automatic_wagers(options, seats, unit)
    stake = sum(sum(b.values()) for b in wagers.values()) + game.reserved_stake(options, wagers)
    stake_cents = stake * ledger.denom_cents
    kernel = RoundKernel(game, options, limits=limits, journal=ledger)
    source = RngShoe(rng, game.shoe(options))
    for i in range(rounds):
        while ledger.credits_cents < stake_cents:
            note = max(NOTE_CENTS, stake_cents)
            note += (-note) % ledger.denom_cents
            ledger.bill_in(note, denom_cents=note)
        dice = game.roll_dice(rng) if game.dice else None
        kernel.play(wagers, source, credits=ledger.credits, dice=dice)
        if on_round is not None:
            on_round(kernel.record())
        if (i + 1) % CASHOUT_EVERY == 0 and ledger.credits_cents:
            ledger.ticket_out(ledger.credits_cents, f"SIM{ledger.rows:015d}")
    return AutoplayResult(rounds, resumed, ledger.credits_cents)
