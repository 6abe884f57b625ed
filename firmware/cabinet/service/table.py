"""THE permission table: one row per service action with its name, the roles allowed, its kind, its
usage and summary, and the handler that does it (docs/service.md shows the same table). Nothing else
decides who may do what, and nothing keeps a second table in step with it.

A handler takes the :class:`~firmware.cabinet.service.api.ServiceApi` and the words after the
action's name, and returns (answer, the detail logged with it); a detail of None means the handler
logged the action itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from firmware.cabinet.service import attendant, device_tests, views
from firmware.cabinet.service.config_actions import config_set, config_show
from firmware.cabinet.service.demo_actions import demo_play, demo_start, demo_stop
from firmware.cabinet.service.package_actions import package_approve, package_reject, packages
from firmware.cabinet.service.pins import ROLES
from firmware.cabinet.service.ram_clear import ram_clear

if TYPE_CHECKING:
    from firmware.cabinet.service.api import ServiceApi

#: A service action's handler: (the API, the words after its name) -> (answer, detail to log or None).
Handler = Callable[["ServiceApi", list[str]], tuple[Any, str | None]]

ALL = frozenset(ROLES)
READERS = frozenset({"technician", "auditor", "regulator"})
TECH = frozenset({"technician"})
ATTENDANT = frozenset({"attendant"})


@dataclass(frozen=True, slots=True)
class Action:
    """One service function: who may use it, what kind it is, how it is typed, what does it."""

    name: str                  #: the words that name it (``config set``)
    roles: frozenset[str]      #: the roles allowed
    kind: str                  #: read | attendant | device | config (see :data:`KINDS`)
    usage: str                 #: the rest of the words
    summary: str
    handler: Handler           #: what does it, once the role and the cabinet state allow it


#: What each kind may do, and when (the cabinet state rule).
KINDS: dict[str, str] = {
    "read": "reads critical memory or the devices; any cabinet state",
    "attendant": "the attendant's duties; the terminal's own rules (a handpay needs HANDPAY)",
    "device": "drives a device; SERVICE, or IDLE with no credits",
    "config": "changes configuration, memory or the play mode; SERVICE, or IDLE with no credits, no round",
}

ACTIONS: tuple[Action, ...] = (
    Action("meters", READERS, "read", "", "every meter and the credit balance (egm meters)", views.meters),
    Action("recall", ALL, "read", "[N]", "the last N rounds, newest first (default 10)", views.recall),
    Action("events", ALL, "read", "[N]", "the last N events, newest first (default 50)", views.events),
    Action("bills", ALL, "read", "[N]", "the last N notes accepted (default 10)", views.bills),
    Action("tickets", ALL, "read", "[N]", "the last N vouchers and cashless transactions (default 35)",
           views.tickets),
    Action("software", READERS, "read", "", "the last software verification (the power-up self-test's)",
           views.software),
    Action("software hash", READERS, "read", "ALGORITHM [SEED_HEX]",
           "the lab's digest of the installed software now (sha1, sha256, hmac-sha1, hmac-sha256)",
           views.software_hash),
    Action("handpay", ATTENDANT, "attendant", "", "pay the waiting handpay by hand; the lockup ends",
           attendant.handpay),
    Action("call-cleared", ATTENDANT, "attendant", "", "the attendant answered the player's call",
           attendant.call_cleared),
    Action("diagnostics", TECH, "read", "", "each device's state and link counters", device_tests.diagnostics),
    Action("config show", TECH, "read", "[GAME]", "the game options in force (and stored changes)", config_show),
    Action("test note-return", TECH, "device", "",
           "bill validator: live status; a note held in escrow is returned (in SERVICE)",
           device_tests.note_return_test),
    Action("test ticket", TECH, "device", "[print]",
           "printer: live status and faults; `print` (SERVICE): a TEST TICKET - VOID worth nothing",
           device_tests.ticket_test),
    Action("test touch", TECH, "device", "", "the last touches, calibrated (touch the screen, then ask)",
           device_tests.touch_test),
    Action("test shoe", TECH, "device", "", "the card the shoe read last (draw one, then ask)",
           device_tests.shoe_test),
    Action("touch calibrate", TECH, "device", "begin/commit/cancel",
           "the touchscreen's calibration, from the service screens (three targets and a check touch); "
           "each step is allowed and logged here", device_tests.touch_calibrate),
    Action("test lamps", TECH, "device", "[on/off]", "every button lamp on (or off)", device_tests.lamps_test),
    Action("test tower", TECH, "device", "[TIER PATTERN, or off]",
           "a tower light tier (0 top): on, off, flash-slow or flash-fast (default 0 flash-fast); 'off': every tier off",
           device_tests.tower_test),
    Action("test meters", TECH, "device", "",
           "I/O board inputs (doors, keys, buttons); hard meters are never pulsed by a test",
           device_tests.meters_test),
    Action("clear-tilt", TECH, "device", "TILT",
           "run a failed check again (rng:drbg, self_test:<check>) and clear its tilt if it passes",
           device_tests.clear_tilt),
    Action("config set", TECH, "config", "GAME KEY=VALUE [KEY=VALUE ...]",
           "change a game's options; checked against the jurisdiction profile, stored in critical "
           "memory, used from the next round", config_set),
    Action("ram-clear", TECH, "config", "CLEAR REASON...",
           "erase critical memory (no credits, no round); done by the runner (on_ram_clear)", ram_clear),
    Action("packages", READERS, "read", "", "game packages the host offered: waiting for approval, and installed",
           packages),
    Action("package approve", TECH, "config", "NAME",
           "verify the waiting package NAME again and install it: its options pass the same check as "
           "config set and are used from the next round", package_approve),
    Action("package reject", TECH, "config", "NAME", "decline the waiting package NAME (deleted, logged)",
           package_reject),
    Action("demo start", TECH, "config", "[CREDITS]", "demo mode on, with demo credits (memory only)", demo_start),
    Action("demo play", TECH, "config", "[ROUNDS]", "play demo rounds of the current game", demo_play),
    Action("demo stop", TECH, "config", "", "demo mode off; the terminal is as it was", demo_stop),
)
ACTION_BY_NAME: dict[str, Action] = {a.name: a for a in ACTIONS}
#: action name -> the roles allowed (the table above, as a lookup).
PERMISSIONS: dict[str, frozenset[str]] = {a.name: a.roles for a in ACTIONS}


def permission_table() -> list[dict[str, Any]]:
    """The table as data (for the screens and docs/service.md)."""
    return [{"action": a.name, "usage": a.usage, "kind": a.kind, "summary": a.summary,
             "roles": [r for r in ROLES if r in a.roles]} for a in ACTIONS]


def allowed(role: str | None) -> list[Action]:
    """The actions ``role`` may use, in the table's order."""
    return [a for a in ACTIONS if role in a.roles]
