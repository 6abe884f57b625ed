"""The floor page over HTTPS in a thread of the host process: uvicorn, the host's certificate from
its PKI, and the session secret kept in the state directory (docs/floor-web.md, "TLS" and "Sessions")."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import stat
import threading
import time
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from host.store import HostStore
from host.store_errors import HostStoreError
from host.web.app import create_app
from host.web.floor_state import Thresholds

log = logging.getLogger(__name__)

SECRET_FILE = "web-session.key"


def session_secret(state_dir: Path) -> str:
    """The key that signs the session cookies: ``<state-dir>/web-session.key``, made (0600) on first
    use; refused if anyone but its owner may read it. A new key logs everyone out."""
    path = Path(state_dir) / SECRET_FILE
    with contextlib.suppress(FileExistsError):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, (secrets.token_urlsafe(48) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise HostStoreError(f"{path} may be read by others (mode {stat.filemode(mode)}): chmod 600 it")
    secret = path.read_text().strip()
    if len(secret) < 32:
        raise HostStoreError(f"{path} holds no usable key (under 32 characters): remove it to make a new one")
    return secret


def parse_bind(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8443`` for IPv6) -> (host, port); ValueError if it is not one."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--web {text!r}: expected HOST:PORT (port 0-65535; 0: any free port)")
    return host, int(port)


class WebServer:
    """uvicorn serving ``app`` over TLS on a socket bound by us (so port 0 works and the real port
    is known before the first request)."""

    def __init__(self, app: FastAPI, host: str, port: int, certfile: Path, keyfile: Path) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind((host, port))
        except OSError as exc:
            self._sock.close()
            raise HostStoreError(f"the floor page cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        self.host, self.port = host, self._sock.getsockname()[1]
        config = uvicorn.Config(app, ssl_certfile=str(certfile), ssl_keyfile=str(keyfile), log_level="warning",
                                access_log=False, lifespan="off", server_header=False, proxy_headers=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name="floor-web", daemon=True)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}/"

    def start(self, timeout: float = 15.0) -> WebServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self._sock.close()
                raise HostStoreError(f"the floor page did not start on {self.url}")
            time.sleep(0.02)
        log.info("floor page on %s", self.url)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()


def start_web(stack: contextlib.ExitStack, *, store: HostStore, state_dir: Path, pki: Path, cert_name: str,
              bind: str, offline_after_s: float | None = None) -> WebServer:
    """The floor page on ``bind`` with the PKI's certificate ``cert_name`` (``issued/NAME.cert.pem``
    and its key); ``stack`` stops it."""
    try:
        host, port = parse_bind(bind)
    except ValueError as exc:
        raise HostStoreError(str(exc)) from None
    cert, key = pki / "issued" / f"{cert_name}.cert.pem", pki / "issued" / f"{cert_name}.key.pem"
    for path in (cert, key):
        if not path.is_file():
            raise HostStoreError(f"the floor page's certificate {path} is missing (egm certs issue --dir {pki} --kind host --name {cert_name})")
    limits = Thresholds() if offline_after_s is None else Thresholds(offline_after_s=offline_after_s)
    app = create_app(store, secret_key=session_secret(state_dir), thresholds=limits)
    server = WebServer(app, host, port, cert, key).start()
    stack.callback(server.stop)
    return server
