"""The cabinet state machine as data: its states, its triggers and one table of transitions.

This table is the machine: :class:`firmware.cabinet.machine.Cabinet` builds its ``transitions``
machine from :data:`TRANSITIONS` and nothing else, and ``egm diagram cabinet`` draws the same rows
(:func:`diagram_transitions`). ``docs/cabinet.md`` explains the rules in prose.

Reading a row ``(trigger, sources, dest, guard)``:

* ``dest`` None is an *internal* transition: the trigger is accepted and recorded (a pending request,
  one more tilt condition) but the state does not change;
* rows of one trigger from one state are tried in table order and the first whose guard holds is
  taken; the last row of each group has no guard, except the ``resume`` groups, whose guards cover
  every state TILT and SERVICE can return to;
* a (trigger, state) pair with no row is refused (:class:`~firmware.cabinet.errors.CabinetError`).
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class CabinetState(enum.Enum):
    POWER_UP = "power_up"      #: power applied; nothing checked yet
    SELF_TEST = "self_test"    #: signature, critical memory, RNG health, devices, doors while off
    IDLE = "idle"              #: attract: money accepted, a round may start
    PLAYING = "playing"        #: a round is in progress (the round kernel's own machine runs it)
    CASHOUT = "cashout"        #: paying the credit meter out (ticket, else handpay)
    HANDPAY = "handpay"        #: locked up until an attendant keys the handpay off
    TILT = "tilt"              #: one or more tilt conditions are active; everything stops
    SERVICE = "service"        #: the technician's key is on (service menu, diagnostics)
    DISABLED = "disabled"      #: the host disabled play


S = CabinetState

#: The states a tilt (or the technician's key, through TILT) interrupts and later returns to.
INTERRUPTIBLE: tuple[CabinetState, ...] = (
    S.POWER_UP, S.SELF_TEST, S.IDLE, S.PLAYING, S.CASHOUT, S.HANDPAY, S.DISABLED,
)
#: The states that sit on top of an interrupted one (``Cabinet.interrupted_state``).
OVERLAYS: tuple[CabinetState, ...] = (S.TILT, S.SERVICE)


class TiltSource(enum.Enum):
    """What raised a tilt condition. A condition is one (source, name) pair, e.g. (DOOR, "main")."""

    DOOR = "door"                                #: a door is open: name is the door (main, cash_box, logic)
    DEVICE_FAULT = "device_fault"                #: a device reports a fault (jam, stacker full...): name is the device
    DEVICE_DISCONNECTED = "device_disconnected"  #: a device went away (unplugged, no answer): name is the device
    CRITICAL_MEMORY = "critical_memory"          #: critical memory cannot be trusted or written
    RNG = "rng"                                  #: the RNG failed a health test (entropy, DRBG)
    SELF_TEST = "self_test"                      #: a power-up self-test check failed: name is the check


#: The power-up self-test's checks, in the order they run; a failed one is a SELF_TEST tilt condition.
SELF_TEST_CHECKS: tuple[str, ...] = (
    "software_signature",   #: the installed software's signature verifies
    "critical_memory",      #: critical memory's integrity checks pass
    "rng_health",           #: the DRBG known-answer test and the entropy health tests pass
    "devices",              #: every configured device is present and answers
    "doors_while_off",      #: no door was opened while the power was off
)


class HandpayReason(enum.Enum):
    LIMIT = "limit"         #: the amount is at or above the handpay limit
    PRINTER = "printer"     #: the printer cannot print the ticket


#: The guards the table names, and what each means (the machine binds each to a predicate).
GUARDS: dict[str, str] = {
    "cashout_pending": "the player asked to cash out during the round",
    "disable_pending": "the host disabled play while the cabinet could not stop at once",
    "tilts_remain": "another tilt condition stays active after this one clears",
    "tilts_active": "a tilt condition is active",
    "resume": "the destination is the state TILT or SERVICE interrupted",
}


class Row(NamedTuple):
    trigger: str
    sources: tuple[CabinetState, ...]
    dest: CabinetState | None           #: None: internal (accepted, state unchanged)
    guard: str | None = None


_ALL = tuple(CabinetState)

#: The whole machine. Nothing else may happen (auto_transitions=False).
TRANSITIONS: tuple[Row, ...] = (
    # power-up
    Row("begin_self_test", (S.POWER_UP,), S.SELF_TEST),
    Row("self_test_passed", (S.SELF_TEST,), S.DISABLED, "disable_pending"),
    Row("self_test_passed", (S.SELF_TEST,), S.IDLE),
    Row("self_test_failed", (S.SELF_TEST,), S.TILT),
    # a tilt raised during the self-test (a device that did not open) holds the cabinet: the
    # self-test still ends, and it decides where the cabinet goes once the tilts clear
    Row("self_test_passed", (S.TILT,), None),                # resume IDLE (DISABLED) instead of SELF_TEST
    Row("self_test_failed", (S.TILT,), None),                # more conditions; resume stays SELF_TEST
    # play
    Row("start_round", (S.IDLE,), S.PLAYING),
    Row("complete_round", (S.PLAYING,), S.CASHOUT, "cashout_pending"),
    Row("complete_round", (S.PLAYING,), S.DISABLED, "disable_pending"),
    Row("complete_round", (S.PLAYING,), S.IDLE),
    # money out
    Row("cashout", (S.IDLE, S.DISABLED), S.CASHOUT),
    Row("cashout", (S.PLAYING,), None),                      # pending until the round completes
    Row("ticket_printed", (S.CASHOUT,), S.DISABLED, "disable_pending"),
    Row("ticket_printed", (S.CASHOUT,), S.IDLE),
    Row("cashout_empty", (S.CASHOUT,), S.DISABLED, "disable_pending"),   # nothing left to pay
    Row("cashout_empty", (S.CASHOUT,), S.IDLE),
    Row("handpay", (S.CASHOUT,), S.HANDPAY),
    Row("retry_ticket", (S.HANDPAY,), S.CASHOUT),    # a printer handpay only: the printer is fixed
    Row("handpay_key_off", (S.HANDPAY,), S.DISABLED, "disable_pending"),
    Row("handpay_key_off", (S.HANDPAY,), S.IDLE),
    # tilts
    Row("tilt", INTERRUPTIBLE, S.TILT),
    Row("tilt", OVERLAYS, None),                             # one more condition
    Row("clear_tilt", (S.TILT,), None, "tilts_remain"),
    *(Row("clear_tilt", (S.TILT,), state, "resume") for state in INTERRUPTIBLE),
    Row("clear_tilt", (S.SERVICE,), None),
    # the technician's key
    Row("service_key_on", (S.IDLE, S.DISABLED, S.TILT), S.SERVICE),
    Row("service_key_off", (S.SERVICE,), S.TILT, "tilts_active"),
    *(Row("service_key_off", (S.SERVICE,), state, "resume") for state in INTERRUPTIBLE),
    # the host
    Row("disable", (S.IDLE,), S.DISABLED),
    Row("disable", tuple(s for s in _ALL if s is not S.IDLE), None),   # pending, or already disabled
    Row("enable", (S.DISABLED,), S.IDLE),
    Row("enable", tuple(s for s in _ALL if s is not S.DISABLED), None),  # cancels a pending disable
)

#: Every trigger, in table order.
TRIGGERS: tuple[str, ...] = tuple(dict.fromkeys(row.trigger for row in TRANSITIONS))


def diagram_transitions() -> list[tuple[str, tuple[CabinetState, ...], CabinetState]]:
    """The table as ``firmware.kernel.diagram`` draws it: guards in brackets, internal rows as loops."""
    drawn: list[tuple[str, tuple[CabinetState, ...], CabinetState]] = []
    for row in TRANSITIONS:
        label = row.trigger if row.guard is None else f"{row.trigger} [{row.guard}]"
        if row.dest is None:
            drawn.extend((f"{label} (internal)", (src,), src) for src in row.sources)
        else:
            drawn.append((label, row.sources, row.dest))
    return drawn
