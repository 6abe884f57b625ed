"""The service API: roles, PINs, one session at a time, and what each role may do (docs/service.md).

The service screens (later) and ``egm simctl service ...`` reach the terminal through one command,
``service``, whose argument is the words typed (``login technician 2222``, ``meters``, ``config set
three-card-poker dealer_cards=4``); ``demo`` is a second command for the demo mode
(:mod:`firmware.cabinet.demo`). Both run on the terminal's own thread, like every command, so a
service action never races a round, a note or a tilt.

* **Roles and PINs.** Four roles (:data:`ROLES`), one PIN each, kept in the configuration only as a
  salted PBKDF2-HMAC-SHA256 hash (:func:`hash_pin`, ``pbkdf2_sha256$ITER$SALT_HEX$HASH_HEX``) and
  compared in constant time. A login with a documented development PIN works and is logged
  (``service_default_pin``). :data:`LOCKOUT_ATTEMPTS` wrong PINs in a row lock the role for
  :data:`LOCKOUT_S` seconds (``service_lockout``).
* **One session.** A login replaces the session before it (both logged); a session ends after
  ``session_timeout_s`` without a request (logged). Ending a session ends the demo mode.
* **Permissions** are data: :data:`ACTIONS`, one row per action with the roles allowed, its kind
  and its usage; docs/service.md shows the same table. ``read`` actions run in any cabinet state;
  ``device`` and ``config`` actions (and the demo) need the technician's key (SERVICE), or IDLE
  with no credits; ``attendant`` actions follow the terminal's own rules (a handpay needs HANDPAY).
* **Everything is logged.** Each login (``service_entry``, with its role and result), logout,
  time-out, refusal and action (``service_action``: role, action, result ``ok``/``refused`` and a
  short detail) is a critical-memory event, committed before the answer. A refused action changes
  nothing but that event.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from firmware.cabinet.demo import DemoMode
from firmware.cabinet.par_jobs import ParJob, ParJobs
from firmware.cabinet.states import CabinetState
from firmware.config.schema import PIN_HASH_PATTERN, SERVICE_ROLES
from firmware.errors import EgmError
from firmware.ledger.errors import CriticalMemoryError
from hal.base import Device
from hal.devices.io_board import TIERS, TowerPattern
from hal.errors import DeviceError

D = TypeVar("D", bound=Device)

S = CabinetState

#: The service roles, as the ledger's ``service_entry`` events name them.
ROLES: tuple[str, ...] = SERVICE_ROLES
#: The documented development PINs (``[service.pins]`` defaults): a login with one is logged.
DEVELOPMENT_PINS: dict[str, str] = {"attendant": "1111", "technician": "2222", "auditor": "3333",
                                    "regulator": "4444"}
PIN_SCHEME = "pbkdf2_sha256"
#: PBKDF2 iterations of a new hash (the configuration refuses fewer than 200,000).
DEFAULT_ITERATIONS = 310_000
#: Wrong PINs in a row that lock a role, and for how long.
LOCKOUT_ATTEMPTS = 5
LOCKOUT_S = 60.0
#: The most records a read action returns.
MAX_READ = 1000


class ServiceError(EgmError):
    """A service request refused (one line: why)."""


# --- PINs ----------------------------------------------------------------------------------------
def _check_pin_text(pin: Any) -> str:
    if not isinstance(pin, str) or not pin.isdigit() or not 4 <= len(pin) <= 12 or not pin.isascii():
        raise ServiceError("a PIN is 4 to 12 digits")
    return pin


def hash_pin(pin: str, *, iterations: int = DEFAULT_ITERATIONS, salt: bytes | None = None) -> str:
    """``pbkdf2_sha256$ITERATIONS$SALT_HEX$HASH_HEX`` of ``pin`` with a fresh 16-byte salt: what
    ``[service.pins]`` stores (tests pass a small ``iterations``; the configuration needs 200,000)."""
    _check_pin_text(pin)
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ServiceError(f"iterations is a positive whole number, not {iterations!r}")
    salt = os.urandom(16) if salt is None else bytes(salt)
    if len(salt) < 16:
        raise ServiceError("a PIN hash needs at least 16 bytes of salt")
    digest = hashlib.pbkdf2_hmac("sha256", pin.encode("ascii"), salt, iterations)
    return f"{PIN_SCHEME}${iterations}${salt.hex()}${digest.hex()}"


def parse_pin_hash(encoded: str) -> tuple[int, bytes, bytes]:
    """(iterations, salt, hash) of a stored PIN hash; ServiceError if it is not one."""
    match = PIN_HASH_PATTERN.fullmatch(encoded) if isinstance(encoded, str) else None
    if match is None:
        raise ServiceError("not a PIN hash (pbkdf2_sha256$ITERATIONS$SALT_HEX$HASH_HEX)")
    return int(match.group(1)), bytes.fromhex(match.group(2)), bytes.fromhex(match.group(3))


def verify_pin(pin: str, encoded: str) -> bool:
    """Whether ``pin`` is the PIN of ``encoded`` (the comparison takes the same time either way)."""
    iterations, salt, expected = parse_pin_hash(encoded)
    candidate = hashlib.pbkdf2_hmac("sha256", str(pin).encode("utf-8"), salt, iterations)
    return hmac.compare_digest(candidate, expected)


# --- the permission table ------------------------------------------------------------------------
ALL = frozenset(ROLES)
READERS = frozenset({"technician", "auditor", "regulator"})
TECH = frozenset({"technician"})
ATTENDANT = frozenset({"attendant"})


@dataclass(frozen=True, slots=True)
class Action:
    """One service function: who may use it, what kind it is, how it is typed."""

    name: str                  #: the words that name it (``config set``)
    roles: frozenset[str]      #: the roles allowed
    kind: str                  #: read | attendant | device | config (see :data:`KINDS`)
    usage: str                 #: the rest of the words
    summary: str


#: What each kind may do, and when (the cabinet state rule).
KINDS: dict[str, str] = {
    "read": "reads critical memory or the devices; any cabinet state",
    "attendant": "the attendant's duties; the terminal's own rules (a handpay needs HANDPAY)",
    "device": "drives a device; SERVICE, or IDLE with no credits",
    "config": "changes configuration, memory or the play mode; SERVICE, or IDLE with no credits, no round",
}

#: THE permission table (docs/service.md shows it): nothing else decides who may do what.
ACTIONS: tuple[Action, ...] = (
    Action("meters", READERS, "read", "", "every meter and the credit balance (egm meters)"),
    Action("recall", ALL, "read", "[N]", "the last N rounds, newest first (default 10)"),
    Action("events", ALL, "read", "[N]", "the last N events, newest first (default 50)"),
    Action("bills", ALL, "read", "[N]", "the last N notes accepted (default 10)"),
    Action("tickets", ALL, "read", "[N]", "the last N vouchers and cashless transactions (default 35)"),
    Action("software", READERS, "read", "", "the last software verification (the power-up self-test's)"),
    Action("software hash", READERS, "read", "ALGORITHM [SEED_HEX]",
           "the lab's digest of the installed software now (sha1, sha256, hmac-sha1, hmac-sha256)"),
    Action("handpay", ATTENDANT, "attendant", "", "pay the waiting handpay by hand; the lockup ends"),
    Action("call-cleared", ATTENDANT, "attendant", "", "the attendant answered the player's call"),
    Action("diagnostics", TECH, "read", "", "each device's state and link counters"),
    Action("config show", TECH, "read", "[GAME]", "the game options in force (and stored changes)"),
    Action("test note-return", TECH, "device", "",
           "bill validator: live status; a note held in escrow is returned (in SERVICE)"),
    Action("test ticket", TECH, "device", "[print]",
           "printer: live status and faults; `print` (SERVICE): a TEST TICKET - VOID worth nothing"),
    Action("test touch", TECH, "device", "", "the last touches, calibrated (touch the screen, then ask)"),
    Action("test shoe", TECH, "device", "", "the card the shoe read last (draw one, then ask)"),
    Action("touch calibrate", TECH, "device", "begin/commit/cancel",
           "the touchscreen's calibration, from the service screens (three targets and a check touch); "
           "each step is allowed and logged here"),
    Action("test lamps", TECH, "device", "[on/off]", "every button lamp on (or off)"),
    Action("test tower", TECH, "device", "[TIER PATTERN, or off]",
           "a tower light tier (0 top): on, off, flash-slow or flash-fast (default 0 flash-fast); 'off': every tier off"),
    Action("test meters", TECH, "device", "",
           "I/O board inputs (doors, keys, buttons); hard meters are never pulsed by a test"),
    Action("clear-tilt", TECH, "device", "TILT",
           "run a failed check again (rng:drbg, self_test:<check>) and clear its tilt if it passes"),
    Action("config set", TECH, "config", "GAME KEY=VALUE [KEY=VALUE ...]",
           "change a game's options; checked against the jurisdiction profile, stored in critical "
           "memory, used from the next round"),
    Action("ram-clear", TECH, "config", "CLEAR REASON...",
           "erase critical memory (no credits, no round); done by the runner (on_ram_clear)"),
    Action("packages", READERS, "read", "", "game packages the host offered: waiting for approval, and installed"),
    Action("package approve", TECH, "config", "NAME",
           "verify the waiting package NAME again and install it: its options pass the same check as "
           "config set and are used from the next round"),
    Action("package reject", TECH, "config", "NAME", "decline the waiting package NAME (deleted, logged)"),
    Action("demo start", TECH, "config", "[CREDITS]", "demo mode on, with demo credits (memory only)"),
    Action("demo play", TECH, "config", "[ROUNDS]", "play demo rounds of the current game"),
    Action("demo stop", TECH, "config", "", "demo mode off; the terminal is as it was"),
)
ACTION_BY_NAME: dict[str, Action] = {a.name: a for a in ACTIONS}
#: action name -> the roles allowed (the table above, as a lookup).
PERMISSIONS: dict[str, frozenset[str]] = {a.name: a.roles for a in ACTIONS}


def permission_table() -> list[dict[str, Any]]:
    """The table as data (for the screens and docs/service.md)."""
    return [{"action": a.name, "usage": a.usage, "kind": a.kind, "summary": a.summary,
             "roles": [r for r in ROLES if r in a.roles]} for a in ACTIONS]


@dataclass(slots=True)
class Session:
    role: str
    since: float
    last: float


_CLEAR_WORD = "CLEAR"


class ServiceApi:
    """The service functions of one terminal (a :class:`~firmware.cabinet.terminal.Terminal`).

    ``pins``: role -> PIN hash (a role with none cannot log in). ``clock`` times sessions and
    lockouts. ``on_ram_clear(reason)``: does the RAM clear (the runner: stop, clear, restart);
    without it a RAM clear is refused. ``profile``: the jurisdiction profile for ``config set``
    (default: ``cfg.math.profile``); ``par_cache_dir``: where PAR sheets are cached (default:
    ``<state dir>/par``, as ``egm run``); ``compute_missing``: compute a PAR sheet no cache holds
    rather than refuse (Monte Carlo runs in the background, ``firmware/cabinet/par_jobs.py``: the
    change is refused until its sheet is ready). ``software_root``: what ``software hash``
    digests (default: the installed firmware).
    """

    def __init__(self, terminal: Any, *, pins: Mapping[str, str], clock: Callable[[], float] = time.monotonic,
                 session_timeout_s: float = 300, lockout_attempts: int = LOCKOUT_ATTEMPTS,
                 lockout_s: float = LOCKOUT_S, on_ram_clear: Callable[[str], Any] | None = None,
                 demo: DemoMode | None = None, profile: Any = None, par_cache_dir: Path | None = None,
                 compute_missing: bool = True, software_root: Path | None = None,
                 software_packages: Sequence[str] | None = None) -> None:
        unknown = sorted(set(pins) - set(ROLES))
        if unknown:
            raise ServiceError(f"PINs for unknown role(s) {', '.join(unknown)}; roles are {', '.join(ROLES)}")
        for role, encoded in pins.items():
            try:
                parse_pin_hash(encoded)
            except ServiceError:
                raise ServiceError(f"the {role} PIN is not a PIN hash "
                                   "(pbkdf2_sha256$ITERATIONS$SALT_HEX$HASH_HEX)") from None
        if session_timeout_s <= 0 or lockout_s <= 0 or lockout_attempts < 1:
            raise ServiceError("session_timeout_s and lockout_s are positive, lockout_attempts at least 1")
        self.terminal = terminal
        self.ledger = terminal.ledger
        self._pins = dict(pins)
        self._clock = clock
        self.session_timeout_s = session_timeout_s
        self.lockout_attempts = lockout_attempts
        self.lockout_s = lockout_s
        self.on_ram_clear = on_ram_clear
        self.demo = demo if demo is not None else DemoMode(terminal, credits=_demo_credits(terminal.cfg))
        self._profile = profile
        self.par_cache_dir = par_cache_dir
        self.compute_missing = compute_missing
        self.par_jobs = ParJobs()
        self.software_root = software_root
        self.software_packages = software_packages
        self.session: Session | None = None
        self._ended: str | None = None              #: why the last session ended (for the next refusal)
        self._failures: dict[str, int] = {}
        self._locked_until: dict[str, float] = {}
        self._software: dict[str, Any] | None = None
        self._handlers: dict[str, Callable[[list[str]], tuple[Any, str | None]]] = {
            "meters": self._meters, "recall": self._recall, "events": self._events, "bills": self._bills,
            "tickets": self._tickets, "software": self._software_result, "software hash": self._software_hash,
            "handpay": self._handpay, "call-cleared": self._call_cleared, "diagnostics": self._diagnostics,
            "clear-tilt": self._clear_tilt,
            "config show": self._config_show, "test note-return": self._test_note_return,
            "test ticket": self._test_ticket, "test touch": self._test_touch, "test shoe": self._test_shoe,
            "touch calibrate": self._touch_calibrate,
            "test lamps": self._test_lamps, "test tower": self._test_tower,
            "test meters": self._test_meters, "config set": self._config_set, "ram-clear": self._ram_clear,
            "packages": self._packages, "package approve": self._package_approve,
            "package reject": self._package_reject,
            "demo start": self._demo_start, "demo play": self._demo_play, "demo stop": self._demo_stop,
        }
        assert set(self._handlers) == set(ACTION_BY_NAME), "every action of the table has a handler"

    @classmethod
    def from_config(cls, terminal: Any, **kwargs: Any) -> ServiceApi:
        """The API with the terminal configuration's ``[service]`` settings."""
        svc = terminal.cfg.service
        kwargs.setdefault("demo", DemoMode(terminal, credits=svc.demo_credits))
        return cls(terminal, pins=svc.pins, session_timeout_s=svc.session_timeout_s,
                   lockout_attempts=svc.lockout_attempts, lockout_s=svc.lockout_s, **kwargs)

    # --- the `service` command -----------------------------------------------------------------
    def handle(self, words: Sequence[str]) -> Any:
        """One request, as words (the ``service`` command's handler)."""
        if isinstance(words, str) or not isinstance(words, Sequence) or not all(isinstance(w, str) for w in words):
            raise ServiceError("a service request is a list of words")
        words = [w for w in words if w != ""]
        self.expire()
        self.check_demo()
        if not words or words[0] == "help":
            return self.help()
        verb, rest = words[0], words[1:]
        if verb == "login":
            if len(rest) != 2:
                raise ServiceError("usage: service login ROLE PIN")
            return self.login(rest[0], rest[1])
        if verb == "logout":
            return self.logout()
        if verb in ("session", "whoami"):
            return self.session_info()
        if verb == "demo" and rest in ([], ["status"]):
            return self.demo_command([])
        name = " ".join(words[:2]) if " ".join(words[:2]) in ACTION_BY_NAME else verb
        action = ACTION_BY_NAME.get(name)
        if action is None:
            role = self.session.role if self.session else None
            self._refuse(role, verb[:40], f"unknown service function {verb!r}; "
                                          f"{self._yours(role)} (service help)")
        return self.perform(name, words[len(name.split()):])

    def help(self) -> dict[str, Any]:
        """The functions (all of them, and those the current role may use)."""
        role = self.session.role if self.session else None
        return {"role": role,
                "session": ["login ROLE PIN", "logout", "session"],
                "yours": [f"{a.name} {a.usage}".strip() for a in ACTIONS if role in a.roles],
                "actions": permission_table()}

    def _yours(self, role: str | None) -> str:
        if role is None:
            return "log in first: service login ROLE PIN"
        return "the " + role + " role may use: " + ", ".join(a.name for a in ACTIONS if role in a.roles)

    # --- sessions ------------------------------------------------------------------------------
    def login(self, role: str, pin: str) -> dict[str, Any]:
        """Open a session for ``role`` (replacing any other), or refuse and log why."""
        now = self._clock()
        if role not in ROLES:
            self._refuse(None, "login", f"unknown role {role[:20]!r}; roles are {', '.join(ROLES)}")
        until = self._locked_until.get(role)
        if until is not None:
            if now < until:
                self._entry_refused(role, f"the {role} role is locked for {until - now:.0f} more s "
                                          f"after {self.lockout_attempts} wrong PINs")
            del self._locked_until[role]
            self._failures.pop(role, None)
        encoded = self._pins.get(role)
        if encoded is None:
            self._entry_refused(role, f"no PIN is configured for the {role} role ([service.pins])")
        if not verify_pin(pin, encoded):
            count = self._failures.get(role, 0) + 1
            self._failures[role] = count
            if count >= self.lockout_attempts:
                self._locked_until[role] = now + self.lockout_s
                self._failures.pop(role, None)
                self.ledger.event("service_lockout", role=role, attempts=count, seconds=self.lockout_s)
                self._entry_refused(role, f"wrong PIN; the {role} role is locked for {self.lockout_s:g} s "
                                          f"after {count} wrong PINs in a row")
            self._entry_refused(role, f"wrong PIN ({self.lockout_attempts - count} more before the "
                                      f"{role} role locks)")
        self._failures.pop(role, None)
        default = hmac.compare_digest(pin.encode("utf-8"), DEVELOPMENT_PINS[role].encode("utf-8"))
        if self.session is not None:
            self._end(f"replaced by a {role} login", action="logout")
        if default:
            self.ledger.event("service_default_pin", role=role)
        self.ledger.event("service_entry", role=role, result="ok", detail="login"
                          + (" with the development PIN" if default else ""))
        self.session = Session(role, now, now)
        self._ended = None
        answer: dict[str, Any] = {"role": role, "timeout_s": self.session_timeout_s,
                                  "allowed": [a.name for a in ACTIONS if role in a.roles]}
        if default:
            answer["warning"] = f"the {role} PIN is the development default: change it ([service.pins])"
        return answer

    def logout(self) -> dict[str, Any]:
        if self.session is None:
            self._refuse(None, "logout", "no one is logged in")
        role = self.session.role
        self._end("logout", action="logout")
        return {"logged_out": role}

    def expire(self) -> None:
        """End the session if it has been idle for ``session_timeout_s`` (logged)."""
        session = self.session
        if session is not None and self._clock() - session.last >= self.session_timeout_s:
            self._end(f"idle for {self.session_timeout_s:g} s", action="timeout")
            self._ended = f"the {session.role} session timed out"

    def session_info(self) -> dict[str, Any]:
        session = self.session
        if session is None:
            return {"role": None, "ended": self._ended}
        now = self._clock()
        return {"role": session.role, "for_s": round(now - session.since, 1),
                "idle_s": round(now - session.last, 1), "timeout_s": self.session_timeout_s,
                "demo": self.demo.active}

    def _end(self, detail: str, *, action: str) -> None:
        session = self.session
        assert session is not None
        if self.demo.active:
            summary = self.demo.stop()
            self._log(session.role, "demo stop", "ok", f"session ended; {summary['rounds']} demo rounds")
        self.session = None
        self._log(session.role, action, "ok", detail)

    # --- actions -------------------------------------------------------------------------------
    def perform(self, name: str, args: Sequence[str] = ()) -> Any:
        """Run action ``name`` of :data:`ACTIONS` with ``args`` for the current session's role:
        refused (logged, nothing changed) unless the role and the cabinet state allow it."""
        self.expire()
        action = ACTION_BY_NAME.get(name)
        session = self.session
        role = session.role if session else None
        if action is None:
            self._refuse(role, name[:40], f"unknown service function {name!r}; {self._yours(role)}")
        if session is None:
            self._refuse(None, name, f"{self._ended + ': ' if self._ended else ''}log in first: "
                                     "service login ROLE PIN")
        assert role is not None
        if role not in action.roles:
            allowed = ", ".join(r for r in ROLES if r in action.roles)
            self._refuse(role, name, f"the {role} role may not use {name} (allowed: {allowed})")
        if action.kind in ("device", "config"):
            why = self._change_blocked()
            if why is not None:
                self._refuse(role, name, f"{name} needs the technician key (SERVICE) or an idle cabinet "
                                         f"with no credits: {why}")
        session.last = self._clock()
        try:
            result, detail = self._handlers[name](list(args))
        except CriticalMemoryError:
            raise                                   # nothing can be recorded: the terminal stops
        except (EgmError, DeviceError, ValueError, TypeError) as exc:
            self._refuse(role, name, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        if detail is not None:                      # None: the handler logged it itself
            self._log(role, name, "ok", detail)
        return result

    def _change_blocked(self) -> str | None:
        t = self.terminal
        if getattr(t, "memory_locked", False):
            return None          # critical memory failed at power-up: nothing plays, nothing takes money
        state = t.cabinet.state
        if state is S.SERVICE:
            return None
        if state is not S.IDLE:
            return f"the cabinet is {state.name}"
        if t.ledger.credits_cents:
            return f"the credit meter holds {t.ledger.credits} credits"
        if t.kernel is not None or t.starting or t.ledger.open_round is not None:
            return "a round is in progress"
        return None

    def _round_open(self) -> bool:
        t = self.terminal
        return (t.cabinet.round_in_progress or t.kernel is not None or t.starting
                or t.ledger.open_round is not None)

    # --- logging -------------------------------------------------------------------------------
    def _log(self, role: str | None, action: str, result: str, detail: str) -> None:
        self.ledger.event("service_action", role=role, action=action, result=result, detail=detail[:200])

    def _refuse(self, role: str | None, action: str, detail: str) -> NoReturn:
        self._log(role, action, "refused", detail)
        raise ServiceError(detail)

    def _entry_refused(self, role: str, detail: str) -> NoReturn:
        self.ledger.event("service_entry", role=role, result="refused", detail=detail[:200])
        raise ServiceError(detail)

    # --- reads ---------------------------------------------------------------------------------
    @staticmethod
    def _count(args: list[str], default: int) -> int:
        if not args:
            return default
        if len(args) != 1 or not args[0].isdigit() or not 1 <= int(args[0]) <= MAX_READ:
            raise ServiceError(f"N is a number of records 1..{MAX_READ}")
        return int(args[0])

    @staticmethod
    def _no_args(args: list[str], name: str) -> None:
        if args:
            raise ServiceError(f"{name} takes no arguments")

    def _meters(self, args: list[str]) -> tuple[Any, str]:
        self._no_args(args, "meters")
        return self.ledger.meters_report(), "meters read"

    def _recall(self, args: list[str]) -> tuple[Any, str]:
        n = self._count(args, 10)
        rounds = self.ledger.recall(n)
        return {"rounds": rounds}, f"{len(rounds)} rounds"

    def _events(self, args: list[str]) -> tuple[Any, str]:
        n = self._count(args, 50)
        events = self.ledger.events(n)
        return {"events": events}, f"{len(events)} events"

    def _bills(self, args: list[str]) -> tuple[Any, str]:
        n = self._count(args, 10)
        notes = self.ledger.notes(n)
        return {"bills": notes}, f"{len(notes)} notes"

    def _tickets(self, args: list[str]) -> tuple[Any, str]:
        n = self._count(args, 35)
        vouchers = self.terminal.vouchers.history(n)
        return {"vouchers": vouchers, "cashless": self.ledger.cashless(n)}, f"{len(vouchers)} vouchers"

    def set_software_result(self, result: Mapping[str, Any]) -> None:
        """What the power-up software verification found (the runner calls this after the self-test)."""
        self._software = {**dict(result), "recorded_at": time.time()}

    def _software_result(self, args: list[str]) -> tuple[Any, str]:
        if args:
            raise ServiceError("software takes no arguments (software hash ALGORITHM [SEED_HEX] digests "
                               "the software now)")
        if self._software is None:
            return {"verification": None, "note": "no software verification was recorded since power-up"}, \
                "no verification recorded"
        return {"verification": self._software}, f"ok={self._software.get('ok')}"

    def _software_hash(self, args: list[str]) -> tuple[Any, str]:
        from firmware.cabinet.software import (
            DEFAULT_PACKAGES,
            LAB_ALGORITHMS,
            default_root,
            lab_hash,
        )

        if not 1 <= len(args) <= 2:
            raise ServiceError(f"usage: software hash ALGORITHM [SEED_HEX]; algorithms: {', '.join(LAB_ALGORITHMS)}")
        seed = None
        if len(args) == 2:
            text = args[1][2:] if args[1][:2].lower() == "0x" else args[1]
            try:
                seed = bytes.fromhex(text)
            except ValueError:
                raise ServiceError("the seed is hexadecimal digits (an even number of them)") from None
        report = lab_hash(self.software_root or default_root(), args[0], seed,
                          self.software_packages or DEFAULT_PACKAGES)
        return report, f"{report['algorithm']} {report['overall'][:16]}... ({len(report['files'])} files)"

    # --- the attendant -------------------------------------------------------------------------
    def _handpay(self, args: list[str]) -> tuple[Any, str]:
        self._no_args(args, "handpay")
        paid = self.terminal.attendant_handpay(attendant="attendant (service login)")
        return paid, f"handpay of {paid['paid']} credits ({paid['reason']})"

    def _call_cleared(self, args: list[str]) -> tuple[Any, str]:
        self._no_args(args, "call-cleared")
        last_call = next((e for e in self.ledger.events(200)
                          if e.get("event") in ("attendant_called", "attendant_call_cleared")), None)
        waiting = last_call is not None and last_call["event"] == "attendant_called"
        self.ledger.event("attendant_call_cleared", waiting=waiting)
        return {"cleared": True, "was_waiting": waiting,
                "called_at": last_call["time"] if waiting else None}, \
            "call cleared" if waiting else "no call was waiting"

    # --- devices -------------------------------------------------------------------------------
    @staticmethod
    def _device(device: D | None, slot: str) -> D:
        """The device fitted in ``slot``, if it is open (a :class:`ServiceError` otherwise)."""
        if device is None:
            raise ServiceError(f"no {slot.replace('_', ' ')} is fitted")
        if not device.is_open:
            raise ServiceError(f"the {slot.replace('_', ' ')} is {device.lifecycle.value}")
        return device

    @staticmethod
    def _counters(device: Device) -> dict[str, Any]:
        return {str(k): v for k, v in dict(device.counters).items()}

    def _clear_tilt(self, args: list[str]) -> tuple[Any, str]:
        if len(args) != 1:
            raise ServiceError("usage: clear-tilt TILT (e.g. rng:drbg)")
        return self.terminal.retest(args[0]), f"{args[0]} cleared after its check passed"

    def _diagnostics(self, args: list[str]) -> tuple[Any, str]:
        self._no_args(args, "diagnostics")
        devices = {}
        for name, device in self.terminal.devices.items():
            entry: dict[str, Any] = {"lifecycle": device.lifecycle.value, "backend": type(device).__name__}
            try:
                entry["counters"] = self._counters(device)
            except Exception as exc:           # a device in trouble must not hide the others
                entry["error"] = f"{type(exc).__name__}: {exc}"
            devices[name] = entry
        cabinet = self.terminal.cabinet
        return {"state": cabinet.state.name, "tilts": [{"tilt": t.key, "reason": t.reason}
                                                       for t in cabinet.active_tilts],
                "devices": devices}, f"{len(devices)} devices"

    def _test_note_return(self, args: list[str]) -> tuple[Any, str]:
        self._no_args(args, "test note-return")
        validator = self._device(self.terminal.devices.bill_validator, "bill_validator")
        status = validator.status()
        escrowed = validator.escrowed
        returned = False
        # Only in SERVICE, where the cabinet takes no money; never a voucher being redeemed.
        if escrowed and self.terminal.cabinet.state is S.SERVICE and self.terminal.redeeming is None:
            validator.return_escrow()
            returned = True
        result = {"device": "bill_validator", "lifecycle": validator.lifecycle.value,
                  "status": status, "escrow": escrowed, "returned": returned,
                  "notes_cents": sorted(set(validator.notes.values())),
                  "counters": self._counters(validator)}
        if returned:
            detail = "escrowed item returned"
        elif escrowed:
            detail = "item in escrow left to the cabinet (returned only in SERVICE)"
        else:
            detail = f"status {result['status']}; nothing in escrow"
        return result, detail

    def _test_ticket(self, args: list[str]) -> tuple[Any, str]:
        if args == ["print"]:
            return self.terminal.print_test_ticket(), "test ticket sent (TEST TICKET - VOID, never redeemable)"
        self._no_args(args, "test ticket [print]")
        printer = self._device(self.terminal.devices.printer, "printer")
        status = printer.status()
        text = status.text
        result = {"device": "printer", "lifecycle": printer.lifecycle.value, "flags": text,
                  "version": status.version, "printing": printer.printing,
                  "counters": self._counters(printer),
                  "note": "`test ticket print` (in SERVICE) prints TEST TICKET - VOID, numbered all zeros"}
        return result, f"printer flags: {text}"

    def _touch_calibrate(self, args: list[str]) -> tuple[Any, str]:
        """The gate of the screens' ``touch_calibration`` command (firmware/ui/service/calibration.py):
        the role and the cabinet state are checked and the step logged; the screens do the rest."""
        if len(args) != 1 or args[0] not in ("begin", "commit", "cancel"):
            raise ServiceError("usage: touch calibrate begin|commit|cancel")
        self._device(self.terminal.devices.touch, "touch")
        return {"step": args[0]}, f"touch calibration {args[0]}"

    def _test_touch(self, args: list[str]) -> tuple[Any, str]:
        self._no_args(args, "test touch")
        touch = self._device(self.terminal.devices.touch, "touch")
        touches = list(self.terminal.touches)
        return ({"device": "touch", "lifecycle": touch.lifecycle.value, "touches": touches},
                f"{len(touches)} touches")

    def _test_shoe(self, args: list[str]) -> tuple[Any, str]:
        self._no_args(args, "test shoe")
        shoe = self._device(self.terminal.devices.shoe, "shoe")
        if self.terminal.kernel is not None:
            raise ServiceError("the shoe is dealing a round")
        if not shoe.queued:
            return {"device": "shoe", "card": None, "note": "draw a card from the shoe, then ask again"}, \
                "no card drawn"
        card = str(shoe.read_card(1.0))
        self.terminal.ledger.event("shoe_test_card", card=card)
        return {"device": "shoe", "card": card}, f"read {card}"

    def _test_lamps(self, args: list[str]) -> tuple[Any, str]:
        from hal.events import Button

        if args not in ([], ["on"], ["off"]):
            raise ServiceError("usage: test lamps [on/off]")
        board = self._device(self.terminal.devices.io_board, "io_board")
        lit = frozenset() if args == ["off"] else frozenset(Button)
        board.button_lamps(lit)
        return {"device": "io_board", "lamps": sorted(b.value for b in lit)}, \
            f"{len(lit)} button lamps lit"

    def _test_tower(self, args: list[str]) -> tuple[Any, str]:
        patterns = {p.name.lower().replace("_", "-"): p for p in TowerPattern}
        board = self._device(self.terminal.devices.io_board, "io_board")
        if args == ["off"]:
            for tier in range(TIERS):
                board.tower(tier, TowerPattern.OFF)
            return {"device": "io_board", "tower": dict.fromkeys(range(TIERS), "off")}, "tower off"
        tier_text, pattern_text = args if len(args) == 2 else ("0", "flash-fast") if not args else ("", "")
        if not tier_text.isdigit() or not 0 <= int(tier_text) < TIERS or pattern_text not in patterns:
            raise ServiceError(f"usage: test tower [TIER PATTERN, or off]: TIER 0..{TIERS - 1}, "
                               f"PATTERN {', '.join(patterns)}")
        board.tower(int(tier_text), patterns[pattern_text])
        return {"device": "io_board", "tower": {int(tier_text): pattern_text}}, \
            f"tier {tier_text} {pattern_text}"

    def _test_meters(self, args: list[str]) -> tuple[Any, str]:
        self._no_args(args, "test meters")
        board = self._device(self.terminal.devices.io_board, "io_board")
        shown = {k.value: bool(v) for k, v in board.inputs.items()}
        return {"device": "io_board", "inputs": shown, "active": sorted(k for k, v in shown.items() if v),
                "counters": self._counters(board),
                "note": "hard meters count money: a test never pulses them"}, \
            f"{sum(shown.values())} of {len(shown)} inputs on"

    # --- configuration -------------------------------------------------------------------------
    def profile(self) -> Any:
        if self._profile is None:
            from firmware.math.profile import load_profile

            self._profile = load_profile(self.terminal.cfg.math.profile)
        return self._profile

    @staticmethod
    def setting_name(game: str) -> str:
        return f"config.games.{game}"

    def _config_show(self, args: list[str]) -> tuple[Any, str]:
        from firmware.games.registry import available, make_options

        cfg = self.terminal.cfg
        games = [g for g in cfg.games.enabled if g in set(available())]
        if args:
            if len(args) != 1 or args[0] not in games:
                raise ServiceError(f"usage: config show [GAME]; games: {', '.join(games)}")
            games = args
        shown = {}
        for game in games:
            table = cfg.games.options.get(game, {})
            shown[game] = {"table": table, "options": make_options(game, table).to_json(),
                           "stored": self.ledger.setting(self.setting_name(game)) is not None}
        return {"games": shown, "profile": cfg.math.profile, "seats": cfg.games.seats,
                "limits": cfg.limits.model_dump(),
                "par_jobs": [j.to_json() for j in self.par_jobs.all()]}, f"{len(shown)} games"

    def _config_set(self, args: list[str]) -> tuple[Any, str]:
        from firmware.games.options import parse_assignments

        if len(args) < 2:
            raise ServiceError("usage: config set GAME KEY=VALUE [KEY=VALUE ...]")
        game, pairs = args[0], args[1:]
        if self._round_open():
            raise ServiceError("a round is in progress: configuration changes wait for it to end")
        candidate, stored, findings = self.plan_options(self.terminal.cfg, game, parse_assignments(pairs))
        self.ledger.store_setting(self.setting_name(game), stored)
        self._apply(candidate, [game])
        detail = f"{game}: {' '.join(pairs)}"
        return {"game": game, "table": stored, "applied": "from the next round",
                "findings": [f.to_json() for f in findings]}, detail

    def plan_options(self, cfg: Any, game: str, change: Mapping[str, Any]) -> tuple[Any, dict[str, Any], list[Any]]:
        """``cfg`` with ``change`` merged into ``game``'s options: (candidate configuration, the table
        to store, the profile's findings). :class:`ServiceError` if the game is not enabled, an
        option is wrong, or the jurisdiction profile refuses the result. Changes nothing."""
        from firmware.games.registry import available, make_options

        if game not in cfg.games.enabled or game not in set(available()):
            raise ServiceError(f"game {game!r} is not enabled; enabled: {', '.join(cfg.games.enabled)}")
        table = _merged(cfg.games.options.get(game, {}), change)
        options = make_options(game, table, prefix=f"games.options.{game}")
        stored = _pick(options.to_json(), table)               # typed values, only the keys set
        candidate = cfg.model_copy(update={"games": cfg.games.model_copy(
            update={"options": {**cfg.games.options, game: stored}})})
        findings = self._check(candidate, game)
        refused = [f for f in findings if f.verdict == "refused" or (f.verdict == "unproven" and f.wager == "*")]
        if refused:
            raise ServiceError(f"refused by the jurisdiction profile: {refused[0].message}")
        return candidate, stored, findings

    def _check(self, candidate: Any, game: str) -> list[Any]:
        """The changed game's PAR against the profile (only that game: the others did not change)."""
        from firmware.math.profile import check_configuration

        only = candidate.model_copy(update={"games": candidate.games.model_copy(
            update={"enabled": [game], "default": game})})
        cache_dir = self.par_cache_dir if self.par_cache_dir is not None else Path(self.ledger.state_dir) / "par"
        profile = self.profile()
        findings = check_configuration(only, profile, cache_dir=cache_dir, compute_missing=False)
        if not self.compute_missing or not any(f.verdict == "unproven" and f.wager == "*" for f in findings):
            return findings
        # Only Monte Carlo reaches this configuration: minutes of work, never on this thread.
        options = candidate.games.options.get(game, {})
        rounds = candidate.math.monte_carlo_rounds
        key = json.dumps([game, options, candidate.games.seats, candidate.limits.model_dump(), rounds],
                         sort_keys=True, default=str)
        job = self.par_jobs.start(key, ParJob(game, dict(options), rounds), lambda: check_configuration(
            only, profile, cache_dir=cache_dir, compute_missing=True, processes=1))
        if job.state == "failed":
            self.par_jobs.forget(key)                 # asked again: computed again
            raise ServiceError(f"{game}: the PAR sheet of these options could not be computed: {job.error}")
        if job.state == "done":                       # finished meanwhile: the cache has it now
            return check_configuration(only, profile, cache_dir=cache_dir, compute_missing=False)
        raise ServiceError(f"{game}: no PAR sheet for these options yet; it is being computed in the "
                           f"background (Monte Carlo, {rounds:,} rounds; play goes on). Nothing was changed: "
                           "ask again when 'config show' lists it done")

    def _apply(self, candidate: Any, games: list[str]) -> None:
        """The terminal plays ``candidate`` from its next round (a round in progress keeps its options)."""
        self.terminal.use_config(candidate, games)

    # --- game packages (firmware/cabinet/packages.py) -------------------------------------------
    def _package_manager(self) -> Any:
        link = getattr(self.terminal, "hostlink", None)
        manager = getattr(link, "packages", None)
        if manager is None:
            raise ServiceError("this terminal takes no game packages (no host link)")
        return manager

    def _packages(self, args: list[str]) -> tuple[Any, str]:
        self._no_args(args, "packages")
        status = self._package_manager().status()
        return status, f"{len(status['pending'])} waiting, {len(status['installed'])} installed"

    def _package_approve(self, args: list[str]) -> tuple[Any, str]:
        from egmproto.package_format import PackageRejected

        if len(args) != 1:
            raise ServiceError("usage: package approve NAME")
        if self._round_open():
            raise ServiceError("a round is in progress: a package waits for it to end")
        manager = self._package_manager()
        try:
            package = manager.reverify(args[0])
        except PackageRejected as exc:
            raise ServiceError(f"package {args[0]} refused and deleted: {exc}") from None
        cfg = self.terminal.cfg
        stored: dict[str, dict[str, Any]] = {}
        findings: list[Any] = []
        for game, change in sorted(package.options().items()):       # every game checked before any change
            cfg, stored[game], found = self.plan_options(cfg, game, change)
            findings += found
        manager.place(package)                                        # files first: not yet a record
        with self.ledger.batch():     # the options and the installed record: all of it or none of it
            for game, table in stored.items():
                self.ledger.store_setting(self.setting_name(game), table)
            record = manager.record(package, role=self.session.role if self.session else None)
        manager.forget_file(package.sha256)
        self._apply(cfg, sorted(stored))
        return ({"installed": record, "options": stored, "applied": "from the next round",
                 "findings": [f.to_json() for f in findings]},
                f"{package.name} {package.version} ({package.sha256[:12]}): {', '.join(sorted(stored))}")

    def _package_reject(self, args: list[str]) -> tuple[Any, str]:
        if len(args) != 1:
            raise ServiceError("usage: package reject NAME")
        entry = self._package_manager().decline(args[0], role=self.session.role if self.session else None)
        return {"declined": entry}, f"{args[0]} {entry['version']}"

    def apply_stored_config(self) -> list[str]:
        """Use the game options a technician stored (``config set``) over the configuration file's:
        at start-up (:func:`install` calls it). A stored table the firmware no longer accepts is
        logged and skipped. Returns the games changed."""
        from firmware.games.registry import available, make_options

        cfg = self.terminal.cfg
        applied = []
        for game in cfg.games.enabled:
            table = self.ledger.setting(self.setting_name(game))
            if table is None or game not in set(available()):
                continue
            try:
                make_options(game, table)
            except EgmError as exc:
                self.ledger.event("service_config_not_applied", game=game, reason=str(exc)[:200])
                continue
            cfg = cfg.model_copy(update={"games": cfg.games.model_copy(
                update={"options": {**cfg.games.options, game: table}})})
            applied.append(game)
        if applied:
            # A round in progress keeps the kernel it started with (terminal.kernel); only the
            # next round is built from the new options.
            self.terminal.use_config(cfg, applied)
            self.ledger.event("service_config_applied", games=applied)
        return applied

    def _ram_clear(self, args: list[str]) -> tuple[Any, str | None]:
        t = self.terminal
        if not args or args[0] != _CLEAR_WORD:
            raise ServiceError(f"a RAM clear erases every meter and all history: confirm with "
                               f"ram-clear {_CLEAR_WORD} REASON...")
        reason = " ".join(args[1:]).strip()
        if not reason:
            raise ServiceError(f"a RAM clear needs a reason: ram-clear {_CLEAR_WORD} REASON...")
        if t.ledger.credits_cents:
            raise ServiceError(f"the credit meter holds {t.ledger.credits} credits: cash out first")
        if self._round_open():
            raise ServiceError("a round is in progress")
        if self.on_ram_clear is None:
            raise ServiceError("RAM clear is done with `egm ledger clear` while the terminal is stopped")
        role = self.session.role if self.session else None
        self._log(role, "ram-clear", "ok", f"requested: {reason}")
        return self.on_ram_clear(reason), None          # the ledger may be reopened: log nothing after

    # --- demo ----------------------------------------------------------------------------------
    def _demo_start(self, args: list[str]) -> tuple[Any, str]:
        if len(args) > 1 or (args and not args[0].isdigit()):
            raise ServiceError("usage: demo start [CREDITS]")
        status = self.demo.start(int(args[0]) if args else None)
        return status, f"{status['credits']} demo credits, {status['game']}"

    def _demo_play(self, args: list[str]) -> tuple[Any, str]:
        if len(args) > 1 or (args and not args[0].isdigit()):
            raise ServiceError("usage: demo play [ROUNDS]")
        result = self.demo.play(int(args[0]) if args else 1)
        return result, f"{result['played']} demo rounds; demo credits {result['credits']}"

    def _demo_stop(self, args: list[str]) -> tuple[Any, str]:
        self._no_args(args, "demo stop")
        summary = self.demo.stop()
        return summary, f"{summary['rounds']} demo rounds"

    def check_demo(self) -> None:
        """End the demo mode (logged) if real credits or a round appeared since it started."""
        if self.demo.active and (why := self.demo.blocked()) is not None:
            self.demo.stop()
            self._log(self.session.role if self.session else None, "demo stop", "ok", f"ended: {why}")

    def demo_command(self, words: Sequence[str] = ()) -> Any:
        """The ``demo`` command: no words (or ``status``) shows the demo state to anyone;
        ``start``/``play``/``stop`` are the technician's service actions."""
        words = list(words)
        if not words or words == ["status"]:
            self.check_demo()
            return self.demo.status()
        return self.handle(["demo", *words])


def _demo_credits(cfg: Any) -> int:
    service = getattr(cfg, "service", None)
    return getattr(service, "demo_credits", 10_000)


def _merged(base: Mapping[str, Any], change: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: (_merged(v, {}) if isinstance(v, Mapping) else v) for k, v in base.items()}
    for key, value in change.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = _merged(value, {}) if isinstance(value, Mapping) else value
    return out


def _pick(full: Mapping[str, Any], keys: Mapping[str, Any]) -> dict[str, Any]:
    """The values of ``full`` (validated, typed) at the keys ``keys`` names (nested)."""
    out: dict[str, Any] = {}
    for key, value in keys.items():
        if key not in full:
            continue
        if isinstance(value, Mapping) and isinstance(full[key], Mapping):
            out[key] = _pick(full[key], value)
        else:
            out[key] = full[key]
    return out


def install(terminal: Any, api: ServiceApi, *, apply_stored: bool = True) -> ServiceApi:
    """Register the ``service`` and ``demo`` commands on ``terminal``; ``terminal.demo`` is the demo
    mode (``terminal.status()["demo"]`` shows it once the terminal asks). With ``apply_stored``, the
    game options stored by ``config set`` are used again (see :meth:`ServiceApi.apply_stored_config`)."""
    if api.terminal is not terminal:
        raise ServiceError("the service API belongs to another terminal")

    def service(words: Sequence[str] = ()) -> Any:
        return api.handle(words)

    def demo(words: Sequence[str] = ()) -> Any:
        return api.demo_command(words)

    terminal.register(service=service, demo=demo)
    terminal.demo = api.demo
    terminal.service = api
    if apply_stored:
        api.apply_stored_config()
    return api


__all__ = [
    "ACTIONS", "DEVELOPMENT_PINS", "KINDS", "PERMISSIONS", "ROLES", "Action", "ServiceApi", "ServiceError",
    "hash_pin", "install", "parse_pin_hash", "permission_table", "verify_pin",
]
