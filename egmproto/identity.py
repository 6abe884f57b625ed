"""Who is who on the host link: the keys each side holds and the certificates it trusts.

A PKI directory (``egm certs``; the development one is ``<state-dir>/pki``) holds ``ca.cert.pem``,
``crl.pem`` and ``issued/<name>.cert.pem`` (and ``.key.pem`` for the keys this machine owns).

* The terminal signs with its own key (``issued/<terminal id>``), trusts the host's signing
  certificate (``issued/egm-host``, kind ``host``) for commands and encrypts to the host's X25519
  certificate (``issued/egm-host.kem``, kind ``host-kem``); both are checked against the CA and CRL at
  start.
* The host signs commands with its key, decrypts with its X25519 key and checks each terminal's
  certificate (``issued/<terminal id>.cert.pem``, kind ``terminal``, CN = the sender id) against the
  CA and the *current* CRL: ``crl.pem`` is read again whenever it changes, so a revocation takes
  effect on the next message, without a restart.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from egmproto.envelope import key_from_certificate
from egmproto.errors import EnvelopeRejected, HostLinkError
from egmproto.pki import DEV_HOST, DEV_HOST_KEM, PkiError, load_certificate, verify_chain

#: how long a terminal certificate's chain check is reused while neither it nor the CRL changed
CHECK_TTL_S = 60.0

log = logging.getLogger("egm.hostlink")


def _load_key(path: Path) -> Any:
    try:
        return serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise HostLinkError(f"cannot read the private key {path}: {exc}") from None


class Trust:
    """The CA certificate and its CRL (re-read when the file changes)."""

    def __init__(self, pki_dir: str | os.PathLike[str]) -> None:
        self.dir = Path(pki_dir)
        self.ca_path = self.dir / "ca.cert.pem"
        self.crl_path = self.dir / "crl.pem"
        try:
            self.ca = load_certificate(self.ca_path)
        except PkiError as exc:
            raise HostLinkError(f"no casino CA in {self.dir}: {exc}") from None
        self._crl_stamp: tuple[int, int] | None = None
        self._crl_bytes: bytes | None = None
        self._lock = threading.Lock()

    def crl(self) -> bytes | None:
        """The CRL as it is on disk now (cached while the file is unchanged)."""
        with self._lock:
            try:
                st = self.crl_path.stat()
            except OSError:
                self._crl_stamp, self._crl_bytes = None, None
                return None
            stamp = (st.st_mtime_ns, st.st_size)
            if stamp != self._crl_stamp:
                self._crl_bytes = self.crl_path.read_bytes()
                self._crl_stamp = stamp
            return self._crl_bytes

    def check(self, cert: x509.Certificate, expect: str) -> None:
        """:class:`PkiError` unless ``cert`` chains to the CA, is valid now and is not revoked."""
        verify_chain(cert, self.ca, self.crl(), expect=expect)

    def issued(self, name: str) -> Path:
        return self.dir / "issued" / f"{name}.cert.pem"


@dataclass
class TerminalIdentity:
    """What a terminal needs: its signing key, the host's verification key and encryption key."""

    terminal_id: str
    signing_key: Any
    host_verify_key: Any
    host_kem_key: Any
    trust: Trust
    host_name: str = DEV_HOST

    @classmethod
    def load(cls, pki_dir: str | os.PathLike[str], terminal_id: str, *, host: str = DEV_HOST,
             host_kem: str = DEV_HOST_KEM) -> TerminalIdentity:
        trust = Trust(pki_dir)
        try:
            own = load_certificate(trust.issued(terminal_id))
            trust.check(own, "terminal")
            host_cert = load_certificate(trust.issued(host))
            trust.check(host_cert, "host")
            kem_cert = load_certificate(trust.issued(host_kem))
            trust.check(kem_cert, "host-kem")
        except PkiError as exc:
            raise HostLinkError(f"host link certificates in {trust.dir}: {exc}") from None
        key = _load_key(trust.dir / "issued" / f"{terminal_id}.key.pem")
        if key.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo) != \
                own.public_key().public_bytes(serialization.Encoding.DER,
                                              serialization.PublicFormat.SubjectPublicKeyInfo):
            raise HostLinkError(f"the key of {terminal_id} does not match its certificate")
        return cls(terminal_id, key, key_from_certificate(host_cert, host), kem_cert.public_key(), trust, host)


class HostIdentity:
    """What the host needs: its signing and decryption keys, and the terminals' certificates."""

    def __init__(self, pki_dir: str | os.PathLike[str], *, name: str = DEV_HOST,
                 kem_name: str = DEV_HOST_KEM, certs_dir: str | os.PathLike[str] | None = None) -> None:
        self.trust = Trust(pki_dir)
        self.name = name
        self.certs_dir = Path(certs_dir) if certs_dir is not None else self.trust.dir / "issued"
        try:
            self.trust.check(load_certificate(self.trust.issued(name)), "host")
            self.trust.check(load_certificate(self.trust.issued(kem_name)), "host-kem")
        except PkiError as exc:
            raise HostLinkError(f"host certificates in {self.trust.dir}: {exc}") from None
        self.signing_key = _load_key(self.trust.dir / "issued" / f"{name}.key.pem")
        self.kem_key = _load_key(self.trust.dir / "issued" / f"{kem_name}.key.pem")
        self._certs: dict[str, tuple[tuple[int, int], x509.Certificate]] = {}
        #: terminal -> ((certificate stamp, CRL stamp), checked until, key): see terminal_key
        self._checked: dict[str, tuple[tuple[Any, Any], datetime, Any]] = {}

    def terminal_key(self, terminal_id: str) -> Any:
        """The verification key of ``terminal_id`` (``verify_key_for`` of :func:`envelope.open_`).

        :class:`EnvelopeRejected` ``unknown_sender`` when there is no certificate, or it is not a
        terminal certificate of this CA, expired or revoked.
        """
        path = self.certs_dir / f"{terminal_id}.cert.pem"
        try:
            st = path.stat()
        except OSError:
            raise EnvelopeRejected("unknown_sender", f"no certificate for terminal {terminal_id!r}") from None
        stamp = (st.st_mtime_ns, st.st_size)
        cached = self._certs.get(terminal_id)
        if cached is None or cached[0] != stamp:
            try:
                cert = load_certificate(path)
            except PkiError as exc:
                raise EnvelopeRejected("unknown_sender", f"terminal {terminal_id}: {exc}") from None
            self._certs[terminal_id] = (stamp, cert)
        else:
            cert = cached[1]
        # A chain checked already holds while neither the certificate file nor the CRL changed,
        # for at most CHECK_TTL_S and never past the certificate's end: a revocation counts from
        # the moment the CRL file changes (the check is most of the cost of opening a report).
        self.trust.crl()
        now = datetime.now(UTC)
        check = (stamp, self.trust._crl_stamp)
        done = self._checked.get(terminal_id)
        if done is not None and done[0] == check and now < done[1]:
            return done[2]
        try:
            self.trust.check(cert, "terminal")
        except PkiError as exc:
            self._checked.pop(terminal_id, None)
            raise EnvelopeRejected("unknown_sender", f"terminal {terminal_id}: {exc}") from None
        key = key_from_certificate(cert, terminal_id)
        self._checked[terminal_id] = (check, min(now + timedelta(seconds=CHECK_TTL_S), cert.not_valid_after_utc), key)
        return key
