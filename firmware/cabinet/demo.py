"""The technician's demo mode: real rounds of the current game with credits that are not money.

A demo round goes through the same :class:`~firmware.kernel.round.RoundKernel` and game code as a
played one, dealt by an :class:`~firmware.cards.source.RngShoe` on the terminal's certified RNG,
with the game's automatic decisions. What makes it a demo is what it does *not* touch:

* the kernel has no journal (its default ``NullJournal``): nothing reaches the round journal, the
  recall or the meters;
* the credits (:attr:`DemoMode.credits`, 10,000 by default) live only in this object: the ledger's
  credit meter is never read for a wager nor written;
* the terminal's own round state (its kernel cache, card sources, ``last_record``,
  ``rounds_played``) is left alone.

Demo mode may start only where no player can be affected: the cabinet in SERVICE (technician key
on) with no round interrupted, or IDLE with zero credits and no round starting. Every demo request
checks that again; when real money or a real round has appeared meanwhile, the demo ends. Leaving
demo mode leaves the terminal exactly as it was found (``tests/cabinet/test_demo.py`` compares the
meters, the credits and the ledger's rows; only the service events are added).

The service API (:mod:`firmware.cabinet.service`) decides who may use it (technician only) and
logs every request; this module only plays.
"""

from __future__ import annotations

from typing import Any

from firmware.cabinet.states import CabinetState
from firmware.cards.source import RngShoe
from firmware.errors import EgmError
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel

S = CabinetState

#: Demo credits when the configuration says nothing (``[service] demo_credits``).
DEFAULT_DEMO_CREDITS = 10_000
#: The most rounds one ``demo play`` request plays (the terminal's thread is busy meanwhile).
MAX_ROUNDS_PER_PLAY = 1000


class DemoError(EgmError):
    """A demo request that cannot be done now (the message says why)."""


class DemoMode:
    """Demo rounds on ``terminal`` (a :class:`~firmware.cabinet.terminal.Terminal`)."""

    def __init__(self, terminal: Any, *, credits: int = DEFAULT_DEMO_CREDITS) -> None:
        if isinstance(credits, bool) or not isinstance(credits, int) or credits <= 0:
            raise DemoError(f"demo credits are a positive whole number, not {credits!r}")
        self.terminal = terminal
        self.start_credits = credits
        self.active = False
        self.credits = 0
        self.rounds = 0
        self.game: str | None = None
        self.last_round: dict[str, Any] | None = None

    # --- when ----------------------------------------------------------------------------------
    def blocked(self) -> str | None:
        """Why demo mode may not run now, or None: SERVICE with no round interrupted, or IDLE with
        zero credits and no round starting or open."""
        t = self.terminal
        cabinet = t.cabinet
        if cabinet.round_in_progress or t.kernel is not None or t.ledger.open_round is not None:
            return "a round is in progress"
        if t.starting:
            return "a round is starting"
        if cabinet.state is S.SERVICE:
            return None
        if cabinet.state is S.IDLE:
            if t.ledger.credits_cents:
                return f"the credit meter holds {t.ledger.credits} credits (demo mode needs it at zero)"
            return None
        return f"the cabinet is {cabinet.state.name} (demo mode needs SERVICE, or IDLE with no credits)"

    # --- requests ------------------------------------------------------------------------------
    def start(self, credits: int | None = None) -> dict[str, Any]:
        """Enter demo mode with ``credits`` demo credits (default: the configured amount)."""
        if self.active:
            raise DemoError("demo mode is already on (demo stop ends it)")
        why = self.blocked()
        if why is not None:
            raise DemoError(f"demo mode cannot start: {why}")
        amount = self.start_credits if credits is None else credits
        if isinstance(amount, bool) or not isinstance(amount, int) or not 0 < amount <= 10_000_000:
            raise DemoError(f"demo credits are 1..10000000, not {amount!r}")
        self.active = True
        self.credits = amount
        self.rounds = 0
        self.game = self.terminal.game_id
        self.last_round = None
        return self.status()

    def play(self, rounds: int = 1) -> dict[str, Any]:
        """Play ``rounds`` demo rounds of the terminal's current game at its current bet."""
        if not self.active:
            raise DemoError("demo mode is off (demo start turns it on)")
        if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= MAX_ROUNDS_PER_PLAY:
            raise DemoError(f"a demo plays 1..{MAX_ROUNDS_PER_PLAY} rounds at a time, not {rounds!r}")
        why = self.blocked()
        if why is not None:
            raise DemoError(f"demo mode cannot play: {why}")
        t = self.terminal
        game_id = t.game_id
        game = get_game(game_id)
        options = make_options(game_id, t.cfg.games.options.get(game_id, {}))
        kernel = RoundKernel(game, options, limits=t.limits)       # no journal: NullJournal
        source = RngShoe(t.rng, game.shoe(options))
        wagers = game.automatic_wagers(options, t.seats, t.bet_unit)
        stake = sum(sum(b.values()) for b in wagers.values()) + game.reserved_stake(options, wagers)
        played: list[dict[str, Any]] = []
        for _ in range(rounds):
            if stake > self.credits:
                if not played:
                    raise DemoError(f"not enough demo credits: a round needs {stake}, the demo holds "
                                    f"{self.credits} (demo stop, then demo start)")
                break
            dice = game.roll_dice(t.rng) if game.dice else None
            before = self.credits
            settlement = kernel.play(wagers, source, credits=self.credits, dice=dice)
            self.credits = before + settlement.players_net
            record = kernel.record()
            record.pop("round_id", None)           # a demo round has no ledger id
            self.last_round = {"game": game_id, "net": settlement.players_net, "credits_before": before,
                               "credits_after": self.credits, "cards_dealt": record["cards_dealt"],
                               "wagers": {str(s): dict(b) for s, b in wagers.items()}}
            self.rounds += 1
            self.game = game_id
            played.append(record)
        return {**self.status(), "played": len(played), "records": played}

    def stop(self) -> dict[str, Any]:
        """Leave demo mode: the demo credits are dropped; nothing else was ever changed."""
        if not self.active:
            raise DemoError("demo mode is off")
        summary = {"demo": False, "rounds": self.rounds, "credits_left": self.credits}
        self.active = False
        self.credits = 0
        self.last_round = None
        return summary

    def status(self) -> dict[str, Any]:
        """What the screens (and ``terminal.status()["demo"]``) show: ``demo`` is True while on."""
        return {"demo": self.active, "credits": self.credits if self.active else 0,
                "rounds": self.rounds if self.active else 0, "game": self.game if self.active else None,
                "last_round": self.last_round}
