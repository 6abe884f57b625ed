"""A stand-in for systemd's notification socket (sd_notify(3)): a unix datagram socket the tests
bind, whose datagrams are read with the time they arrived."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path


class NotifySocket:
    """``$NOTIFY_SOCKET`` at ``path`` (a filesystem socket) or, ``abstract``, a name in the
    abstract namespace (``@name``). Every datagram's assignments, as (time, dict)."""

    def __init__(self, path: Path, *, abstract: bool = False) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            name = f"egm-test-{path.name}-{id(self)}"
            self.sock.bind("\0" + name)
            self.address = "@" + name
        else:
            self.sock.bind(str(path))
            self.address = str(path)
        self.sock.settimeout(0.05)
        self.messages: list[tuple[float, dict[str, str]]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            fields = dict(line.split("=", 1) for line in data.decode().split("\n") if line)
            with self._lock:
                self.messages.append((time.monotonic(), fields))

    def with_key(self, key: str) -> list[tuple[float, dict[str, str]]]:
        with self._lock:
            return [(t, m) for t, m in self.messages if key in m]

    def wait_for(self, key: str, timeout: float) -> tuple[float, dict[str, str]] | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.with_key(key)
            if found:
                return found[0]
            time.sleep(0.02)
        return None

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()
