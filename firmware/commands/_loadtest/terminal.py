"""One simulated terminal of the floor: the terminal's own link code with a made-up player.

What is real: its certificate and keys (:class:`~egmproto.identity.TerminalIdentity`), its critical
memory (:class:`~firmware.ledger.ledger.Ledger`, on tmpfs), the round kernel journaling into it, the
voucher book, :class:`~firmware.hostlink.link.HostLink` with its outbox (numbering, window,
resends, signed and encrypted envelopes) and its own MQTT connection. What is made up: the player
and the cabinet (a switch the host's ``disable``/``enable`` turn), and the RNG (a seeded
``random.Random``: the cards are not what is under test).

The terminal is stepped by its process's threads (:meth:`SimTerminal.step`); it makes reports
through its ledger at ``rate`` reports per second (counted by the outbox's numbering, so hellos,
meter snapshots and command confirmations count too).
"""

from __future__ import annotations

import logging
import random
import threading
from collections import Counter, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from egmproto.identity import TerminalIdentity
from firmware.cards.source import RngShoe
from firmware.cashless.errors import VoucherError
from firmware.cashless.vouchers import VoucherBook
from firmware.errors import EgmError
from firmware.games.registry import get_game, make_options
from firmware.hostlink.link import COMMAND_EVENT, HostLink
from firmware.kernel.round import RoundKernel
from firmware.ledger.ledger import Ledger

log = logging.getLogger("egm.loadtest.terminal")

GAME = "baccarat-war"
BET_UNIT = 5
#: what the simulated player does next, and how often (weights)
ACTIONS = {"round": 60, "bill": 8, "door": 6, "meters": 8, "cashout": 8, "redeem": 7, "tilt": 3}
REDEEM_TIMEOUT_S = 10.0


class Cabinet:
    """The cabinet as the host's commands see it: on or off."""

    def __init__(self) -> None:
        self.disabled = False

    def disable(self) -> None:
        self.disabled = True

    def enable(self) -> None:
        self.disabled = False


class _Seeded:
    """The RNG shoe's random source: seeded, so a run can be repeated."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def randbelow(self, n: int) -> int:
        return self._rng.randrange(n)


class _Answered:
    """The host's answer, already received, as the voucher book asks for it."""

    def __init__(self, amount: int) -> None:
        self.amount = amount

    def validate(self, validation: str) -> int | None:
        return self.amount


class VoucherPool:
    """Vouchers printed on this process's terminals, waiting for a player to take one elsewhere;
    and some already redeemed, which a cheat tries again (the host must refuse them)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._printed: deque[tuple[str, str]] = deque()
        self._spent: deque[str] = deque(maxlen=200)

    def put(self, issuer: str, validation: str) -> None:
        with self._lock:
            self._printed.append((issuer, validation))

    def take(self, taker: str, rng: random.Random) -> tuple[str, bool] | None:
        """A voucher for ``taker``: (validation, already redeemed?), never its own."""
        with self._lock:
            if self._spent and rng.random() < 0.1:
                return self._spent[int(rng.random() * len(self._spent))], True
            for _ in range(len(self._printed)):
                issuer, validation = self._printed.popleft()
                if issuer != taker:
                    return validation, False
                self._printed.append((issuer, validation))
        return None

    def spent(self, validation: str) -> None:
        with self._lock:
            self._spent.append(validation)


class SimTerminal:
    """A terminal: :meth:`start` connects it, :meth:`step` plays and polls its link."""

    def __init__(self, terminal_id: str, state_dir: Path, pki: Path, client_factory: Callable[..., Any], *,
                 rate: float, seed: int, pool: VoucherPool, clock: Callable[[], float],
                 meter_interval_s: float = 60.0, ack_timeout_s: float = 5.0) -> None:
        self.terminal_id = terminal_id
        self.rate = rate
        self.rng = random.Random(seed)
        self.pool = pool
        self._clock = clock
        self.ledger = Ledger.open(state_dir / terminal_id)
        self.cabinet = Cabinet()
        self.book = VoucherBook(self.ledger, terminal_id=terminal_id)
        game = get_game(GAME)
        options = make_options(game.id)
        self.kernel = RoundKernel(game, options, journal=self.ledger)
        self.source = RngShoe(_Seeded(self.rng), game.shoe(options))
        self.wagers = game.automatic_wagers(options, 1, BET_UNIT)
        self.stake = sum(self.wagers[1].values())
        self.link = HostLink(self.ledger, TerminalIdentity.load(pki, terminal_id), client_factory, terminal=self,
                             meter_interval_s=meter_interval_s, ack_timeout_s=ack_timeout_s)
        self.done: Counter[str] = Counter()        #: actions taken, by name (and their outcomes)
        self._weights = (list(ACTIONS), list(ACTIONS.values()))
        self._base = 0                             #: the report number when generation started
        self._start = 0.0
        self._phase = 0.0
        self.generating = False
        self._asked: tuple[str, bool, float] | None = None   #: (validation, spent?, asked at)
        self._open_tilt: str | None = None
        #: called (on the network thread) when the link has something for :meth:`step`
        self.on_wake: Callable[[SimTerminal], None] = lambda _t: None

    # --- the link's terminal -----------------------------------------------------------------------
    def wake(self) -> None:
        """The link's network thread got something (an ack, a command, an answer, a connection
        change): the thread that steps this terminal is told (``on_wake``)."""
        self.on_wake(self)

    # --- life --------------------------------------------------------------------------------------
    def start(self) -> None:
        self.link.start()

    def begin(self) -> None:
        """Start making reports, at ``rate`` per second from now."""
        self._base = self.link.outbox.last_number
        self._start = self._clock()
        self._phase = self.rng.random()            # terminals out of step, as on a floor
        self.generating = True

    @property
    def waiting(self) -> bool:
        """A redemption asked of the host is not answered yet."""
        return self._asked is not None

    @property
    def made(self) -> int:
        """Reports made since :meth:`begin`."""
        return self.link.outbox.last_number - self._base

    @property
    def next_due(self) -> float:
        """When :meth:`step` has something to play next (the clock's time; inf: nothing)."""
        if self._asked is not None:
            return self._asked[2] + REDEEM_TIMEOUT_S
        if not self.generating:
            return float("inf")
        return self._start + (self.made + 1 - self._phase) / self.rate

    def step(self) -> None:
        """Handle the link (acks, commands, answers), play what is due, and send it at once."""
        self.link.poll()
        now = self._clock()
        if self._asked is not None:
            self._answer(now)
        if not self.generating:
            return
        due = int(self.rate * (now - self._start) + self._phase)
        tries = 0
        while self.made < due and self._asked is None and tries < 4:
            tries += 1
            try:
                self._act(self.rng.choices(*self._weights)[0])
            except (EgmError, VoucherError) as exc:
                self.done["refused"] += 1
                log.debug("%s: %s", self.terminal_id, exc)
        if tries:
            self.link.poll()                       # sealed and sent now, not at the next step

    def stop(self, drain_s: float) -> None:
        self.link.stop(drain_s)
        self.ledger.close()

    # --- what the player does ----------------------------------------------------------------------
    def _act(self, action: str) -> None:
        if self.cabinet.disabled and action in ("round", "bill", "cashout", "redeem"):
            action = "meters"                      # a disabled cabinet plays nothing, takes no money
        getattr(self, f"_{action}")()
        self.done[action] += 1

    def _round(self) -> None:
        if self.ledger.credits < self.stake * 3:
            self.ledger.bill_in(self.rng.choice((2000, 5000, 10000)))
        self.kernel.play(self.wagers, self.source, credits=self.ledger.credits)

    def _bill(self) -> None:
        self.ledger.bill_in(self.rng.choice((500, 1000, 2000)))

    def _door(self) -> None:
        door = self.rng.choice(("main", "cash_box", "logic"))
        self.ledger.event("door_open", door=door)
        self.ledger.event("door_close", door=door)

    def _meters(self) -> None:
        self.ledger.meters_snapshot("periodic")

    def _tilt(self) -> None:
        if self._open_tilt is None:
            self._open_tilt = self.rng.choice(("printer:paper_low", "validator:jam", "door:main"))
            self.ledger.event("cabinet.tilt_raised", tilt=self._open_tilt, reason="simulated")
        else:
            self.ledger.event("cabinet.tilt_cleared", tilt=self._open_tilt)
            self._open_tilt = None

    def _cashout(self) -> None:
        cents = self.ledger.credits_cents
        if cents <= 0:
            self.ledger.bill_in(1000)
            cents = self.ledger.credits_cents
        issued = self.book.issue(cents)
        self.book.printed(issued.validation)
        self.pool.put(self.terminal_id, issued.validation)

    def _redeem(self) -> None:
        taken = self.pool.take(self.terminal_id, self.rng)
        if taken is None or not self.link.connected:
            self._meters()
            return
        self.link.ask_redemption(taken[0])
        self._asked = (taken[0], taken[1], self._clock())

    def _answer(self, now: float) -> None:
        """The host's answer to the redemption asked: stack the voucher, or give it back."""
        assert self._asked is not None
        validation, spent, asked_at = self._asked
        reply = self.link.redemption_answer(validation)
        if reply is None:
            if now - asked_at > REDEEM_TIMEOUT_S:
                self.link.abandon_redemption(validation)
                self.done["redeem_abandoned"] += 1
                self._asked = None
            return
        self._asked = None
        if not reply["approved"]:
            self.done["redeem_refused_spent" if spent else "redeem_refused"] += 1
            return
        if spent:
            self.done["redeemed_twice"] += 1       # the host approved a voucher already paid
        self.book.begin_redeem(validation, host=_Answered(reply["amount_cents"]))
        self.book.commit_redeem(validation)
        self.done["redeemed"] += 1
        self.pool.spent(validation)

    # --- what the check needs ----------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """What this terminal recorded, for the check against the host's database."""
        ledger = self.ledger
        last_meters = ledger.newest_of(("meters",), 1)
        meters = None
        if last_meters:
            body = ledger.log_record(last_meters[0])["body"]
            meters = {"meters": body["meters"], "credits": body["credits"]}
        commands = [{"cmd": e["cmd"], "type": e["type"]} for e in reversed(ledger.events(last=1_000_000))
                    if e.get("event") == COMMAND_EVENT]
        return {"terminal": self.terminal_id, "epoch": ledger.epoch, "last_report": self.link.outbox.last_number,
                "outstanding": len(self.link.outbox), "made": self.made, "meters": meters,
                "commands": commands, "actions": dict(self.done), "link": {
                    "sent": self.link.stats["sent"], "resent": self.link.stats["resent"],
                    "rejected": self.link.stats["rejected"],
                    "rejected_replay": self.link.stats["rejected_replay"], "commands_applied": self.link.commands_applied}}

