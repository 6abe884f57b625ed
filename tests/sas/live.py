"""``egm run --sim --headless --sas pty`` as a process, for the live SAS tests and the benchmark."""

from __future__ import annotations

import contextlib
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from firmware.cabinet.control import ControlError, request

#: A terminal without the embedded host (faster to start; SAS needs none) and SAS meters in
#: credits of 5 cents on a 1-cent terminal, so the tests see the conversion.
CONFIG = """
[host]
enabled = false

[sas]
accounting_denom_cents = 5
"""


def config_file(tmp_path: Path, extra: str = "") -> Path:
    """The tests' configuration, with ``extra`` lines in its ``[sas]`` section."""
    path = tmp_path / "egm.toml"
    path.write_text(CONFIG + extra)
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

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.communicate(timeout=30)

    def kill(self) -> None:
        """SIGKILL: the power goes, no power_down (does nothing to a terminal that is gone)."""
        if self.proc.poll() is None:
            self.proc.kill()
        if self.proc.stdout is not None and not self.proc.stdout.closed:     # not reaped by stop()
            self.proc.communicate()

    def restarted(self) -> Running:
        """Kill this terminal (if it still runs) and start it again on the same state dir and
        configuration, up as :func:`start` leaves it (a new SAS pty)."""
        assert self._launch is not None, "started without a way to start it again"
        self.kill()
        return self._launch()


def start(tmp_path: Path, *args: str, state: str | None = "IDLE", sas: str = "") -> Running:
    """``egm run --sim --headless --sas pty`` on ``tmp_path/state`` (and the test's config), up
    and in ``state`` (None: any, e.g. under autoplay), ``sas`` lines added to its ``[sas]``
    configuration; killed and reaped if it does not come up."""
    state_dir = tmp_path / "state"
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--sas", "pty",
                             "--config", str(config_file(tmp_path, sas)), "--state-dir", str(state_dir), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    terminal = Running(proc, state_dir, lambda: start(tmp_path, *args, state=state, sas=sas))
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
def running(tmp_path: Path, *args: str, state: str | None = "IDLE", sas: str = "") -> Iterator[Running]:
    """:func:`start`, killed and reaped if the block leaves it running."""
    terminal = start(tmp_path, *args, state=state, sas=sas)
    try:
        yield terminal
    finally:
        terminal.kill()
