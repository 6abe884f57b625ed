"""The cabinet state machine (GLI-11 behaviour) with its tilt and lockup bookkeeping; no I/O.

:class:`Cabinet` runs a ``transitions`` machine built from :data:`firmware.cabinet.states.TRANSITIONS`
and nothing else. Around it, the cabinet keeps what the table's guards read:

* the active tilt conditions, each a :class:`Tilt` (source, name, reason, time from the injected
  clock); several can be active at once and TILT is left only when the last one clears;
* the state TILT or SERVICE interrupted (:attr:`Cabinet.interrupted_state`), where the cabinet goes
  back to; a round interrupted in PLAYING resumes in PLAYING ("tilts never lose a round");
* requests that wait for a safe point: a host disable while a round, a cashout, a handpay or the
  power-up is in progress, and a player's cashout during a round;
* the handpay waiting for the attendant's key (amount and reason).

Every accepted trigger reports to the injected ``on_event(kind, detail)``, *before* its change takes
effect (write-ahead, like the round journal): first what it did to the bookkeeping
(``tilt_raised``, ``tilt_cleared``, ``request_pending``, ``request_cancelled``, ``resume_changed``),
then ``transition`` when the state changes. A refused trigger raises
:class:`~firmware.cabinet.errors.CabinetError`, emits nothing and changes nothing; so does a trigger
whose ``on_event`` raises (the exception propagates; events already delivered stay delivered).

Devices, the ledger, the round kernel and the host link drive a :class:`Cabinet` from outside (the
terminal, :mod:`firmware.cabinet.terminal`, feeds it their events); it never calls them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from transitions import EventData, MachineError, Transition

from firmware.cabinet.errors import CabinetError
from firmware.cabinet.states import (
    OVERLAYS,
    SELF_TEST_CHECKS,
    TRANSITIONS,
    TRIGGERS,
    CabinetState,
    HandpayReason,
    TiltSource,
)
from firmware.kernel.machine import EnumMachine

S = CabinetState

#: ``on_event(kind, detail)``: where every transition and every tilt raised or cleared goes.
EventSink = Callable[[str, dict[str, Any]], None]

#: The event kinds :class:`Cabinet` emits.
EVENT_KINDS: tuple[str, ...] = (
    "transition", "tilt_raised", "tilt_cleared", "request_pending", "request_cancelled", "resume_changed",
)


class _Model:
    """What the ``transitions`` machine drives: only ``state`` (and the helpers ``transitions`` adds),
    so that :class:`Cabinet`'s own methods are the whole public interface."""

    state: CabinetState


@dataclass(frozen=True)
class Tilt:
    """One active tilt condition."""

    source: TiltSource
    name: str
    reason: str
    since: float       #: when it was raised (the cabinet's clock)

    @property
    def key(self) -> str:
        """``source:name``, e.g. ``door:main``: how events and queries name the condition."""
        return f"{self.source.value}:{self.name}"


#: Which triggers each state accepts (from the table; for error messages and the UI).
_ALLOWED: dict[CabinetState, tuple[str, ...]] = {
    state: tuple(t for t in TRIGGERS if any(r.trigger == t and state in r.sources for r in TRANSITIONS))
    for state in CabinetState
}


def _positive_amount(what: str, amount: object) -> int:
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise CabinetError(f"{what}: the amount must be a positive whole number of credits, not {amount!r}")
    return amount


def _text(what: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CabinetError(f"{what} must be a non-empty string, not {value!r}")
    return value


def _tilt_source(value: object) -> TiltSource:
    try:
        return TiltSource(value)
    except ValueError:
        known = ", ".join(s.value for s in TiltSource)
        raise CabinetError(f"unknown tilt source {value!r}; sources are {known}") from None


def _row(ev: EventData) -> Transition:
    """The table row ``transitions`` chose: set before it asks a guard or calls a callback."""
    assert ev.transition is not None
    return ev.transition


class Cabinet:
    """The cabinet's state, its tilts and its pending requests, driven by triggers.

    ``handpay_limit`` (credits): a cashout at or above it is paid by hand. ``clock`` stamps tilt
    conditions (default: ``time.time``). ``on_event`` receives every event (default: dropped).
    """

    def __init__(self, *, handpay_limit: int, on_event: EventSink | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.handpay_limit = _positive_amount("handpay_limit", handpay_limit)
        self._on_event: EventSink = on_event if on_event is not None else (lambda kind, detail: None)
        self._clock = clock
        self._tilts: dict[tuple[TiltSource, str], Tilt] = {}
        self._resume: CabinetState | None = None
        self._disable_pending = False
        self._cashout_pending = False
        self._handpay: tuple[int, HandpayReason] | None = None
        self._disabled_by: set[str] = set()     #: who disabled play (the FIG. 16 host, SAS...)
        self._busy = False
        self._outbox: list[tuple[str, dict[str, Any]]] = []
        guards: dict[str, Callable[[EventData], bool]] = {
            "cashout_pending": lambda ev: self._cashout_pending,
            "disable_pending": lambda ev: self._disable_pending,
            "tilts_remain": lambda ev: len(self._tilts) > 1,
            "tilts_active": lambda ev: bool(self._tilts),
            "resume": lambda ev: self._resume is not None and _row(ev).dest == self._resume.name,
        }
        self._handlers: dict[str, Callable[..., dict[str, Any]]] = {
            trigger: getattr(self, f"_on_{trigger}") for trigger in TRIGGERS
        }
        self._model = _Model()
        self._machine = EnumMachine(
            model=self._model,
            states=CabinetState,
            transitions=[
                {"trigger": row.trigger, "source": list(row.sources), "dest": row.dest,
                 "conditions": [guards[row.guard]] if row.guard else []}
                for row in TRANSITIONS
            ],
            initial=S.POWER_UP,
            auto_transitions=False,
            send_event=True,
            before_state_change=self._before,
        )

    # --- queries ---------------------------------------------------------------------------------
    @property
    def state(self) -> CabinetState:
        return self._model.state

    @property
    def interrupted_state(self) -> CabinetState | None:
        """In TILT or SERVICE, the state the cabinet goes back to; otherwise None."""
        return self._resume

    @property
    def active_tilts(self) -> tuple[Tilt, ...]:
        """The active tilt conditions, oldest first."""
        return tuple(self._tilts.values())

    def has_tilt(self, source: TiltSource | str, name: str) -> bool:
        return (_tilt_source(source), name) in self._tilts

    @property
    def can_accept_money(self) -> bool:
        """Bills, tickets and transfers in: only in IDLE or PLAYING, with no cashout or disable waiting."""
        return self.state in (S.IDLE, S.PLAYING) and not (self._cashout_pending or self._disable_pending)

    @property
    def can_start_round(self) -> bool:
        """IDLE only: never while tilted, in service, disabled, cashing out or in a handpay."""
        return self.state is S.IDLE

    @property
    def round_in_progress(self) -> bool:
        """A round is open: PLAYING, or PLAYING interrupted by a tilt or the technician."""
        return S.PLAYING in (self.state, self._resume)

    @property
    def can_continue_round(self) -> bool:
        """The round kernel may deal, accept decisions and settle (not while interrupted)."""
        return self.state is S.PLAYING

    @property
    def disable_pending(self) -> bool:
        return self._disable_pending

    @property
    def disabled_by(self) -> frozenset[str]:
        """Who has play disabled now (``host``, ``sas``); play comes back when all have lifted it."""
        return frozenset(self._disabled_by)

    @property
    def cashout_pending(self) -> bool:
        return self._cashout_pending

    @property
    def handpay_pending(self) -> tuple[int, HandpayReason] | None:
        """(amount, reason) of the handpay waiting for the attendant's key, else None."""
        return self._handpay

    def requires_handpay(self, amount: int) -> bool:
        """A cashout of ``amount`` credits must be paid by hand (at or above the handpay limit)."""
        return _positive_amount("cashout", amount) >= self.handpay_limit

    def allowed_triggers(self) -> tuple[str, ...]:
        """The triggers the table accepts in the current state (a guard may still decide the row)."""
        return _ALLOWED[self.state]

    # --- triggers: power-up ----------------------------------------------------------------------
    def begin_self_test(self) -> None:
        self._fire("begin_self_test")

    def self_test_passed(self) -> None:
        """The power-up self-test passed: IDLE (DISABLED if the host disabled play meanwhile); in
        TILT raised during the self-test (a device that did not open), the cabinet stays in TILT and
        goes to IDLE when the last tilt clears."""
        self._fire("self_test_passed")

    def self_test_failed(self, failures: Mapping[str, str]) -> None:
        """Each failed check (a name of ``SELF_TEST_CHECKS``) with its reason becomes a tilt condition
        (also in TILT raised during the self-test; the self-test runs again once every tilt clears)."""
        self._fire("self_test_failed", failures=failures)

    # --- triggers: play and money out ------------------------------------------------------------
    def start_round(self) -> None:
        self._fire("start_round")

    def complete_round(self) -> None:
        self._fire("complete_round")

    def cashout(self, *, restored: bool = False) -> None:
        """The player's cashout: at once from IDLE (or DISABLED), pending until the round completes
        from PLAYING. ``restored``: not the player's, the way back into a handpay lockup a power
        cut interrupted (the transition says so)."""
        self._fire("cashout", restored=restored)

    def ticket_printed(self, amount: int) -> None:
        """The printer confirmed the cashout ticket; refused at or above the handpay limit."""
        self._fire("ticket_printed", amount=amount)

    def cashout_empty(self) -> None:
        """The cashout found nothing to pay (a pending cashout after a round that lost it all)."""
        self._fire("cashout_empty")

    def retry_ticket(self) -> None:
        """From a printer handpay: the printer is ready again; print the ticket instead."""
        self._fire("retry_ticket")

    def handpay(self, amount: int, reason: HandpayReason | str) -> None:
        """Lock up for an attendant: ``limit`` (amount at or above the limit) or ``printer`` (cannot print)."""
        self._fire("handpay", amount=amount, reason=reason)

    def handpay_key_off(self) -> None:
        """The attendant's key: the handpay is paid; its amount goes into the event."""
        self._fire("handpay_key_off")

    # --- triggers: tilts, service, host ----------------------------------------------------------
    def tilt(self, source: TiltSource | str, name: str, reason: str) -> None:
        """Raise a tilt condition. Raising one that is already active changes nothing (no event)."""
        self._fire("tilt", tilt_source=source, name=name, reason=reason)

    def clear_tilt(self, source: TiltSource | str, name: str) -> None:
        """Clear an active tilt condition; the last one to clear returns to the interrupted state."""
        self._fire("clear_tilt", tilt_source=source, name=name)

    def service_key_on(self) -> None:
        self._fire("service_key_on")

    def service_key_off(self) -> None:
        self._fire("service_key_off")

    def disable(self, by: str = "host") -> None:
        """``by`` (the FIG. 16 host, SAS...) disables play: at once in IDLE, else as soon as the
        cabinet would be IDLE."""
        self._fire("disable")
        self._disabled_by.add(by)

    def enable(self, by: str = "host") -> None:
        """``by`` enables play again (or cancels a disable still pending); while another still
        has play disabled, nothing else changes (each lifts only its own disable)."""
        remaining = self._disabled_by - {by}
        if not remaining:
            self._fire("enable")
        self._disabled_by = remaining

    # --- the engine ------------------------------------------------------------------------------
    def _fire(self, trigger: str, **kwargs: object) -> None:
        if self._busy:
            raise CabinetError(f"{trigger}: a trigger fired from inside on_event (fire it afterwards)")
        state = self.state
        self._busy = True
        try:
            done = self._machine.events[trigger].trigger(self._model, **kwargs)
        except MachineError as exc:
            allowed = ", ".join(_ALLOWED[state])
            raise CabinetError(f"{trigger} is not allowed in {state.name} (allowed there: {allowed})") from exc
        finally:
            self._busy = False
            self._outbox = []
        if not done:  # a hole in the table: a guarded group with no row for the case
            raise CabinetError(f"{trigger}: no transition of the table applies in {state.name}")

    def _emit(self, kind: str, **detail: Any) -> None:
        self._outbox.append((kind, detail))

    def _before(self, ev: EventData) -> None:
        """``before_state_change``: the row is chosen, the state not changed yet. Update the
        bookkeeping, deliver the events, and undo the bookkeeping if anything raises."""
        trigger = ev.event.name
        row = _row(ev)
        source = CabinetState[row.source]
        dest = None if row.dest is None else CabinetState[row.dest]
        saved = (dict(self._tilts), self._resume, self._disable_pending, self._cashout_pending, self._handpay)
        self._outbox = []
        try:
            context = self._handlers[trigger](source, dest, **ev.kwargs)
            if dest is not None:
                if dest in OVERLAYS:
                    if source not in OVERLAYS:
                        self._resume = source
                else:
                    self._resume = None
                if dest is S.DISABLED:
                    self._disable_pending = False
                self._emit("transition", trigger=trigger, source=source.name, dest=dest.name, **context)
            for kind, detail in self._outbox:
                self._on_event(kind, detail)
        except BaseException:
            self._tilts, self._resume, self._disable_pending, self._cashout_pending, self._handpay = saved
            raise
        finally:
            self._outbox = []

    # --- one handler per trigger: validate, update the bookkeeping, return the transition's detail
    def _on_begin_self_test(self, state: CabinetState, dest: CabinetState | None) -> dict[str, Any]:
        return {}

    def _on_self_test_passed(self, state: CabinetState, dest: CabinetState | None) -> dict[str, Any]:
        if dest is None:                               # TILT over the self-test: IDLE once the tilts clear
            self._require_self_test("self_test_passed")
            after = S.DISABLED if self._disable_pending else S.IDLE
            self._disable_pending = False
            self._resume = after
            self._emit("resume_changed", trigger="self_test_passed", state=state.name,
                       **{"from": S.SELF_TEST.name, "to": after.name})
        return {}

    def _require_self_test(self, trigger: str) -> None:
        """In TILT, a self-test outcome is accepted only while the tilt holds the self-test."""
        if self._resume is not S.SELF_TEST:
            below = self._resume.name if self._resume else "nothing"
            raise CabinetError(f"{trigger}: no self-test is running (TILT over {below})")

    def _on_self_test_failed(self, state: CabinetState, dest: CabinetState | None, *,
                             failures: Mapping[str, str]) -> dict[str, Any]:
        if dest is None:                               # TILT over the self-test: one more condition each
            self._require_self_test("self_test_failed")
        if not isinstance(failures, Mapping) or not failures:
            raise CabinetError("self_test_failed needs the failed checks, each with its reason")
        for check, reason in failures.items():
            if check not in SELF_TEST_CHECKS:
                raise CabinetError(f"unknown self-test check {check!r}; checks are {', '.join(SELF_TEST_CHECKS)}")
            self._raise(TiltSource.SELF_TEST, check, _text(f"the reason of {check}", reason), state)
        return {"failed": list(failures)}

    def _on_start_round(self, state: CabinetState, dest: CabinetState | None) -> dict[str, Any]:
        return {}

    def _on_complete_round(self, state: CabinetState, dest: CabinetState | None) -> dict[str, Any]:
        if dest is S.CASHOUT:
            self._cashout_pending = False
        return {}

    def _on_cashout(self, state: CabinetState, dest: CabinetState | None, *,
                    restored: bool = False) -> dict[str, Any]:
        if dest is None:                               # PLAYING: at the end of the round
            if not self._cashout_pending:
                self._cashout_pending = True
                self._emit("request_pending", request="cashout", state=state.name)
        elif state is S.DISABLED:                     # the disable holds once the player is paid
            self._disable_pending = True
        return {"restored": True} if restored else {}

    def _on_ticket_printed(self, state: CabinetState, dest: CabinetState | None, *,
                           amount: int) -> dict[str, Any]:
        if self.requires_handpay(amount):
            raise CabinetError(f"a cashout of {amount} is at or above the handpay limit "
                               f"({self.handpay_limit}): it must be a handpay, not a ticket")
        return {"amount": amount}

    def _on_handpay(self, state: CabinetState, dest: CabinetState | None, *,
                    amount: int, reason: HandpayReason | str) -> dict[str, Any]:
        amount = _positive_amount("handpay", amount)
        try:
            why = HandpayReason(reason)
        except ValueError:
            known = ", ".join(r.value for r in HandpayReason)
            raise CabinetError(f"unknown handpay reason {reason!r}; reasons are {known}") from None
        if why is HandpayReason.LIMIT and amount < self.handpay_limit:
            raise CabinetError(f"a handpay for the limit needs at least {self.handpay_limit}, not {amount}")
        self._handpay = (amount, why)
        return {"amount": amount, "reason": why.value}

    def _on_cashout_empty(self, state: CabinetState, dest: CabinetState | None) -> dict[str, Any]:
        return {}

    def _on_retry_ticket(self, state: CabinetState, dest: CabinetState | None) -> dict[str, Any]:
        assert self._handpay is not None, "HANDPAY is entered only with an amount"
        amount, why = self._handpay
        if why is not HandpayReason.PRINTER:
            raise CabinetError(f"a {why.value} handpay is paid by the attendant; only a printer handpay "
                               "goes back to the printer")
        self._handpay = None
        return {"amount": amount}

    def _on_handpay_key_off(self, state: CabinetState, dest: CabinetState | None) -> dict[str, Any]:
        assert self._handpay is not None, "HANDPAY is entered only with an amount"
        amount, why = self._handpay
        self._handpay = None
        return {"amount": amount, "reason": why.value}

    def _on_tilt(self, state: CabinetState, dest: CabinetState | None, *,
                 tilt_source: TiltSource | str, name: str, reason: str) -> dict[str, Any]:
        tilt = self._raise(_tilt_source(tilt_source), _text("the tilt's name", name),
                           _text("the tilt's reason", reason), state)
        if tilt is None:
            return {}                                  # already active (internal row: no transition)
        return {"tilt": tilt.key, "reason": tilt.reason}

    def _on_clear_tilt(self, state: CabinetState, dest: CabinetState | None, *,
                       tilt_source: TiltSource | str, name: str) -> dict[str, Any]:
        key = (_tilt_source(tilt_source), name)
        tilt = self._tilts.pop(key, None)
        if tilt is None:
            active = ", ".join(t.key for t in self._tilts.values()) or "none"
            raise CabinetError(f"no tilt {key[0].value}:{name} is active (active: {active})")
        now = self._clock()
        self._emit("tilt_cleared", tilt=tilt.key, reason=tilt.reason, raised_at=tilt.since, time=now,
                   state=state.name, active=len(self._tilts))
        return {"tilt": tilt.key}

    def _on_service_key_on(self, state: CabinetState, dest: CabinetState | None) -> dict[str, Any]:
        return {}

    def _on_service_key_off(self, state: CabinetState, dest: CabinetState | None) -> dict[str, Any]:
        return {}

    def _on_disable(self, state: CabinetState, dest: CabinetState | None) -> dict[str, Any]:
        if dest is not None:                           # IDLE -> DISABLED
            return {}
        below = self._resume if state in OVERLAYS else state
        if below is S.DISABLED or self._disable_pending:
            return {}                                  # already disabled, or already waiting
        if below is S.IDLE:                            # under TILT/SERVICE: IDLE is a safe point
            self._resume = S.DISABLED
            self._emit("resume_changed", trigger="disable", state=state.name, **{"from": "IDLE", "to": "DISABLED"})
        else:
            self._disable_pending = True
            self._emit("request_pending", request="disable", state=state.name)
        return {}

    def _on_enable(self, state: CabinetState, dest: CabinetState | None) -> dict[str, Any]:
        if dest is not None:                           # DISABLED -> IDLE
            return {}
        if self._disable_pending:
            self._disable_pending = False
            self._emit("request_cancelled", request="disable", state=state.name)
        elif state in OVERLAYS and self._resume is S.DISABLED:
            self._resume = S.IDLE
            self._emit("resume_changed", trigger="enable", state=state.name, **{"from": "DISABLED", "to": "IDLE"})
        return {}

    # --- tilt bookkeeping ------------------------------------------------------------------------
    def _raise(self, source: TiltSource, name: str, reason: str, state: CabinetState) -> Tilt | None:
        key = (source, name)
        if key in self._tilts:
            return None
        tilt = Tilt(source, name, reason, self._clock())
        self._tilts[key] = tilt
        self._emit("tilt_raised", tilt=tilt.key, reason=reason, time=tilt.since, state=state.name,
                   active=len(self._tilts))
        return tilt

