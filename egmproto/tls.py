"""The TLS contexts of the product's servers (the embedded MQTT broker, the host's package server):
TLS 1.2 or newer, client certificates required and chained to the casino CA, checked against the
CRL, which is followed while the server runs (:class:`ContextFollowingCrl`)."""

from __future__ import annotations

import logging
import ssl
import threading
from pathlib import Path
from typing import Any

from egmproto.errors import HostLinkError

log = logging.getLogger(__name__)


class TlsSetupError(HostLinkError):
    """A server's certificate, key, CA or CRL cannot be loaded."""


def server_context(cert: Path, key: Path, ca: Path, crl: Path | None = None) -> ssl.SSLContext:
    """A server-side SSL context: TLS 1.2 or newer, client certificates required and chained to
    ``ca`` (and not revoked by ``crl``, when given)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(str(cert), str(key))
        ctx.load_verify_locations(cafile=str(ca))
        if crl is not None:
            ctx.load_verify_locations(cafile=str(crl))
            ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    except (OSError, ssl.SSLError) as exc:
        raise TlsSetupError(f"TLS: cannot load {cert}, {key}, {ca}: {exc}") from None
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


class ContextFollowingCrl:
    """A server's TLS context (:func:`server_context`), made again whenever the CRL file changes
    (``egm certs revoke`` rewrites it): a terminal revoked while the server runs is refused from its
    next connection, not from the next restart. A CRL that cannot be read keeps the last good
    context (logged). Servers that wrap each connection themselves ask :meth:`context` each time;
    a server that holds one context (asyncio's) installs :meth:`swap` as its ``sni_callback``,
    which hands each handshake the context of the moment before the client's certificate is
    checked."""

    def __init__(self, cert: Path, key: Path, ca: Path, *, crl: Path | None = None) -> None:
        self.files = (cert, key, ca)
        self.crl = Path(crl) if crl is not None else None
        self._stamp: tuple[int, int] | None = None
        self._ctx: ssl.SSLContext | None = None
        self._lock = threading.Lock()

    def _crl_stamp(self) -> tuple[int, int] | None:
        if self.crl is None:
            return None
        try:
            st = self.crl.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def context(self) -> ssl.SSLContext:
        stamp = self._crl_stamp()
        with self._lock:
            if self._ctx is None or stamp != self._stamp:
                crl = self.crl if stamp is not None else None
                try:
                    self._ctx = server_context(*self.files, crl=crl)
                except TlsSetupError as exc:
                    if self._ctx is None:
                        raise
                    log.error("TLS: the new CRL %s cannot be used, keeping the last: %s", self.crl, exc)
                else:
                    if self._stamp is not None:
                        log.info("TLS: CRL %s changed, loaded again", self.crl)
                self._stamp = stamp
            return self._ctx

    def swap(self, sslobj: Any, server_name: str | None, ctx: ssl.SSLContext) -> None:
        """``sni_callback``: this handshake uses the current context (the current CRL)."""
        current = self.context()
        if current is not ctx:
            current.sni_callback = self.swap
            sslobj.context = current
