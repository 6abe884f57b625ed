"""The running terminal's control socket: how ``egm simctl`` (and tests) reach it.

A Unix stream socket at ``<state-dir>/control.sock`` (mode 0600: only the terminal's own user),
one JSON object per line each way. A request is ``{"op": NAME, "args": {...}}``; the answer is
``{"ok": true, "result": ...}`` or ``{"ok": false, "error": "one clear line"}``. Every request is
validated against its op's schema (:mod:`firmware.cabinet.control_schema`) before anything is done:
malformed or hostile input gets an error answer and changes nothing; the terminal goes on, and
every request is answered.

``status`` and ``wait`` are answered from the terminal's published snapshot without disturbing
it, ``screenshot`` by the screens (:meth:`Terminal.screenshot`: a copy of the window's frame, or,
headless, the published status drawn off screen), never on the terminal's thread; every other op runs on the terminal's own thread (:meth:`Terminal.submit`), in order with the
device events, and is answered once a snapshot published after it ran is out (``published``
moved on), so that a ``status`` or ``wait`` sent after its answer sees what it did (``cashout``
then ``wait IDLE`` waits for the ticket, not for the snapshot taken before the cash-out).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

from firmware.cabinet.control_schema import RequestError, validate
from firmware.errors import EgmError

log = logging.getLogger(__name__)

SOCKET_NAME = "control.sock"
MAX_LINE = 64 * 1024
#: How long an op's answer waits for the snapshot that shows it (the loop publishes each step).
PUBLISH_WAIT = 5.0


class ControlError(EgmError):
    """The terminal could not be reached or refused the request."""


def socket_path(state_dir: str | Path) -> Path:
    return Path(state_dir) / SOCKET_NAME


#: A Unix socket's address holds at most 107 bytes (``sun_path``); longer state dirs are reached
#: through their directory's descriptor.
MAX_SOCKET_ADDRESS = 100


@contextlib.contextmanager
def socket_address(path: Path) -> Iterator[str]:
    """An address ``bind``/``connect`` accept for the socket file ``path``: the path itself, or for a
    path too long for a Unix socket address (a deep state dir, a lab's report folder),
    ``/proc/self/fd/N/control.sock`` through an open descriptor of its directory (Linux), which
    names the same file."""
    if len(os.fsencode(path)) <= MAX_SOCKET_ADDRESS:
        yield str(path)
        return
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        server: ControlServer = self.server.control  # type: ignore[attr-defined]
        while True:
            line = self.rfile.readline(MAX_LINE + 1)
            if not line:
                return
            answer = server.answer(line)
            try:
                self.wfile.write((json.dumps(answer, default=str) + "\n").encode("utf-8"))
            except OSError:
                return


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class ControlServer:
    """Serves ``terminal`` on ``path`` in a thread; ``command_timeout`` bounds one op."""

    def __init__(self, terminal: Any, path: str | Path, *, command_timeout: float = 60.0) -> None:
        self.terminal = terminal
        self.path = Path(path)
        self.command_timeout = command_timeout
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        old = os.umask(0o177)
        try:
            with socket_address(self.path) as address:
                self._server = _Server(address, _Handler)
        finally:
            os.umask(old)
        self._server.control = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, name="egm-control", daemon=True)

    def start(self) -> ControlServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def answer(self, line: bytes) -> dict[str, Any]:
        if len(line) > MAX_LINE:
            return {"ok": False, "error": f"request longer than {MAX_LINE} bytes"}
        try:
            request = json.loads(line)
        except (ValueError, UnicodeDecodeError) as exc:
            return {"ok": False, "error": f"not a JSON request: {exc}"}
        except RecursionError:
            return {"ok": False, "error": "not a JSON request: nested too deeply"}
        if not isinstance(request, dict) or set(request) - {"op", "args"} or "op" not in request:
            return {"ok": False, "error": 'a request is {"op": NAME, "args": {...}}'}
        try:
            op, args = validate(request["op"], request.get("args", {}))
        except RequestError as exc:
            return {"ok": False, "error": str(exc)}
        try:
            return {"ok": True, "result": self._run(op, args)}
        except (EgmError, ValueError, TypeError) as exc:
            return {"ok": False, "error": str(exc)}
        except FutureTimeout:
            return {"ok": False, "error": f"the terminal did not answer within {self.command_timeout} s"}
        except Exception as exc:                  # never kill the server thread
            log.exception("control: %s failed", request["op"])
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    def _run(self, op: str, args: dict[str, Any]) -> Any:
        terminal = self.terminal
        if op == "status":
            return terminal.snapshot
        if op == "wait":
            return self._wait(**args)
        if op == "stop":
            terminal.stop()
            return {"stopping": True}
        if op == "screenshot":                    # drawn off the terminal's thread: see Terminal.screenshot
            return terminal.screenshot(**args)
        result = terminal.submit(op, **args).result(self.command_timeout)
        self._published_after(terminal.published)
        return result

    def _published_after(self, seen: int) -> None:
        """Until the terminal publishes a snapshot after ``seen`` (its loop does each step); at
        most :data:`PUBLISH_WAIT` seconds (a terminal that stopped stepping publishes no more)."""
        deadline = time.monotonic() + PUBLISH_WAIT
        while self.terminal.published == seen and time.monotonic() < deadline:
            time.sleep(0.002)

    def _wait(self, state: str | None = None, timeout: float = 10.0, rounds: int | None = None,
              printing: bool | None = None) -> dict[str, Any]:
        """Until the cabinet is in ``state`` (and at least ``rounds`` rounds were played, and a
        ticket is or is not printing), or ``timeout`` seconds: then an error."""
        if not isinstance(timeout, int | float) or not 0 < timeout <= 600:
            raise ValueError("timeout is 0..600 seconds")
        deadline = time.monotonic() + timeout
        while True:
            snap = self.terminal.snapshot
            if ((state is None or snap.get("state") == state.upper())
                    and (rounds is None or snap.get("rounds_played", 0) >= rounds)
                    and (printing is None or (snap.get("printing") is not None) == printing)):
                return snap
            if time.monotonic() >= deadline:
                raise ControlError(f"waited {timeout} s: the cabinet is {snap.get('state')} "
                                   f"(tilts: {', '.join(t['tilt'] for t in snap.get('tilts', [])) or 'none'})")
            time.sleep(0.02)


def request(state_dir: str | Path, op: str, args: dict[str, Any] | None = None, *,
            timeout: float = 90.0) -> Any:
    """Send one request to the terminal running on ``state_dir``; its result, or ControlError."""
    path = socket_path(state_dir)
    if not path.exists():
        raise ControlError(f"no terminal is running on {state_dir} (no {path.name})")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            with socket_address(path) as address:
                sock.connect(address)
            sock.sendall((json.dumps({"op": op, "args": args or {}}) + "\n").encode("utf-8"))
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError as exc:
            raise ControlError(f"the terminal on {state_dir} did not answer: {exc}") from None
    try:
        answer = json.loads(data)
    except ValueError:
        raise ControlError("the terminal's answer was not JSON") from None
    if not answer.get("ok"):
        raise ControlError(answer.get("error", "refused"))
    return answer.get("result")
