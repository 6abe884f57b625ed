"""The host's game packages: a depot of verified packages and the HTTPS server terminals fetch from.

``egm host offer-package TERMINAL FILE`` checks the package exactly as a terminal will (the code
signer's certificate against the casino CA and CRL, the signature, every file), copies it into the
depot (``<state-dir>/packages/<sha256>.egmpkg``) and queues a ``package_offer`` for the terminal.
The running ``egm host serve`` sends the offer with the URL of its :class:`PackageServer`, which
serves ``GET /packages/<sha256>.egmpkg`` over TLS with the host's certificate and *requires* a client
certificate of the casino CA (a terminal's). Nothing else is served. The package's integrity does not
rest on this channel: the terminal checks the offered SHA-256 and the code signature itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from egmproto import package_format as pf
from egmproto.tls import ContextFollowingCrl

log = logging.getLogger("egm.host.packages")

_PATH = re.compile(r"/packages/([0-9a-f]{64})\.egmpkg\Z")


class PackageDepot:
    """Verified packages by SHA-256 in one directory."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)

    def add(self, data: bytes, check_signer: Any, accept_options: Any) -> pf.Package:
        """Verify ``data`` (:class:`PackageRejected` if it does not verify) and keep it;
        ``accept_options(game, table)``: the firmware's games (the host knows none), see
        ``Package.checked_options``."""
        package = pf.load(data, check_signer)
        package.checked_options(accept_options)   # options.toml, each table accepted by its game
        self.dir.mkdir(parents=True, exist_ok=True)
        target = self.path(package.sha256)
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
        return package

    def path(self, sha256: str) -> Path:
        return self.dir / f"{sha256}{pf.SUFFIX}"


class PackageServer:
    """HTTPS (client certificates required) for the depot's packages, on a thread."""

    def __init__(self, depot: PackageDepot, host: str, port: int, *, tls: tuple[Path, Path, Path],
                 crl: Path | None = None, public_host: str | None = None) -> None:
        self.tls = ContextFollowingCrl(*tls, crl=crl)
        self.tls.context()                     # a bad certificate, key, CA or CRL fails here, at start
        self.depot = depot
        self.httpd = _TlsServer((host, port), _handler(depot), self.tls)
        self.httpd.daemon_threads = True
        self.public_host = public_host or host
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"https://{self.public_host}:{self.port}/packages/"

    def url(self, sha256: str) -> str:
        return f"{self.base_url}{sha256}{pf.SUFFIX}"

    def start(self) -> PackageServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="egm-host-packages", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _TlsServer(ThreadingHTTPServer):
    """Each accepted connection wrapped with the context of the moment (the CRL may have changed)."""

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 tls: ContextFollowingCrl) -> None:
        self.tls = tls
        super().__init__(address, handler)

    def get_request(self) -> tuple[Any, Any]:
        sock, address = super().get_request()
        try:
            return self.tls.context().wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address
        except Exception:
            sock.close()
            raise


def _handler(depot: PackageDepot) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "egm-host"
        sys_version = ""
        timeout = 30

        def handle(self) -> None:
            try:                              # the TLS handshake here, so a bad client fails alone
                self.connection.do_handshake()  # type: ignore[attr-defined]
            except (ssl.SSLError, OSError) as exc:
                log.info("package download refused at TLS: %s", exc)
                return
            super().handle()

        def do_GET(self) -> None:               # noqa: N802 - the http.server hook's name
            match = _PATH.fullmatch(self.path)
            path = depot.path(match.group(1)) if match else None
            if path is None or not path.is_file():
                self.send_error(404)
                return
            data = path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            log.info("%s %s", self.address_string(), format % args)

    return Handler
