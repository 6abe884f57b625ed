"""The service API: a small dispatcher over the permission table (:mod:`.table`).

A request is words; ``login``/``logout``/``session`` go to the session (:mod:`.sessions`), anything
else names an action of the table, which is refused (logged, nothing changed) unless the session's
role and the cabinet state allow it (:mod:`.guards`), and otherwise run by the row's handler and
logged with the detail it returns.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from firmware.cabinet.demo import DemoMode
from firmware.cabinet.par_jobs import ParJobs
from firmware.cabinet.service import config_actions
from firmware.cabinet.service.audit import log_action, refuse
from firmware.cabinet.service.errors import ServiceError
from firmware.cabinet.service.guards import change_blocked
from firmware.cabinet.service.pins import ROLES
from firmware.cabinet.service.sessions import LOCKOUT_ATTEMPTS, LOCKOUT_S, Session, Sessions
from firmware.cabinet.service.table import ACTION_BY_NAME, allowed, permission_table
from firmware.errors import EgmError
from firmware.ledger.errors import CriticalMemoryError
from hal.errors import DeviceError

if TYPE_CHECKING:
    from firmware.cabinet.memory_lock import MemoryLock
    from firmware.cabinet.terminal import Terminal
    from firmware.config.schema import Config
    from firmware.math.profile import Profile


#: What the API serves: a running terminal, or the stand-in while critical memory is locked (which
#: allows only the session and a RAM clear: firmware/cabinet/memory_lock.py).
Served = Union["Terminal", "MemoryLock"]


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

    def __init__(self, terminal: Served, *, pins: Mapping[str, str], clock: Callable[[], float] = time.monotonic,
                 session_timeout_s: float = 300, lockout_attempts: int = LOCKOUT_ATTEMPTS,
                 lockout_s: float = LOCKOUT_S, on_ram_clear: Callable[[str], Any] | None = None,
                 demo: DemoMode | None = None, profile: Profile | None = None, par_cache_dir: Path | None = None,
                 compute_missing: bool = True, software_root: Path | None = None,
                 software_packages: Sequence[str] | None = None) -> None:
        self.sessions = Sessions(terminal.ledger, pins=pins, clock=clock, session_timeout_s=session_timeout_s,
                                 lockout_attempts=lockout_attempts, lockout_s=lockout_s,
                                 on_end=self._session_ending)
        #: Any, not :data:`Served`: the actions reach parts only a running terminal (and its
        #: ledger) has; :data:`~firmware.cabinet.memory_lock.LOCKED_VERBS` keeps them from the
        #: stand-in at run time, but the types cannot tell yet.
        self.terminal: Any = terminal
        self.ledger: Any = terminal.ledger
        self.on_ram_clear = on_ram_clear
        self.demo = demo if demo is not None else DemoMode(terminal, credits=_demo_credits(terminal.cfg))
        self._profile = profile
        self.par_cache_dir = par_cache_dir
        self.compute_missing = compute_missing
        self.par_jobs = ParJobs()
        self.software_root = software_root
        self.software_packages = software_packages
        #: What the power-up software verification found (:meth:`set_software_result`), or None.
        self.software_verification: dict[str, Any] | None = None

    @classmethod
    def from_config(cls, terminal: Served, **kwargs: Any) -> ServiceApi:
        """The API with the terminal configuration's ``[service]`` settings (``kwargs`` add to them)."""
        svc = terminal.cfg.service
        kwargs.setdefault("demo", DemoMode(terminal, credits=svc.demo_credits))
        return cls(terminal, pins=svc.pins, session_timeout_s=svc.session_timeout_s,
                   lockout_attempts=svc.lockout_attempts, lockout_s=svc.lockout_s, **kwargs)

    def commands(self, terminal: Served) -> dict[str, Callable[..., Any]]:
        """The ``service`` and ``demo`` commands ``terminal`` registers (its constructor does, when
        it is given this API); refused for a terminal the API does not serve."""
        if self.terminal is not terminal:
            raise ServiceError("the service API belongs to another terminal")

        def service(words: Sequence[str] = ()) -> Any:
            return self.handle(words)

        def demo(words: Sequence[str] = ()) -> Any:
            return self.demo_command(words)

        return {"service": service, "demo": demo}

    # --- the session (firmware/cabinet/service/sessions.py) ------------------------------------
    @property
    def session(self) -> Session | None:
        return self.sessions.session

    @property
    def session_timeout_s(self) -> float:
        return self.sessions.session_timeout_s

    @property
    def lockout_attempts(self) -> int:
        return self.sessions.lockout_attempts

    @property
    def lockout_s(self) -> float:
        return self.sessions.lockout_s

    def login(self, role: str, pin: str) -> dict[str, Any]:
        """Open a session for ``role`` (replacing any other), or refuse and log why."""
        return self.sessions.login(role, pin)

    def logout(self) -> dict[str, Any]:
        return self.sessions.logout()

    def expire(self) -> None:
        """End the session if it has been idle for ``session_timeout_s`` (logged)."""
        self.sessions.expire()

    def session_info(self) -> dict[str, Any]:
        info = self.sessions.info()
        if self.session is not None:
            info["demo"] = self.demo.active
        return info

    def _session_ending(self, session: Session) -> None:
        """Ending a session ends the demo mode (logged)."""
        if self.demo.active:
            summary = self.demo.stop()
            log_action(self.ledger, session.role, "demo stop", "ok",
                       f"session ended; {summary['rounds']} demo rounds")

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
        if name not in ACTION_BY_NAME:
            role = self.sessions.role
            refuse(self.ledger, role, verb[:40], f"unknown service function {verb!r}; "
                                                 f"{_yours(role)} (service help)")
        return self.perform(name, words[len(name.split()):])

    def help(self) -> dict[str, Any]:
        """The functions (all of them, and those the current role may use)."""
        role = self.sessions.role
        return {"role": role,
                "session": ["login ROLE PIN", "logout", "session"],
                "yours": [f"{a.name} {a.usage}".strip() for a in allowed(role)],
                "actions": permission_table()}

    def perform(self, name: str, args: Sequence[str] = ()) -> Any:
        """Run action ``name`` of :data:`ACTIONS` with ``args`` for the current session's role:
        refused (logged, nothing changed) unless the role and the cabinet state allow it."""
        self.expire()
        action = ACTION_BY_NAME.get(name)
        role = self.sessions.role
        if action is None:
            refuse(self.ledger, role, name[:40], f"unknown service function {name!r}; {_yours(role)}")
        if role is None:
            ended = self.sessions.ended
            refuse(self.ledger, None, name, f"{ended + ': ' if ended else ''}log in first: "
                                            "service login ROLE PIN")
        if role not in action.roles:
            roles = ", ".join(r for r in ROLES if r in action.roles)
            refuse(self.ledger, role, name, f"the {role} role may not use {name} (allowed: {roles})")
        if action.kind in ("device", "config"):
            why = change_blocked(self.terminal)
            if why is not None:
                refuse(self.ledger, role, name, f"{name} needs the technician key (SERVICE) or an idle "
                                                f"cabinet with no credits: {why}")
        self.sessions.touch()
        try:
            result, detail = action.handler(self, list(args))
        except CriticalMemoryError:
            raise                                   # nothing can be recorded: the terminal stops
        except (EgmError, DeviceError, ValueError, TypeError) as exc:
            refuse(self.ledger, role, name, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        if detail is not None:                      # None: the handler logged it itself
            log_action(self.ledger, role, name, "ok", detail)
        return result

    # --- what the runner and the other actions ask -----------------------------------------------
    def set_software_result(self, result: Mapping[str, Any]) -> None:
        """What the power-up software verification found (the runner calls this after the self-test)."""
        self.software_verification = {**dict(result), "recorded_at": time.time()}

    def profile(self) -> Profile:
        """The jurisdiction profile ``config set`` checks against (loaded once)."""
        if self._profile is None:
            from firmware.math.profile import load_profile

            self._profile = load_profile(self.terminal.cfg.math.profile)
        return self._profile

    setting_name = staticmethod(config_actions.setting_name)

    def plan_options(self, cfg: Config, game: str, change: Mapping[str, Any]) -> tuple[Any, dict[str, Any], list[Any]]:
        """``cfg`` with ``change`` merged into ``game``'s options (see
        :func:`~firmware.cabinet.service.config_actions.plan_options`). Changes nothing."""
        return config_actions.plan_options(self, cfg, game, change)

    def apply_stored_config(self) -> list[str]:
        """Use the game options a technician stored (``config set``) over the configuration file's:
        at start-up (the composition root calls it). Returns the games changed."""
        return config_actions.apply_stored_config(self)

    # --- the demo mode (firmware/cabinet/demo.py) ------------------------------------------------
    def check_demo(self) -> None:
        """End the demo mode (logged) if real credits or a round appeared since it started."""
        if self.demo.active and (why := self.demo.blocked()) is not None:
            self.demo.stop()
            log_action(self.ledger, self.sessions.role, "demo stop", "ok", f"ended: {why}")

    def demo_command(self, words: Sequence[str] = ()) -> Any:
        """The ``demo`` command: no words (or ``status``) shows the demo state to anyone;
        ``start``/``play``/``stop`` are the technician's service actions."""
        words = list(words)
        if not words or words == ["status"]:
            self.check_demo()
            return self.demo.status()
        return self.handle(["demo", *words])


def _yours(role: str | None) -> str:
    if role is None:
        return "log in first: service login ROLE PIN"
    return "the " + role + " role may use: " + ", ".join(a.name for a in allowed(role))


def _demo_credits(cfg: object) -> int:
    service = getattr(cfg, "service", None)
    return getattr(service, "demo_credits", 10_000)
