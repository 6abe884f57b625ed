"""Enrolment with the key made where it is used: a certificate signing request (PKCS#10) made on the
cabinet (or host), signed at the CA with the fixed profile of ``docs/pki.md``, installed back.

* :func:`make_request` (``egm certs request``, on the cabinet): a new key (0600) and a CSR, in
  ``<state-dir>/pki/requests/``; the key in use (``issued/NAME.key.pem``) is not touched, so a
  rotation keeps the cabinet working until the new certificate is installed.
* :func:`sign_request` (``egm certs sign``, at the CA): the CSR's signature and subject checked, the
  certificate made with the kind's profile (nothing of the CSR but its key and name is used), recorded
  in the CA's index.
* :func:`install` (``egm certs install``, on the cabinet): the certificate must be for the pending
  (or current) key and chain to the CA (and not be on its CRL); then the certificate, the CA, the CRL
  and the peers' certificates go into ``<state-dir>/pki``, where the terminal reads them.

Every check is made before anything is written: a refused step changes no file.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.types import (
    CertificatePublicKeyTypes,
    PrivateKeyTypes,
    PublicKeyTypes,
)
from cryptography.x509.oid import NameOID

from egmproto import pki
from egmproto.pki import PkiError

#: The kinds a request can be made for (``host-kem`` is an X25519 key: it cannot sign its request).
REQUEST_KINDS = ("terminal", "host", "code-signer")
MAX_CSR_BYTES = 64 * 1024


@dataclass(frozen=True)
class Request:
    name: str
    kind: str
    key: Path
    csr: Path


@dataclass(frozen=True)
class Installed:
    name: str
    kind: str
    serial: str
    cert: Path
    key: Path
    ca: Path
    crl: Path | None
    peers: tuple[Path, ...]


def pki_dir(state_dir: str | os.PathLike[str]) -> Path:
    return Path(state_dir) / "pki"


def _private_dir(path: Path) -> None:
    pki._mkdir(path)
    os.chmod(path, 0o700)


def _check_owner(state_dir: Path) -> None:
    """Root writing into a state directory someone else owns (``egm``) would leave keys the service
    cannot read: refused, with the way to do it."""
    try:
        owner = state_dir.stat().st_uid
    except OSError:
        return
    if hasattr(os, "geteuid") and os.geteuid() != owner:
        raise PkiError(f"{state_dir} belongs to uid {owner}, not to this user (uid {os.geteuid()}): run as its "
                       "owner, e.g. sudo -u egm egm certs ...")


def _check_kind(kind: str) -> None:
    if kind not in REQUEST_KINDS:
        raise PkiError(f"a request is for a {' , '.join(REQUEST_KINDS)} certificate, not {kind!r}")


def _pem_public(key: CertificatePublicKeyTypes | PublicKeyTypes) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


# -- on the cabinet: the key and its request ---------------------------------------------------------


def make_request(state_dir: str | os.PathLike[str], name: str, kind: str = "terminal", *,
                 replace: bool = False) -> Request:
    """A new private key (0600, made here, never leaves) and its CSR ``OU=kind, CN=name``."""
    _check_kind(kind)
    pki.validate_name(name, "terminal id" if kind == "terminal" else f"{kind} name")
    base = pki_dir(state_dir)
    pki._check_outside_repo(base, False)
    _check_owner(Path(state_dir))
    requests = base / "requests"
    out = Request(name, kind, requests / f"{name}.key.pem", requests / f"{name}.csr.pem")
    if out.key.exists() and not replace:
        raise PkiError(f"a request for {name} is pending ({out.csr}): install its certificate, or make a "
                       "new one with --replace")
    key: ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey
    key = ed25519.Ed25519PrivateKey.generate() if kind == "code-signer" else ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, kind),
                         x509.NameAttribute(NameOID.COMMON_NAME, name)])
    csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(
        key, None if kind == "code-signer" else hashes.SHA256())
    _private_dir(base)
    _private_dir(requests)
    try:
        pki._write_private(out.key, pki._key_pem(key))
        pki._write_public(out.csr, csr.public_bytes(serialization.Encoding.PEM))
    except OSError as exc:
        raise PkiError(f"cannot write the request of {name}: {exc.strerror or exc}") from None
    return out


# -- at the CA: checking and signing ----------------------------------------------------------------


def load_request(source: str | os.PathLike[str]) -> x509.CertificateSigningRequest:
    path = Path(source)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CSR_BYTES + 1)
    except OSError as exc:
        raise PkiError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_CSR_BYTES:
        raise PkiError(f"{path}: larger than {MAX_CSR_BYTES} bytes; not a certificate request")
    try:
        if b"-----BEGIN" in data:
            return x509.load_pem_x509_csr(data)
        return x509.load_der_x509_csr(data)
    except ValueError:
        raise PkiError(f"{path}: not a certificate signing request (PEM or DER)") from None


def _attribute(name: x509.Name, oid: x509.ObjectIdentifier) -> str | None:
    values = name.get_attributes_for_oid(oid)
    if len(values) != 1:
        return None
    value = values[0].value
    return value if isinstance(value, str) else None


def check_request(csr: x509.CertificateSigningRequest, kind: str) -> str:
    """The name the CSR asks for, once its signature, subject and key fit ``kind``."""
    _check_kind(kind)
    try:
        signed = csr.is_signature_valid
    except Exception:                                   # an algorithm the library cannot check
        signed = False
    if not signed:
        raise PkiError("the request's signature does not verify (altered, or not signed by its key)")
    asked = _attribute(csr.subject, NameOID.ORGANIZATIONAL_UNIT_NAME)
    if asked != kind:
        raise PkiError(f"the request is for a {asked or 'unnamed'} certificate, not {kind} "
                       f"(subject {csr.subject.rfc4514_string()})")
    name = _attribute(csr.subject, NameOID.COMMON_NAME)
    if name is None:
        raise PkiError(f"the request has no single common name (subject {csr.subject.rfc4514_string()})")
    pki.validate_name(name, "terminal id" if kind == "terminal" else f"{kind} name")
    key = csr.public_key()
    if kind == "code-signer":
        if not isinstance(key, ed25519.Ed25519PublicKey):
            raise PkiError("a code-signer request must carry an Ed25519 key")
    elif not (isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1)):
        raise PkiError(f"a {kind} request must carry an ECDSA P-256 key")
    return name


def sign_request(ca_dir: str | os.PathLike[str], csr_path: str | os.PathLike[str], kind: str, *,
                 days: int = 825, dns: tuple[str, ...] = (), ips: tuple[str, ...] = (),
                 renew: bool = False, now: dt.datetime | None = None) -> pki.IssuedFiles:
    """Sign the request at ``csr_path`` as ``kind``; refuse a name that has a valid certificate
    (with ``renew``: allowed when it is of the same kind: the old one stays valid until revoked)."""
    csr = load_request(csr_path)
    name = check_request(csr, kind)
    dns_names = [pki.validate_dns(d) for d in dns]
    ip_addrs = pki._parse_ips(ips)
    if kind != "host" and (dns_names or ip_addrs):
        raise PkiError(f"DNS and IP names are for host certificates, not {kind}")
    files = pki.ca_files(ca_dir)
    files, ca_cert, ca_key = pki._load_ca(files.directory)
    index = pki._load_index(files)
    when = pki._aware(now)
    key_der = _pem_public(csr.public_key())
    for entry in index["certs"]:
        if entry["name"] != name or entry.get("revoked") or pki._parse_iso(entry["not_after"]) <= when:
            continue
        if not (renew and entry["kind"] == kind):
            hint = "" if entry["kind"] != kind else "; --renew to sign a new key for it"
            raise PkiError(f"{name!r} already has a valid {entry['kind']} certificate (serial "
                           f"{entry['serial']}){hint}")
        old = pki.load_certificate(files.directory / entry["file"])
        if _pem_public(old.public_key()) == key_der:
            raise PkiError(f"the request carries the key of {name}'s current certificate (serial "
                           f"{entry['serial']}): a renewal needs a new key (egm certs request)")
    if kind == "host" and not dns_names and not ip_addrs:
        dns_names = [name.lower()] if pki._is_dns(name) else []
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dict.fromkeys(dns_names)]
    sans += [x509.IPAddress(a) for a in dict.fromkeys(ip_addrs)]
    if kind == "terminal":
        sans.append(x509.UniformResourceIdentifier(pki.TERMINAL_URN + name))
    return pki._issue(files, index, ca_cert, ca_key, kind, name, sans, days, when, public_key=csr.public_key())


# -- back on the cabinet: installing ----------------------------------------------------------------


def _load_private(path: Path) -> PrivateKeyTypes:
    try:
        return serialization.load_pem_private_key(path.read_bytes(), None)
    except (OSError, ValueError, TypeError) as exc:
        raise PkiError(f"cannot read the private key {path}: {getattr(exc, 'strerror', None) or exc}") from None


def install(state_dir: str | os.PathLike[str], cert_path: str | os.PathLike[str],
            ca_path: str | os.PathLike[str], *, crl_path: str | os.PathLike[str] | None = None,
            peers: tuple[str, ...] = (), now: dt.datetime | None = None) -> Installed:
    """Put a signed certificate in place for the key this machine made (the pending request's key,
    or the current one); checks first, writes after."""
    base = pki_dir(state_dir)
    pki._check_outside_repo(base, False)
    _check_owner(Path(state_dir))
    if (base / "ca.key.pem").exists():
        raise PkiError(f"{base} holds a CA key (a development PKI): a site cabinet keeps no CA key; "
                       "move that directory away first")
    cert = pki.load_certificate(cert_path)
    ca = pki.load_certificate(ca_path)
    crl = pki.load_crl(crl_path) if crl_path else None
    kind = pki.cert_kind(cert)
    name = pki.common_name(cert)
    if kind not in REQUEST_KINDS or name is None:
        raise PkiError(f"{cert_path}: not a terminal, host or code-signer certificate")
    pki.validate_name(name)
    pki.verify_chain(cert, ca, crl, expect=kind, now=now)
    current_ca = base / "ca.cert.pem"
    if current_ca.is_file() and pki.load_certificate(current_ca) != ca:
        raise PkiError(f"{current_ca} is another CA ({pki.load_certificate(current_ca).subject.rfc4514_string()}); "
                       "this state directory was enrolled elsewhere")
    pending = base / "requests" / f"{name}.key.pem"
    current = base / "issued" / f"{name}.key.pem"
    wanted = _pem_public(cert.public_key())
    source = next((p for p in (pending, current) if p.is_file()
                   and _pem_public(_load_private(p).public_key()) == wanted), None)
    if source is None:
        raise PkiError(f"{cert_path} does not match the key of {name} on this machine (neither "
                       f"{pending} nor {current}); was it signed from this machine's request?")
    peer_certs = []
    for peer in peers:
        pc = pki.load_certificate(peer)
        pki.verify_chain(pc, ca, crl, now=now)
        peer_name = pki.common_name(pc)
        if peer_name is None or peer_name == name:
            raise PkiError(f"{peer}: a peer certificate needs a common name other than {name}")
        pki.validate_name(peer_name)
        peer_certs.append((peer_name, pc))
    issued = base / "issued"
    _private_dir(base)
    _private_dir(issued)
    pem = serialization.Encoding.PEM
    out_peers = []
    try:
        pki._write_public(current_ca, ca.public_bytes(pem))
        if crl is not None:
            pki._write_public(base / "crl.pem", crl.public_bytes(pem))
        for peer_name, pc in peer_certs:
            out_peers.append(issued / f"{peer_name}.cert.pem")
            pki._write_public(out_peers[-1], pc.public_bytes(pem))
        if source == pending:
            os.replace(pending, current)
        pki._write_public(issued / f"{name}.cert.pem", cert.public_bytes(pem))
        (base / "requests" / f"{name}.csr.pem").unlink(missing_ok=True)
    except OSError as exc:
        raise PkiError(f"cannot install into {base}: {exc.strerror or exc}") from None
    return Installed(name, kind, pki.serial_hex(cert.serial_number), issued / f"{name}.cert.pem", current,
                     current_ca, base / "crl.pem" if crl is not None else None, tuple(out_peers))
