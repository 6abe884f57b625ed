"""``egm run --sim --headless --sas pty`` as a process, for the live SAS tests and the benchmark."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from drivers.sas.exceptions import ExceptionCode
from drivers.sas.host import SasHost
from firmware.cabinet.control import ControlError, request

#: The accounting denomination of :data:`CONFIG` (cents per SAS credit).
DENOM_CENTS = 5
#: A terminal without the embedded host (faster to start; SAS needs none) and SAS meters in
#: credits of 5 cents on a 1-cent terminal, so the tests see the conversion.
CONFIG = f"""
[host]
enabled = false

[sas]
accounting_denom_cents = {DENOM_CENTS}
"""


def config_file(tmp_path: Path, extra: str = "", *, host: bool = False) -> Path:
    """The tests' configuration, with ``extra`` lines in its ``[sas]`` section (``host``: with the
    embedded FIG. 16 host, the default's, running beside SAS)."""
    path = tmp_path / "egm.toml"
    config = CONFIG.replace("[host]\nenabled = false\n", "") if host else CONFIG
    path.write_text(config + extra)
    return path


class Running:
    """A running terminal: its process, its SAS pty, its state dir and what it printed; ``launch``
    starts it again (see :meth:`restarted`)."""

    def __init__(self, proc: subprocess.Popen[str], state_dir: Path,
                 launch: Callable[[], Running] | None = None) -> None:
        self.proc = proc
        self.state_dir = state_dir
        self._launch = launch
        self.lines: queue.Queue[str] = queue.Queue()
        self.printed: list[str] = []
        self.sas = ""
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def wait_for_sas(self, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while not self.sas:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no 'sas:' line within {timeout} s: {self.printed}") from None
            self.printed.append(line)
            if line.startswith("sas: "):
                self.sas = line.split(" ", 1)[1].strip()
        return self.sas

    def control(self, op: str, args: dict[str, Any] | None = None) -> Any:
        return request(self.state_dir, op, args or {})

    def sim(self, *words: str) -> Any:
        return self.control("sim", {"words": list(words)})

    def sim_until(self, *words: str, key: str = "inserted", timeout: float = 20.0) -> Any:
        """``sim`` ``words`` again until its answer's ``key`` is true (a validator busy stacking
        the last item refuses the next one); AssertionError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not (answer := self.sim(*words)).get(key):
            assert time.monotonic() < deadline, f"{' '.join(words)}: still {answer} after {timeout} s"
            time.sleep(0.1)
        return answer

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.communicate(timeout=30)

    def kill(self) -> None:
        """SIGKILL: the power goes, no power_down (does nothing to a terminal that is gone)."""
        if self.proc.poll() is None:
            self.proc.kill()
        if self.proc.stdout is not None and not self.proc.stdout.closed:     # not reaped by stop()
            self.proc.communicate(timeout=30)

    def restarted(self) -> Running:
        """Kill this terminal (if it still runs) and start it again on the same state dir and
        configuration, up as :func:`start` leaves it (a new SAS pty)."""
        assert self._launch is not None, "started without a way to start it again"
        self.kill()
        return self._launch()


def host_on(terminal: Running, address: int = 1) -> SasHost:
    """A host with time to spare: the suite shares the machine with other work (no timing here)."""
    return SasHost(terminal.sas, address, timeout=5.0)


def exceptions_until_quiet(host: SasHost, limit: int = 40) -> list[int]:
    """General polls until the machine reports no activity; what it reported."""
    seen = []
    for _ in range(limit):
        code = host.general_poll()
        assert code is not None, "the machine did not answer a general poll"
        if code == ExceptionCode.NO_ACTIVITY:
            return seen
        seen.append(code)
    raise AssertionError(f"still reporting after {limit} polls: {seen}")


def reported_until(read: Callable[[], list[int]], code: int, timeout: float = 20.0) -> list[int]:
    """``read()`` (a host's general polls until the machine is quiet) again until ``code`` was
    reported; every exception reported."""
    seen: list[int] = []
    deadline = time.monotonic() + timeout
    while code not in seen:
        assert time.monotonic() < deadline, f"no exception 0x{code:02X} within {timeout} s: {seen}"
        seen += read()
        time.sleep(0.05)
    return seen


def exceptions_until(host: SasHost, code: int, timeout: float = 20.0) -> list[int]:
    """General polls until ``code`` was reported and the machine is quiet; every exception reported."""
    return reported_until(lambda: exceptions_until_quiet(host), code, timeout)


def autoplay(tmp_path: Path, rounds: int) -> None:
    """``egm run --sim --headless --autoplay N`` on ``tmp_path/state`` (notes in, rounds, a cash-out
    ticket; SAS off), to the end: the meters a live test then reads."""
    played = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--autoplay",
                             str(rounds), "--config", str(config_file(tmp_path)), "--state-dir",
                             str(tmp_path / "state")], capture_output=True, text=True, timeout=180)
    assert played.returncode == 0, played.stderr


def meters(state_dir: Path) -> dict[str, Any]:
    """``egm meters --json`` of a stopped terminal's state dir."""
    shown = subprocess.run([sys.executable, "-m", "firmware.cli", "meters", "--state-dir", str(state_dir), "--json"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)  # type: ignore[no-any-return]


def start(tmp_path: Path, *args: str, state: str | None = "IDLE", sas: str = "",
          software: Path | None = None, host: bool = False) -> Running:
    """``egm run --sim --headless --sas pty`` on ``tmp_path/state`` (and the test's config), up
    and in ``state`` (None: any, e.g. under autoplay), ``sas`` lines added to its ``[sas]``
    configuration, run from the software installed under ``software`` (a copy of the packages;
    None: this checkout's), with the embedded host if ``host``; killed and reaped if it does not
    come up."""
    state_dir = tmp_path / "state"
    env = None if software is None else {**os.environ, "PYTHONPATH": str(software)}
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--sas", "pty",
                             "--config", str(config_file(tmp_path, sas, host=host)), "--state-dir", str(state_dir),
                             *args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=software, env=env)
    terminal = Running(proc, state_dir,
                       lambda: start(tmp_path, *args, state=state, sas=sas, software=software, host=host))
    try:
        terminal.wait_for_sas()
        deadline = time.monotonic() + 60
        while True:                            # a killed terminal's socket file may still be there
            try:
                terminal.control("wait", {"state": state, "timeout": 60} if state else {"timeout": 60})
                if terminal.control("status").get("sas"):       # published by the loop's first step
                    return terminal
            except ControlError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, terminal.printed
            time.sleep(0.05)
    except BaseException:
        terminal.kill()
        raise


@contextlib.contextmanager
def running(tmp_path: Path, *args: str, state: str | None = "IDLE", sas: str = "",
            software: Path | None = None, host: bool = False) -> Iterator[Running]:
    """:func:`start`, killed and reaped if the block leaves it running."""
    terminal = start(tmp_path, *args, state=state, sas=sas, software=software, host=host)
    try:
        yield terminal
    finally:
        terminal.kill()
