"""The terminal under test: the simulated cabinet (:class:`SimTarget`) or a real one
(:class:`CabinetTarget`), behind one synchronous interface (:class:`Target`).

Every method either does what it says or raises :class:`~firmware.hil.errors.TargetError` with one
clear line. The simulated cabinet is ``egm run --sim --headless`` in its own process (started with
this interpreter, ``sys.executable -m firmware.cli``, the environment inherited: a run from a patched
copy of the software tests that copy), its devices driven through the control socket as ``egm
simctl`` does. A real cabinet is reached through its control socket too; what only a person can do
there (a note in the slot, the mains switch) is asked of the operator (:mod:`firmware.hil.operator`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
import tomllib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware.hil.errors import NeedsOperator, TargetError

log = logging.getLogger(__name__)

#: The development PINs (docs/service.md): a target file's ``[cabinet.pins]`` overrides them.
DEFAULT_PINS: dict[str, str] = {"attendant": "1111", "technician": "2222", "auditor": "3333",
                                "regulator": "4444"}
#: Seconds the simulated terminal has to open its control socket and finish starting.
START_TIMEOUT = 60.0
LOG_NAME = "terminal.log"

Prompt = Callable[..., None]


def _request(state_dir: Path, op: str, args: Mapping[str, Any] | None, timeout: float) -> Any:
    from firmware.cabinet.control import ControlError, request

    try:
        return request(state_dir, op, dict(args or {}), timeout=timeout)
    except ControlError as exc:
        raise TargetError(f"{op}: {exc}") from None


class Target(ABC):
    """What a test may ask of the terminal under test (see the module docstring)."""

    kind: str = ""

    def __init__(self, state_dir: Path, config_path: Path | None, *, pins: Mapping[str, str] | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.config_path = config_path
        self.pins = {**DEFAULT_PINS, **dict(pins or {})}
        self._role: str | None = None
        self._missing_ops: set[str] = set()
        #: Asks a person to do something (set by the plugin: ``prompt(instruction, verify=, timeout=)``).
        self.prompt: Prompt | None = None

    # -- the control socket ------------------------------------------------------------------
    def control(self, op: str, args: Mapping[str, Any] | None = None, *, timeout: float = 90.0) -> Any:
        """One control-socket request (``firmware.cabinet.control.request``); its result."""
        return _request(self.state_dir, op, args, timeout)

    def lacks_op(self, op: str) -> bool:
        """Whether the terminal is known not to offer control op ``op`` (it refused it as unknown)."""
        return op in self._missing_ops

    def note_missing_op(self, op: str) -> None:
        self._missing_ops.add(op)

    def status(self) -> dict[str, Any]:
        result: dict[str, Any] = self.control("status")
        return result

    def wait(self, state: str | None = None, timeout: float = 30, rounds: int | None = None) -> dict[str, Any]:
        """Until the cabinet is in ``state`` (and ``rounds`` rounds were played); TargetError after ``timeout``."""
        args: dict[str, Any] = {"timeout": timeout}
        if state is not None:
            args["state"] = state
        if rounds is not None:
            args["rounds"] = rounds
        result: dict[str, Any] = self.control("wait", args, timeout=timeout + 30)
        return result

    def is_up(self) -> bool:
        """Whether the terminal answers on its control socket."""
        try:
            self.status()
        except TargetError:
            return False
        return True

    # -- the simulated devices ---------------------------------------------------------------
    def sim(self, *words: str) -> Any:
        """A simulator control (``egm simctl`` words: ``note 20``, ``door open main``...)."""
        raise NeedsOperator(f"sim {' '.join(words)}: only the simulated cabinet has simulator controls; "
                            "on a cabinet a person does it (operator.do)")

    # -- the service API ---------------------------------------------------------------------
    def service(self, *words: str, role: str = "regulator") -> Any:
        """The service API's answer to ``words``, logged in as ``role`` (its PIN from the target's
        configuration, default the development PINs)."""
        if words[:1] in (("login",), ("logout",)):          # the test manages the session itself
            self._role = None
            return self.control("service", {"words": list(words)})
        if role not in self.pins:
            raise TargetError(f"no PIN for the service role {role!r}")
        if self._role != role:
            self._login(role)
        try:
            return self.control("service", {"words": list(words)})
        except TargetError as exc:
            message = str(exc)
            # the session ended (time-out, a power cut) or another role logged in meanwhile
            if "log in first" not in message and not (
                    "role may not use" in message and f"the {role} role" not in message):
                raise
        self._login(role)
        return self.control("service", {"words": list(words)})

    def _login(self, role: str) -> None:
        self._role = None
        self.control("service", {"words": ["login", role, self.pins[role]]})
        self._role = role

    def meters(self) -> dict[str, Any]:
        """Every meter and the credits (the service ``meters`` answer)."""
        result: dict[str, Any] = self.service("meters")
        return result

    def events(self, last: int = 50) -> list[dict[str, Any]]:
        """The last ``last`` events of the event log, newest first."""
        result: list[dict[str, Any]] = self.service("events", str(last))["events"]
        return result

    def recall(self, n: int = 10) -> list[dict[str, Any]]:
        """The last ``n`` rounds, newest first."""
        answer = self.service("recall", str(n))
        result: list[dict[str, Any]] = answer["rounds"] if isinstance(answer, dict) and "rounds" in answer else answer
        return result

    def software_signature(self, alg: str = "sha256", seed: str | None = None) -> dict[str, Any]:
        """The terminal's software identity: the service ``software hash ALG [SEED]`` answer
        (``overall``, ``files``) with the power-up verification's verdict (``verification``)."""
        answer: dict[str, Any] = self.service("software", "hash", alg, *([seed] if seed else []))
        verdict = self.service("software")
        return {**answer, "verification": verdict.get("verification") if isinstance(verdict, dict) else verdict}

    # -- the player's controls ---------------------------------------------------------------
    def play(self, wagers: Mapping[Any, Mapping[str, int]] | None = None) -> dict[str, Any]:
        """Start a round (the DEAL button), ``wagers`` by seat or the automatic ones."""
        args = {"wagers": {str(s): dict(b) for s, b in wagers.items()}} if wagers else {}
        result: dict[str, Any] = self.control("play", args)
        return result

    def play_rounds(self, n: int, *, timeout: float = 60) -> dict[str, Any]:
        """Play ``n`` rounds at the current bet, each to its end (automatic decisions)."""
        snap = self.status()
        for _ in range(n):
            played = snap.get("rounds_played", 0)
            self.play()
            snap = self._finish_round(played + 1, timeout)
        return snap

    def _finish_round(self, rounds: int, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            snap = self.status()
            if snap.get("rounds_played", 0) >= rounds and snap.get("round") is None:
                return snap
            for seat, action in _pending_decisions(snap):
                with contextlib.suppress(TargetError):
                    self.control("decide", {"seat": seat, "action": action})
            if time.monotonic() >= deadline:
                raise TargetError(f"round {rounds} did not finish within {timeout} s "
                                  f"(the cabinet is {snap.get('state')})")
            time.sleep(0.05)

    def cashout(self, *, timeout: float = 60) -> dict[str, Any]:
        """Cash out (a ticket) and wait until the ticket is printed."""
        self.control("cashout")
        result: dict[str, Any] = self.control("wait", {"timeout": timeout, "printing": False}, timeout=timeout + 30)
        return result

    @abstractmethod
    def insert_note(self, dollars: int, *, timeout: float = 30) -> dict[str, Any]:
        """A $``dollars`` note in the validator, credited; the status after it."""

    # -- power --------------------------------------------------------------------------------
    @abstractmethod
    def power_cut(self) -> None:
        """The power goes (no clean shutdown)."""

    @abstractmethod
    def power_on(self) -> None:
        """The power comes back; the terminal is up."""

    def restart(self) -> None:
        """A power cut, then power on."""
        self.power_cut()
        self.power_on()

    def start_extra(self, *args: str, config: str | None = None) -> None:
        raise NeedsOperator("start_extra: only the simulated cabinet is started with other arguments")

    def restore(self) -> None:
        """Back to the terminal as the run started it (after :meth:`start_extra`)."""
        return None

    @property
    def extra(self) -> bool:
        """Whether the terminal runs with :meth:`start_extra` arguments."""
        return False

    # -- evidence -----------------------------------------------------------------------------
    def screenshot(self, path: Path) -> bool:
        """The screen as it is now, as a PNG at ``path`` (control op ``screenshot``: ``png_base64``):
        True; False when the terminal has no such op (nothing written)."""
        import base64
        import binascii

        if self.lacks_op("screenshot"):
            return False
        try:
            answer = self.control("screenshot")
        except TargetError as exc:
            if "unknown op" in str(exc):
                self.note_missing_op("screenshot")
                return False
            raise
        data = answer.get("png_base64") if isinstance(answer, dict) else None
        if not isinstance(data, str):
            raise TargetError("screenshot: the answer holds no png_base64")
        try:
            png = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise TargetError("screenshot: png_base64 is not base64") from None
        if not png.startswith(b"\x89PNG\r\n\x1a\n"):
            raise TargetError("screenshot: the answer is not a PNG")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
        return True

    def log_lines(self) -> list[str]:
        """The terminal's log so far (a test's excerpt is the lines after its start's length)."""
        return []

    @property
    def has_log(self) -> bool:
        """Whether :meth:`log_lines` is the terminal's log (the suite started the terminal)."""
        return True

    def close(self) -> None:
        """End of the run: stop what the run started."""
        return None


def _pending_decisions(snap: Mapping[str, Any]) -> list[tuple[int, str]]:
    """``(seat, action)`` for each decision the open round waits for (the status's
    ``round.pending``): its ``hint`` (the house way) when that is one of its actions, else the first."""
    rnd = snap.get("round")
    if not isinstance(rnd, Mapping):
        return []
    out = []
    for p in rnd.get("pending") or []:
        if isinstance(p, Mapping) and "seat" in p:
            actions = [str(a) for a in p.get("actions") or []]
            hint = p.get("hint")
            action = hint if isinstance(hint, str) and hint in actions else (actions[0] if actions else None)
            if action:
                out.append((int(p["seat"]), action))
    return out


@dataclass
class _Process:
    proc: subprocess.Popen[bytes]
    args: list[str] = field(default_factory=list)


class SimTarget(Target):
    """The simulated cabinet: ``egm run --sim --headless`` on a fresh state folder in ``workdir``
    (``config_text``: its configuration; ``software``: a folder holding a copy of the packages to run
    instead of the installed ones)."""

    kind = "sim"

    def __init__(self, workdir: Path, *, config_text: str = "", software: Path | None = None) -> None:
        workdir = Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        config = workdir / "egm.toml"
        if not config.exists():
            config.write_text(config_text or "# egm hil: the simulated cabinet runs the built-in configuration\n",
                              encoding="utf-8")
        super().__init__(workdir / "state", config)
        self.workdir = workdir
        #: Run the software installed under this folder (a copy of the packages) instead of this one's.
        self.software = Path(software) if software is not None else None
        self.log_path = workdir / LOG_NAME
        self._process: _Process | None = None
        self._extra_args: list[str] = []
        self._extra_config: Path | None = None

    @property
    def extra(self) -> bool:
        return bool(self._extra_args or self._extra_config)

    def _command(self) -> list[str]:
        config = self._extra_config or self.config_path
        return [sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless",
                "--state-dir", str(self.state_dir), "--config", str(config), *self._extra_args]

    def running(self) -> bool:
        return self._process is not None and self._process.proc.poll() is None

    def power_on(self, *, wait_started: bool = True) -> None:
        """Start the terminal (again) on the same state folder and configuration."""
        if self.running():
            raise TargetError("power on: the terminal is already running")
        self.state_dir.mkdir(parents=True, exist_ok=True)
        cmd = self._command()
        with self.log_path.open("ab") as out:
            out.write(f"--- egm hil: {' '.join(cmd[1:])}\n".encode())
            out.flush()
            env = {**os.environ, "PYTHONUNBUFFERED": "1"}
            if self.software is not None:
                env["PYTHONPATH"] = str(self.software)
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    env=env, cwd=self.software, start_new_session=True)
        self._process = _Process(proc, cmd)
        self._role = None
        log.info("sim terminal started (pid %d)", proc.pid)
        if wait_started:
            self.wait_started()

    def wait_started(self, timeout: float = START_TIMEOUT) -> dict[str, Any]:
        """Until the terminal answers and has finished starting; TargetError if it exits first."""
        deadline = time.monotonic() + timeout
        while True:
            if self._process is not None and self._process.proc.poll() is not None:
                raise TargetError(f"the terminal exited with status {self._process.proc.returncode} "
                                  f"while starting: {self._log_tail()}")
            with contextlib.suppress(TargetError):
                snap = self.status()
                if snap.get("state") and not snap.get("starting"):
                    return snap
            if time.monotonic() >= deadline:
                raise TargetError(f"the terminal did not start within {timeout} s: {self._log_tail()}")
            time.sleep(0.1)

    def _log_tail(self, lines: int = 3) -> str:
        tail = [line for line in self.log_lines()[-lines:] if line.strip()]
        return " | ".join(tail) or "(nothing logged)"

    def power_cut(self) -> None:
        """SIGKILL of the terminal's process: no clean shutdown, as a power cut."""
        if self._process is None or self._process.proc.poll() is not None:
            return
        proc = self._process.proc
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        self._role = None

    def stop(self) -> None:
        """A clean stop (``stop`` op), then SIGKILL if it does not end within 20 s."""
        if not self.running():
            return
        assert self._process is not None
        with contextlib.suppress(TargetError):
            self.control("stop", timeout=10)
        try:
            self._process.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.power_cut()

    def sim(self, *words: str) -> Any:
        return self.control("sim", {"words": list(words)})

    def insert_note(self, dollars: int, *, timeout: float = 30) -> dict[str, Any]:
        """``sim note D`` (again while the validator is busy), then until the credits rose by it."""
        before = self.status()["credits_cents"]
        deadline = time.monotonic() + timeout
        while not self.sim("note", str(dollars)).get("inserted"):
            if time.monotonic() >= deadline:
                raise TargetError(f"the validator did not take a ${dollars} note within {timeout} s")
            time.sleep(0.1)
        while True:
            snap = self.status()
            if snap["credits_cents"] >= before + dollars * 100:
                return snap
            if time.monotonic() >= deadline:
                raise TargetError(f"${dollars} was not credited within {timeout} s "
                                  f"(credits {snap['credits_cents']} cents, before {before})")
            time.sleep(0.05)

    def start_extra(self, *args: str, config: str | None = None) -> None:
        """Restart the terminal with extra ``egm run`` arguments and/or extra configuration
        (TOML text added after the run's configuration); :meth:`restore` returns to the default."""
        self.power_cut()
        self._extra_args = list(args)
        self._extra_config = None
        if config is not None:
            base = self.config_path.read_text(encoding="utf-8") if self.config_path else ""
            self._extra_config = self.workdir / "egm-extra.toml"
            self._extra_config.write_text(base + "\n" + config, encoding="utf-8")
        self.power_on()

    def restore(self) -> None:
        if not self.extra and self.running():
            return
        self.power_cut()
        self._extra_args, self._extra_config = [], None
        self.power_on()

    def log_lines(self) -> list[str]:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []

    def close(self) -> None:
        self.stop()


class CabinetTarget(Target):
    """A real cabinet, described by a target file (:func:`load_target_file`)."""

    kind = "cabinet"

    def __init__(self, state_dir: Path, config_path: Path | None, *, start: bool = False,
                 operator: str = "", pins: Mapping[str, str] | None = None, source: str = "") -> None:
        super().__init__(state_dir, config_path, pins=pins)
        self.start = start
        self.operator = operator
        self.source = source
        self._process: subprocess.Popen[bytes] | None = None
        #: Where the log of a terminal the suite starts goes (``make_target``: the report folder).
        self.log_path = Path(state_dir).parent / "hil-terminal.log"

    def _ask(self, instruction: str, verify: Callable[[], bool] | None, timeout: float | None = None) -> None:
        if self.prompt is None:
            raise NeedsOperator(f"{instruction}: nobody to ask (no operator console)")
        self.prompt(instruction, verify=verify, timeout=timeout)

    def power_on(self) -> None:
        """``start = true``: start ``egm run`` (once) and wait for its self-test; otherwise (or when
        the terminal is not up) ask the operator to switch the cabinet on."""
        if self.start and (self._process is None or self._process.poll() is not None):
            cmd = [sys.executable, "-m", "firmware.cli", "run", "--state-dir", str(self.state_dir),
                   *(["--config", str(self.config_path)] if self.config_path else [])]
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("ab") as out:
                self._process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                                 stderr=subprocess.STDOUT, start_new_session=True)
            deadline = time.monotonic() + START_TIMEOUT
            while not self._started():
                if self._process.poll() is not None:
                    tail = " | ".join(self.log_lines()[-3:]) or "(nothing logged)"
                    raise TargetError(f"egm run exited with status {self._process.returncode}: {tail}")
                if time.monotonic() >= deadline:
                    raise TargetError(f"egm run did not finish starting within {START_TIMEOUT:g} s")
                time.sleep(0.1)
        if not self._started():
            self._ask("switch the cabinet on at the mains and wait for the attract screen", self._started)
        self._role = None

    def _started(self) -> bool:
        """Up, and done starting (the power-up self-test over)."""
        try:
            snap = self.status()
        except TargetError:
            return False
        return bool(snap.get("state")) and not snap.get("starting")

    def power_cut(self) -> None:
        self._ask("switch the cabinet off at the mains", lambda: not self.is_up())
        self._role = None

    def insert_note(self, dollars: int, *, timeout: float = 30) -> dict[str, Any]:
        before = self.status()["credits_cents"]
        self._ask(f"insert a ${dollars} note", lambda: self.status()["credits_cents"] >= before + dollars * 100)
        return self.status()

    def log_lines(self) -> list[str]:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []

    @property
    def has_log(self) -> bool:
        return self.start

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            with contextlib.suppress(TargetError):
                self.control("stop", timeout=10)
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()


_CABINET_KEYS = {"state_dir", "config", "start", "operator", "pins"}


def load_target_file(path: Path) -> CabinetTarget:
    """The cabinet described by ``path`` (``[cabinet] state_dir, config, start, operator``,
    ``[cabinet.pins]``); HilError naming what is wrong."""
    from firmware.hil.errors import HilError, read_text

    text = read_text(path, "target file")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HilError(f"target file {path} is not TOML: {exc}") from None
    cab = doc.get("cabinet")
    if not isinstance(cab, dict) or set(doc) != {"cabinet"}:
        raise HilError(f"target file {path}: expected one [cabinet] table (state_dir, config, start, operator, "
                       f"[cabinet.pins]), found {', '.join(sorted(doc)) or 'nothing'}")
    unknown = set(cab) - _CABINET_KEYS
    if unknown:
        raise HilError(f"target file {path}: unknown key(s) in [cabinet]: {', '.join(sorted(unknown))}")
    state_dir = cab.get("state_dir")
    if not isinstance(state_dir, str) or not state_dir:
        raise HilError(f"target file {path}: [cabinet] state_dir (the running terminal's folder) is required")
    config = cab.get("config")
    if config is not None and not isinstance(config, str):
        raise HilError(f"target file {path}: [cabinet] config is a path (its egm.toml)")
    start = cab.get("start", False)
    if not isinstance(start, bool):
        raise HilError(f"target file {path}: [cabinet] start is true or false")
    operator = cab.get("operator", "")
    if not isinstance(operator, str):
        raise HilError(f"target file {path}: [cabinet] operator is a name")
    pins = cab.get("pins", {})
    if not isinstance(pins, dict) or not all(
            r in DEFAULT_PINS and isinstance(p, str) and p.isdigit() and 4 <= len(p) <= 12 for r, p in pins.items()):
        raise HilError(f"target file {path}: [cabinet.pins] maps roles ({', '.join(DEFAULT_PINS)}) "
                       "to PINs of 4 to 12 digits")
    base = path.parent
    state = (base / state_dir).resolve()
    if not state.is_dir():
        raise HilError(f"target file {path}: state_dir {state} is not a folder")
    config_path = (base / config).resolve() if config else None
    if config_path is not None and not config_path.is_file():
        raise HilError(f"target file {path}: config {config_path} does not exist")
    return CabinetTarget(state, config_path, start=start, operator=operator, pins=pins, source=str(path))


def make_target(spec: str, workdir: Path) -> Target:
    """``sim`` (the simulated cabinet in ``workdir``) or the path of a cabinet target file (the log
    of a terminal it starts goes to ``workdir``)."""
    if spec == "sim":
        return SimTarget(workdir)
    target = load_target_file(Path(spec))
    workdir.mkdir(parents=True, exist_ok=True)
    target.log_path = workdir / LOG_NAME
    return target

