"""The casino PKI: a CA, the certificates of terminals, the host and the code signer, revocation.

One CA directory holds everything the CA knows (see ``docs/pki.md``)::

    ca.cert.pem          the CA certificate (0644)
    ca.key.pem           the CA's ECDSA P-256 private key (0600)
    index.json           every certificate issued (serial, kind, name, validity) and its revocation
    crl.pem              the current signed CRL (rewritten by ``revoke`` and ``crl``)
    newcerts/SERIAL.pem  every certificate ever issued, by serial (renewed ones stay here)
    issued/NAME.cert.pem the current certificate of NAME (0644)
    issued/NAME.key.pem  its private key (0600)

Private keys are created with ``os.open(..., 0o600)`` so they are never readable by others, not even
for an instant, and never inside a git checkout (a ``.git`` in the target or any parent is refused
unless ``allow_in_repo=True``). Terminal and host keys are ECDSA P-256; the code signer's key is
Ed25519 (what ``egm software sign`` uses). Names follow the terminal-id rule of the configuration:
1-32 of ``[A-Za-z0-9_.-]`` starting with a letter or digit.

Renewal (:func:`renew`) makes a new key and certificate with the same subject and alternative names;
the previous certificate is **not** revoked: it stays valid until it expires or is revoked explicitly,
so a terminal keeps talking to the host while the new key is being rolled out. Revoke the old serial
(``egm certs revoke SERIAL --reason superseded``) once the terminal uses the new one.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, x25519
from cryptography.hazmat.primitives.asymmetric.types import (
    CertificatePublicKeyTypes,
    PrivateKeyTypes,
)
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from egmproto import x509parse
from egmproto.errors import EgmError

KINDS: tuple[str, ...] = ("terminal", "host", "code-signer", "host-kem", "update-signer")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
NAME_RULE = "1-32 characters of letters, digits, '-', '_' or '.', starting with a letter or digit"
_DNS_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
TERMINAL_URN = "urn:egm:terminal:"
CRL_DAYS = 7
#: Certificates start this long before "now", so a peer whose clock is a little behind accepts them.
BACKDATE = dt.timedelta(minutes=5)
INDEX_VERSION = 1

_EKU: dict[str, tuple[x509.ObjectIdentifier, ...]] = {
    "terminal": (ExtendedKeyUsageOID.CLIENT_AUTH,),
    "host": (ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH),
    "code-signer": (ExtendedKeyUsageOID.CODE_SIGNING,),
    "update-signer": (ExtendedKeyUsageOID.CODE_SIGNING,),   # ECDSA P-256: RAUC's CMS (OpenSSL 3.0) has no Ed25519
    "host-kem": (),             # an encryption key: key usage keyAgreement, no EKU
}
#: The EKU a certificate must carry to act in a role (``verify_chain(expect=...)``).
_ROLE_EKU: dict[str, x509.ObjectIdentifier] = {
    "terminal": ExtendedKeyUsageOID.CLIENT_AUTH,
    "host": ExtendedKeyUsageOID.SERVER_AUTH,
    "code-signer": ExtendedKeyUsageOID.CODE_SIGNING,
    "update-signer": ExtendedKeyUsageOID.CODE_SIGNING,
}
#: RFC 5280 revocation reasons by kebab-case name ("key-compromise", "superseded", ...).
REASONS: dict[str, x509.ReasonFlags] = {
    "unspecified": x509.ReasonFlags.unspecified,
    "key-compromise": x509.ReasonFlags.key_compromise,
    "ca-compromise": x509.ReasonFlags.ca_compromise,
    "affiliation-changed": x509.ReasonFlags.affiliation_changed,
    "superseded": x509.ReasonFlags.superseded,
    "cessation-of-operation": x509.ReasonFlags.cessation_of_operation,
    "certificate-hold": x509.ReasonFlags.certificate_hold,
    "privilege-withdrawn": x509.ReasonFlags.privilege_withdrawn,
    "aa-compromise": x509.ReasonFlags.aa_compromise,
}
_REASON_NAMES = {flag: name for name, flag in REASONS.items()}
_EKU_NAMES = {
    ExtendedKeyUsageOID.CLIENT_AUTH: "clientAuth",
    ExtendedKeyUsageOID.SERVER_AUTH: "serverAuth",
    ExtendedKeyUsageOID.CODE_SIGNING: "codeSigning",
}


class PkiError(EgmError):
    """A PKI operation refused, or a certificate that does not verify (the message says why)."""


@dataclass(frozen=True)
class CaFiles:
    directory: Path
    cert: Path
    key: Path
    index: Path
    crl: Path


@dataclass(frozen=True)
class IssuedFiles:
    kind: str
    name: str
    serial: str
    cert: Path
    key: Path
    archive: Path


# --------------------------------------------------------------------------------------------------
# files


def ca_files(directory: str | os.PathLike[str]) -> CaFiles:
    d = Path(directory)
    return CaFiles(d, d / "ca.cert.pem", d / "ca.key.pem", d / "index.json", d / "crl.pem")


def _repo_root_of(path: Path) -> Path | None:
    """The nearest directory at or above ``path`` holding a ``.git`` (directory or worktree file)."""
    p = path.resolve()
    for candidate in (p, *p.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _check_outside_repo(directory: Path, allow_in_repo: bool) -> None:
    if allow_in_repo:
        return
    root = _repo_root_of(directory)
    if root is not None:
        raise PkiError(
            f"refusing to write private keys into {directory}: it is inside the git repository {root} "
            "(choose a directory outside the checkout, e.g. the state directory)"
        )


def _write_private(path: Path, data: bytes) -> None:
    """Write a private key: created 0600 from the first byte, atomically replaced, fsynced."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        os.unlink(tmp)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask said
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _write_public(path: Path, data: bytes, mode: int = 0o644) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        os.fchmod(fd, mode)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _mkdir(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PkiError(f"cannot create {path}: {exc.strerror or exc}") from None
    if not path.is_dir():
        raise PkiError(f"{path} is not a directory")


def _key_pem(key: PrivateKeyTypes) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


# --------------------------------------------------------------------------------------------------
# validation


def validate_name(name: str, what: str = "name") -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise PkiError(f"invalid {what} {name!r}: must be {NAME_RULE}")
    return name


def validate_dns(name: str) -> str:
    text = name.rstrip(".") if isinstance(name, str) else ""
    labels = text.split(".")
    if not text or len(text) > 253 or not all(_DNS_LABEL.fullmatch(label) for label in labels):
        raise PkiError(
            f"invalid DNS name {name!r}: dot-separated labels of letters, digits and '-' (no wildcards)"
        )
    return text.lower()


def _check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise PkiError(f"unknown certificate kind {kind!r}: one of {', '.join(KINDS)}")
    return kind


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _aware(when: dt.datetime | None) -> dt.datetime:
    if when is None:
        return _utcnow()
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)


def _iso(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).isoformat(timespec="seconds")


def serial_hex(serial: int) -> str:
    return format(serial, "X")


# --------------------------------------------------------------------------------------------------
# the CA


def create_ca(
    directory: str | os.PathLike[str],
    name: str = "Development Casino CA",
    days: int = 3650,
    *,
    allow_in_repo: bool = False,
) -> CaFiles:
    """Create a CA (ECDSA P-256, self-signed, pathlen 0) in ``directory``; refuse to replace one."""
    if not isinstance(name, str) or not name.strip() or len(name) > 64:
        raise PkiError(f"invalid CA name {name!r}: 1-64 characters")
    if days < 1:
        raise PkiError(f"invalid validity {days} days: at least 1")
    files = ca_files(directory)
    _check_outside_repo(files.directory, allow_in_repo)
    if files.key.exists() or files.cert.exists():
        raise PkiError(f"{files.directory} already holds a CA ({files.cert.name}); not replacing it")
    _mkdir(files.directory)

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = _utcnow()
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ski, critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False)
        .sign(key, hashes.SHA256())
    )
    try:
        _write_private(files.key, _key_pem(key))
        _write_public(files.cert, _cert_pem(cert))
        _save_index(files, {"version": INDEX_VERSION, "ca": {
            "subject": subject.rfc4514_string(), "serial": serial_hex(cert.serial_number),
            "not_before": _iso(cert.not_valid_before_utc), "not_after": _iso(cert.not_valid_after_utc),
        }, "crl_number": 0, "certs": []})
    except OSError as exc:
        raise PkiError(f"cannot write the CA into {files.directory}: {exc.strerror or exc}") from None
    crl(files.directory)
    return files


def _load_ca(ca_dir: str | os.PathLike[str]) -> tuple[CaFiles, x509.Certificate, ec.EllipticCurvePrivateKey]:
    files = ca_files(ca_dir)
    if not files.cert.is_file() or not files.key.is_file():
        raise PkiError(f"no CA in {files.directory} (create one with: egm certs init --dir {files.directory})")
    cert = load_certificate(files.cert)
    try:
        key = serialization.load_pem_private_key(files.key.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise PkiError(f"cannot read the CA key {files.key}: {exc}") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise PkiError(f"the CA key {files.key} is not an ECDSA key")
    return files, cert, key


def _load_index(files: CaFiles) -> dict[str, Any]:
    try:
        index = json.loads(files.index.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PkiError(f"no index in {files.directory} ({files.index.name} missing)") from None
    except (OSError, ValueError) as exc:
        raise PkiError(f"cannot read {files.index}: {exc}") from None
    if not isinstance(index, dict) or index.get("version") != INDEX_VERSION:
        raise PkiError(f"{files.index}: not a version {INDEX_VERSION} certificate index")
    return index


def _save_index(files: CaFiles, index: dict[str, Any]) -> None:
    _write_public(files.index, (json.dumps(index, indent=1, sort_keys=True) + "\n").encode("utf-8"))


def load_certificate(source: str | os.PathLike[str] | bytes | x509.Certificate) -> x509.Certificate:
    """A certificate from a path, PEM or DER bytes, or the certificate itself."""
    if isinstance(source, x509.Certificate):
        return source
    data, where = _read(source)
    try:
        return x509parse.certificate(data)
    except x509parse.PARSE_ERRORS as exc:
        raise PkiError(f"{where}: not a certificate ({exc})") from None


def load_crl(source: str | os.PathLike[str] | bytes | x509.CertificateRevocationList) -> x509.CertificateRevocationList:
    if isinstance(source, x509.CertificateRevocationList):
        return source
    data, where = _read(source)
    try:
        return x509parse.crl(data)
    except x509parse.PARSE_ERRORS as exc:
        raise PkiError(f"{where}: not a CRL ({exc})") from None


def _read(source: str | os.PathLike[str] | bytes) -> tuple[bytes, str]:
    if isinstance(source, bytes | bytearray):
        return bytes(source), "the data given"
    try:
        return Path(source).read_bytes(), str(source)
    except FileNotFoundError:
        raise PkiError(f"{source}: no such file") from None
    except OSError as exc:
        raise PkiError(f"{source}: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------------------------------
# issuing


def issue(
    ca_dir: str | os.PathLike[str],
    kind: str,
    name: str,
    days: int = 825,
    *,
    dns: Iterable[str] = (),
    ips: Iterable[str] = (),
    allow_in_repo: bool = False,
    now: dt.datetime | None = None,
) -> IssuedFiles:
    """Issue a certificate of ``kind`` for ``name`` (a new key); refuse a name already in use.

    ``terminal``: CN = terminal id, URI SAN ``urn:egm:terminal:<id>``, EKU clientAuth.
    ``host``: CN = name, DNS (and IP) SANs, EKU serverAuth + clientAuth.
    ``code-signer``: Ed25519 key, EKU codeSigning.
    ``update-signer``: ECDSA P-256 key, EKU codeSigning: signs RAUC update bundles (CMS), which
    Debian bookworm's OpenSSL 3.0 cannot do with Ed25519 (docs/update.md).
    ``host-kem``: the host's X25519 encryption key (RFC 8410), key usage keyAgreement only: terminals
    encrypt their reports to it (HPKE), after checking this certificate against the CA and CRL.
    """
    _check_kind(kind)
    validate_name(name, "terminal id" if kind == "terminal" else f"{kind} name")
    dns_names = [validate_dns(d) for d in dns]
    ip_addrs = _parse_ips(ips)
    if kind != "host" and (dns_names or ip_addrs):
        raise PkiError(f"DNS and IP names are for host certificates, not {kind}")
    files = ca_files(ca_dir)
    _check_outside_repo(files.directory, allow_in_repo)
    files, ca_cert, ca_key = _load_ca(files.directory)
    index = _load_index(files)
    when = _aware(now)
    for entry in index["certs"]:
        if entry["name"] == name and not entry.get("revoked") and _parse_iso(entry["not_after"]) > when:
            raise PkiError(
                f"{name!r} already has a valid {entry['kind']} certificate (serial {entry['serial']}); "
                "use renew, or revoke it first"
            )
    if kind == "host" and not dns_names and not ip_addrs:
        dns_names = [name.lower()] if _is_dns(name) else []
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dict.fromkeys(dns_names)]
    sans += [x509.IPAddress(a) for a in dict.fromkeys(ip_addrs)]
    if kind == "terminal":
        sans.append(x509.UniformResourceIdentifier(TERMINAL_URN + name))
    return _issue(files, index, ca_cert, ca_key, kind, name, sans, days, when)


def issue_terminals(ca_dir: str | os.PathLike[str], names: Sequence[str], days: int = 825, *,
                    allow_in_repo: bool = False) -> list[IssuedFiles]:
    """Issue a terminal certificate for each of ``names`` (as :func:`issue` ``terminal``), reading
    the CA and writing the index once for all of them: a floor of test terminals in seconds (the
    index is rewritten whole at each :func:`issue`, so one by one the cost grows with its square)."""
    files = ca_files(ca_dir)
    _check_outside_repo(files.directory, allow_in_repo)
    files, ca_cert, ca_key = _load_ca(files.directory)
    index = _load_index(files)
    when = _utcnow()
    taken = {e["name"] for e in index["certs"] if not e.get("revoked") and _parse_iso(e["not_after"]) > when}
    for name in names:                              # every name checked before anything is written
        validate_name(name, "terminal id")
        if name in taken:
            raise PkiError(f"{name!r} already has a valid certificate (or is named twice); use renew, "
                           "or revoke it first")
        taken.add(name)
    out = []
    for name in names:
        sans = [x509.UniformResourceIdentifier(TERMINAL_URN + name)]
        out.append(_issue(files, index, ca_cert, ca_key, "terminal", name, sans, days, when, save=False))
    try:
        _save_index(files, index)
    except OSError as exc:
        raise PkiError(f"cannot write the certificate index: {exc.strerror or exc}") from None
    return out


def _is_dns(name: str) -> bool:
    try:
        validate_dns(name)
    except PkiError:
        return False
    return True


def _parse_ips(ips: Iterable[str]) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    out = []
    for text in ips:
        try:
            out.append(ipaddress.ip_address(text))
        except ValueError:
            raise PkiError(f"invalid IP address {text!r}") from None
    return out


def _parse_iso(text: str) -> dt.datetime:
    return _aware(dt.datetime.fromisoformat(text))


def _issue(
    files: CaFiles,
    index: dict[str, Any],
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    kind: str,
    name: str,
    sans: Sequence[x509.GeneralName],
    days: int,
    now: dt.datetime,
    *,
    save: bool = True,
    public_key: CertificatePublicKeyTypes | None = None,
) -> IssuedFiles:
    """Sign and record a certificate of the fixed profile of ``kind``: for a new key made here, or,
    given ``public_key`` (a request made elsewhere, ``egmproto.pki_enrol``), for that key (no key file
    is written then, and a stale ``issued/NAME.key.pem`` of an earlier key is removed)."""
    if days < 1:
        raise PkiError(f"invalid validity {days} days: at least 1")
    key: ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey | x25519.X25519PrivateKey | None = None
    if public_key is not None:
        pass
    elif kind == "code-signer":
        key = ed25519.Ed25519PrivateKey.generate()
    elif kind == "host-kem":
        key = x25519.X25519PrivateKey.generate()
    else:
        key = ec.generate_private_key(ec.SECP256R1())
    public: CertificatePublicKeyTypes = key.public_key() if key is not None else public_key  # type: ignore[assignment]
    agreement = kind == "host-kem"
    not_before = now - BACKDATE
    # Never outlive the CA: a certificate past its issuer's end would not verify anyway.
    not_after = min(now + dt.timedelta(days=days), ca_cert.not_valid_after_utc)
    if not_after <= now:
        raise PkiError(f"the CA certificate expired on {_iso(ca_cert.not_valid_after_utc)}")
    subject = x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, kind),
        x509.NameAttribute(NameOID.COMMON_NAME, name),
    ])
    serial = x509.random_serial_number()
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(public)
        .serial_number(serial)
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=not agreement, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=agreement, key_cert_sign=False, crl_sign=False,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(_aki(ca_cert), critical=False)
    )
    if _EKU[kind]:
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(_EKU[kind])), critical=False)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())

    issued_dir = files.directory / "issued"
    archive_dir = files.directory / "newcerts"
    _mkdir(issued_dir)
    _mkdir(archive_dir)
    hexserial = serial_hex(serial)
    out = IssuedFiles(
        kind, name, hexserial, issued_dir / f"{name}.cert.pem", issued_dir / f"{name}.key.pem",
        archive_dir / f"{hexserial}.pem",
    )
    try:
        _write_public(out.archive, _cert_pem(cert))
        if key is not None:
            _write_private(out.key, _key_pem(key))
        else:
            out.key.unlink(missing_ok=True)         # the key of this certificate is elsewhere
        _write_public(out.cert, _cert_pem(cert))
        index["certs"].append({
            "serial": hexserial, "kind": kind, "name": name, "subject": subject.rfc4514_string(),
            "not_before": _iso(not_before), "not_after": _iso(not_after),
            "file": f"newcerts/{hexserial}.pem", "revoked": None,
        })
        if save:
            _save_index(files, index)
    except OSError as exc:
        raise PkiError(f"cannot write the certificate of {name}: {exc.strerror or exc}") from None
    return out


def _aki(ca_cert: x509.Certificate) -> x509.AuthorityKeyIdentifier:
    try:
        ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        return x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski)
    except x509.ExtensionNotFound:
        return x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key())  # type: ignore[arg-type]


def renew(
    ca_dir: str | os.PathLike[str],
    name: str,
    days: int = 825,
    *,
    allow_in_repo: bool = False,
    now: dt.datetime | None = None,
) -> IssuedFiles:
    """A new key and certificate for ``name``: same kind, subject and alternative names.

    The previous certificate is not revoked (it stays valid until it expires or is revoked), so the
    terminal keeps working while the new key is rolled out; its copy stays in ``newcerts/``.
    """
    validate_name(name)
    files = ca_files(ca_dir)
    _check_outside_repo(files.directory, allow_in_repo)
    files, ca_cert, ca_key = _load_ca(files.directory)
    index = _load_index(files)
    previous = [e for e in index["certs"] if e["name"] == name]
    if not previous:
        raise PkiError(f"no certificate named {name!r} in {files.directory} (issue one first)")
    last = previous[-1]
    old = load_certificate(files.directory / last["file"])
    try:
        sans = list(old.extensions.get_extension_for_class(x509.SubjectAlternativeName).value)
    except x509.ExtensionNotFound:
        sans = []
    return _issue(files, index, ca_cert, ca_key, last["kind"], name, sans, days, _aware(now))


# --------------------------------------------------------------------------------------------------
# listing and revocation


def list_certs(ca_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every certificate the CA issued, oldest first: serial (hex), kind, name, subject, validity."""
    index = _load_index(ca_files(ca_dir))
    return [
        {
            "serial": e["serial"], "kind": e["kind"], "name": e["name"], "subject": e["subject"],
            "not_before": e["not_before"], "not_after": e["not_after"],
            "revoked": bool(e.get("revoked")),
            **({"revoked_at": e["revoked"]["at"], "reason": e["revoked"]["reason"]} if e.get("revoked") else {}),
        }
        for e in index["certs"]
    ]


def _normalise_serial(text: str) -> str | None:
    t = text.strip()
    if t[:2].lower() == "0x":
        t = t[2:]
    t = t.replace(":", "")
    if t and all(c in "0123456789abcdefABCDEF" for c in t):
        return t.upper().lstrip("0") or "0"
    return None


def revoke(
    ca_dir: str | os.PathLike[str],
    serial_or_name: str,
    reason: str = "unspecified",
    *,
    now: dt.datetime | None = None,
) -> list[dict[str, Any]]:
    """Revoke one certificate by serial, or every unrevoked certificate of a name; rewrite the CRL.

    Returns the entries revoked. ``reason`` is an RFC 5280 reason in kebab-case
    (``key-compromise``, ``superseded``, ``cessation-of-operation``, ...).
    """
    key = reason.strip().lower().replace("_", "-")
    if key not in REASONS:
        raise PkiError(f"unknown revocation reason {reason!r}: one of {', '.join(REASONS)}")
    files, _, _ = _load_ca(ca_dir)
    index = _load_index(files)
    serial = _normalise_serial(serial_or_name)
    targets = [e for e in index["certs"] if serial is not None and e["serial"] == serial]
    if not targets:
        named = [e for e in index["certs"] if e["name"] == serial_or_name]
        if not named:
            raise PkiError(f"no certificate with serial or name {serial_or_name!r} in {files.directory}")
        targets = [e for e in named if not e.get("revoked")]
        if not targets:
            raise PkiError(f"every certificate of {serial_or_name!r} is already revoked")
    elif targets[0].get("revoked"):
        raise PkiError(f"certificate {targets[0]['serial']} is already revoked")
    stamp = _iso(_aware(now))
    for e in targets:
        e["revoked"] = {"at": stamp, "reason": key}
    _save_index(files, index)
    crl(files.directory, now=now)
    return targets


def crl(ca_dir: str | os.PathLike[str], *, now: dt.datetime | None = None) -> bytes:
    """Sign a fresh CRL (nextUpdate in 7 days), write it to ``crl.pem`` and return its PEM."""
    files, ca_cert, ca_key = _load_ca(ca_dir)
    index = _load_index(files)
    when = _aware(now)
    number = int(index.get("crl_number", 0)) + 1
    builder = (
        x509.CertificateRevocationListBuilder()
        .issuer_name(ca_cert.subject)
        .last_update(when)
        .next_update(when + dt.timedelta(days=CRL_DAYS))
        .add_extension(x509.CRLNumber(number), critical=False)
        .add_extension(_aki(ca_cert), critical=False)
    )
    for e in index["certs"]:
        if not e.get("revoked"):
            continue
        revoked = (
            x509.RevokedCertificateBuilder()
            .serial_number(int(e["serial"], 16))
            .revocation_date(_parse_iso(e["revoked"]["at"]))
        )
        flag = REASONS.get(e["revoked"]["reason"], x509.ReasonFlags.unspecified)
        if flag is not x509.ReasonFlags.unspecified:  # RFC 5280 5.3.1: omit "unspecified"
            revoked = revoked.add_extension(x509.CRLReason(flag), critical=False)
        builder = builder.add_revoked_certificate(revoked.build())
    pem = builder.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
    index["crl_number"] = number
    try:
        _write_public(files.crl, pem)
        _save_index(files, index)
    except OSError as exc:
        raise PkiError(f"cannot write {files.crl}: {exc.strerror or exc}") from None
    return pem


# --------------------------------------------------------------------------------------------------
# verification


def cert_kind(cert: x509.Certificate) -> str | None:
    """The kind a certificate was issued as, from its EKU (``None`` if it is none of ours)."""
    if isinstance(cert.public_key(), x25519.X25519PublicKey):
        return "host-kem"
    ekus = _ekus(cert)
    if ExtendedKeyUsageOID.CODE_SIGNING in ekus:
        return "update-signer" if isinstance(cert.public_key(), ec.EllipticCurvePublicKey) else "code-signer"
    if ExtendedKeyUsageOID.SERVER_AUTH in ekus:
        return "host"
    if ExtendedKeyUsageOID.CLIENT_AUTH in ekus:
        return "terminal"
    return None


def _ekus(cert: x509.Certificate) -> list[x509.ObjectIdentifier]:
    try:
        return list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)
    except x509.ExtensionNotFound:
        return []


def _key_agreement(cert: x509.Certificate) -> bool:
    try:
        return bool(cert.extensions.get_extension_for_class(x509.KeyUsage).value.key_agreement)
    except x509.ExtensionNotFound:
        return False


def common_name(cert: x509.Certificate) -> str | None:
    attrs = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(attrs[0].value) if attrs else None


def terminal_id_of(cert: x509.Certificate) -> str | None:
    """The terminal id a terminal certificate speaks for (its ``urn:egm:terminal:`` SAN)."""
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None
    for uri in sans.get_values_for_type(x509.UniformResourceIdentifier):
        if uri.startswith(TERMINAL_URN):
            return uri[len(TERMINAL_URN):]
    return None


def verify_chain(
    cert: x509.Certificate | bytes | str | os.PathLike[str],
    ca_cert: x509.Certificate | bytes | str | os.PathLike[str],
    crl: x509.CertificateRevocationList | bytes | str | os.PathLike[str] | None = None,
    *,
    expect: str | None = None,
    now: dt.datetime | None = None,
) -> None:
    """Return only if ``cert`` was issued by ``ca_cert``, is valid ``now``, is not revoked by ``crl``
    and (with ``expect``) may act as that kind; otherwise raise :class:`PkiError` with the reason."""
    cert = load_certificate(cert)
    ca_cert = load_certificate(ca_cert)
    when = _aware(now)
    if expect is not None:
        _check_kind(expect)
    serial = serial_hex(cert.serial_number)
    who = f"certificate {common_name(cert) or '?'} (serial {serial})"

    try:
        ca_bc = ca_cert.extensions.get_extension_for_class(x509.BasicConstraints).value
    except x509.ExtensionNotFound:
        ca_bc = None
    if ca_bc is None or not ca_bc.ca:
        raise PkiError(f"the CA certificate {common_name(ca_cert) or '?'} is not a CA")
    try:
        cert.verify_directly_issued_by(ca_cert)
    except (ValueError, TypeError, InvalidSignature):
        raise PkiError(f"{who} is not signed by the CA {common_name(ca_cert) or '?'}") from None
    if not ca_cert.not_valid_before_utc <= when <= ca_cert.not_valid_after_utc:
        raise PkiError(f"the CA certificate is not valid at {_iso(when)} "
                       f"(valid {_iso(ca_cert.not_valid_before_utc)} to {_iso(ca_cert.not_valid_after_utc)})")
    if when < cert.not_valid_before_utc:
        raise PkiError(f"{who} is not yet valid (from {_iso(cert.not_valid_before_utc)})")
    if when > cert.not_valid_after_utc:
        raise PkiError(f"{who} expired on {_iso(cert.not_valid_after_utc)}")
    try:
        bc = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
        if bc.ca:
            raise PkiError(f"{who} is a CA certificate, not an end-entity certificate")
    except x509.ExtensionNotFound:
        pass

    if crl is not None:
        the_crl = load_crl(crl)
        if the_crl.issuer != ca_cert.subject or not the_crl.is_signature_valid(ca_cert.public_key()):  # type: ignore[arg-type]
            raise PkiError("the CRL is not signed by the CA")
        next_update = the_crl.next_update_utc
        if next_update is not None and when > next_update:
            raise PkiError(f"the CRL is out of date (next update was due {_iso(next_update)}); "
                           "sign a fresh one (egm certs crl)")
        entry = the_crl.get_revoked_certificate_by_serial_number(cert.serial_number)
        if entry is not None and entry.revocation_date_utc <= when:
            try:
                flag = entry.extensions.get_extension_for_class(x509.CRLReason).value.reason
                reason = _REASON_NAMES.get(flag, flag.value)
            except x509.ExtensionNotFound:
                reason = "unspecified"
            raise PkiError(f"{who} is revoked since {_iso(entry.revocation_date_utc)} ({reason})")

    if expect == "host-kem":
        if not isinstance(cert.public_key(), x25519.X25519PublicKey) or not _key_agreement(cert):
            raise PkiError(f"{who} is not a host encryption (X25519 keyAgreement) certificate")
    elif expect is not None:
        if _ROLE_EKU[expect] not in _ekus(cert):
            raise PkiError(f"{who} is a {cert_kind(cert) or 'unknown'} certificate, not a {expect} one "
                           f"(extended key usage lacks {_EKU_NAMES[_ROLE_EKU[expect]]})")
        if expect == "terminal" and terminal_id_of(cert) != common_name(cert):
            raise PkiError(f"{who} does not carry its terminal id as {TERMINAL_URN}<id>")


# --------------------------------------------------------------------------------------------------
# development PKI


DEV_HOST = "egm-host"
DEV_SIGNER = "dev-code-signer"
DEV_HOST_KEM = "egm-host.kem"


def ensure_development_pki(
    state_dir: str | os.PathLike[str], terminal_id: str, *, allow_in_repo: bool = False
) -> dict[str, Path]:
    """On first start: a development CA, a terminal, a host and a code signer under ``<state>/pki/``.

    Idempotent: what exists is kept; a certificate missing, expired or revoked is issued again, a lost
    key is replaced by a renewal, and a CRL within a day of its nextUpdate is re-signed. Never for
    production: the CA key sits next to the certificates.
    """
    validate_name(terminal_id, "terminal id")
    directory = Path(state_dir) / "pki"
    _check_outside_repo(directory, allow_in_repo)
    files = ca_files(directory)
    if not files.cert.exists():
        create_ca(directory, name="Development Casino CA", allow_in_repo=allow_in_repo)
    wanted = {
        "terminal": (terminal_id, {}),
        "host": (DEV_HOST, {"dns": ["localhost", DEV_HOST], "ips": ["127.0.0.1", "::1"]}),
        "code_signer": (DEV_SIGNER, {}),
        "host_kem": (DEV_HOST_KEM, {}),
    }
    now = _utcnow()
    index = _load_index(files)
    out: dict[str, Path] = {
        "dir": directory, "ca_cert": files.cert, "ca_key": files.key, "crl": files.crl, "index": files.index,
    }
    for label, (name, extra) in wanted.items():
        kind = label.replace("_", "-")
        cert_path = directory / "issued" / f"{name}.cert.pem"
        key_path = directory / "issued" / f"{name}.key.pem"
        current = [
            e for e in index["certs"]
            if e["name"] == name and e["kind"] == kind and not e.get("revoked") and _parse_iso(e["not_after"]) > now
        ]
        if not (current and cert_path.is_file() and key_path.is_file()):
            if current:  # the files went missing: a new key, same subject
                renew(directory, name, allow_in_repo=allow_in_repo)
            else:  # never issued, expired or revoked
                issue(directory, kind, name, allow_in_repo=allow_in_repo, **extra)  # type: ignore[arg-type]
            index = _load_index(files)
        out[f"{label}_cert"] = cert_path
        out[f"{label}_key"] = key_path
    # Keep the development CRL fresh: verification refuses one past its nextUpdate.
    try:
        next_update = load_crl(files.crl).next_update_utc
    except PkiError:
        next_update = None
    if next_update is None or next_update - now < dt.timedelta(days=1):
        crl(directory)
    return out
