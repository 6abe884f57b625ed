"""Detached signatures of release files (the Debian packages of ``make release``; docs/release.md).

A signature file ``FILE.sig`` is JSON::

    {"format": "egm-release-signature/1",
     "statement": {"file": "egm-terminal_0.1.0_amd64.deb", "sha256": "<hex>", "size": 123},
     "signature": "<base64 Ed25519 over the statement's canonical JSON>",
     "certificate": "<PEM of the code signer's certificate>"}

The code signer (``egm certs issue --kind code-signer``, an Ed25519 key) signs the statement, not the
file itself: the file is hashed in chunks, so a package of any size is signed and checked without
holding it in memory. A technician checks a file against the casino CA (and its CRL): the certificate
must chain to the CA as a code signer, the signature must verify, and the file's size and SHA-256
must be the statement's. The file's name is in the statement for the record but is not checked
(a renamed copy is the same bytes).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from egmproto.pki import PkiError, common_name, load_certificate, serial_hex, verify_chain

FORMAT = "egm-release-signature/1"
_CHUNK = 1 << 20
_MAX_SIGNATURE_FILE = 64 * 1024


class ReleaseSignatureError(PkiError):
    """A release file could not be signed, or its signature does not hold (one-line reason)."""


@dataclass(frozen=True)
class SignatureCheck:
    """What a good signature says: the file, its digest and who signed it."""

    file: str
    sha256: str
    size: int
    signer: str
    serial: str


def file_digest(path: str | os.PathLike[str]) -> tuple[str, int]:
    """The SHA-256 (hex) and size of the file at ``path``, read in chunks."""
    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
    except OSError as exc:
        raise ReleaseSignatureError(f"cannot read {path}: {exc.strerror or exc}") from None
    return digest.hexdigest(), size


def _canonical(statement: dict[str, Any]) -> bytes:
    return json.dumps(statement, sort_keys=True, separators=(",", ":")).encode("ascii")


def sign_file(path: str | os.PathLike[str], key: Ed25519PrivateKey, cert_pem: bytes) -> dict[str, Any]:
    """The detached signature document of the file at ``path`` by the code signer ``key``/``cert_pem``."""
    if not isinstance(key, Ed25519PrivateKey):
        raise ReleaseSignatureError("the code signer's key must be an Ed25519 private key")
    cert = load_certificate(cert_pem)
    if cert.public_key() != key.public_key():
        raise ReleaseSignatureError("the code signer's key does not belong to its certificate")
    sha256, size = file_digest(path)
    statement = {"file": Path(path).name, "sha256": sha256, "size": size}
    return {
        "format": FORMAT,
        "statement": statement,
        "signature": base64.b64encode(key.sign(_canonical(statement))).decode("ascii"),
        "certificate": cert_pem.decode("ascii"),
    }


def write_signature(path: str | os.PathLike[str], document: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(document, sort_keys=True, indent=1) + "\n", encoding="utf-8")


def _read_document(sig_path: Path) -> dict[str, Any]:
    try:
        if sig_path.stat().st_size > _MAX_SIGNATURE_FILE:
            raise ReleaseSignatureError(f"{sig_path} is too large to be a signature file")
        document = json.loads(sig_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReleaseSignatureError(f"no signature file {sig_path}") from None
    except OSError as exc:
        raise ReleaseSignatureError(f"cannot read {sig_path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError):
        raise ReleaseSignatureError(f"{sig_path} is not a JSON signature file") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ReleaseSignatureError(f"{sig_path} is not an {FORMAT} signature")
    statement = document.get("statement")
    if (not isinstance(statement, dict) or set(statement) != {"file", "sha256", "size"}
            or not isinstance(statement["sha256"], str) or not isinstance(statement["size"], int)
            or not isinstance(statement["file"], str)
            or not isinstance(document.get("signature"), str)
            or not isinstance(document.get("certificate"), str)):
        raise ReleaseSignatureError(f"{sig_path}: the signature document has the wrong shape")
    return document


def verify_file(
    path: str | os.PathLike[str],
    sig_path: str | os.PathLike[str],
    ca_cert: str | os.PathLike[str],
    crl: str | os.PathLike[str] | None = None,
) -> SignatureCheck:
    """Return only if ``sig_path`` is a code signer's good signature of exactly the file at ``path``;
    otherwise raise :class:`ReleaseSignatureError` (or :class:`PkiError` for the chain) with the reason."""
    document = _read_document(Path(sig_path))
    cert = load_certificate(document["certificate"].encode("ascii"))
    verify_chain(cert, ca_cert, crl, expect="code-signer")
    public = cert.public_key()
    if not isinstance(public, Ed25519PublicKey):
        raise ReleaseSignatureError("the code signer's certificate does not hold an Ed25519 key")
    statement = document["statement"]
    try:
        signature = base64.b64decode(document["signature"], validate=True)
        public.verify(signature, _canonical(statement))
    except (binascii.Error, ValueError, InvalidSignature):
        raise ReleaseSignatureError("the signature does not verify") from None
    sha256, size = file_digest(path)
    if (sha256, size) != (statement["sha256"], statement["size"]):
        raise ReleaseSignatureError(
            f"{Path(path).name} is not the signed file (sha256 {sha256[:16]}..., {size} bytes; "
            f"signed: {statement['sha256'][:16]}..., {statement['size']} bytes)")
    return SignatureCheck(file=statement["file"], sha256=sha256, size=size,
                          signer=common_name(cert) or "?", serial=serial_hex(cert.serial_number))
