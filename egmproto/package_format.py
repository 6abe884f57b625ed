"""The game package: a code-signed bundle of game options a host offers and a technician approves.

A package (``*.egmpkg``, format ``egm-package/1``, docs/packages.md) is one JSON object::

    {"format": "egm-package/1",
     "manifest": base64(manifest bytes),          # the exact bytes the code signer signed
     "signature": base64(Ed25519 signature of the manifest bytes),
     "certificate": PEM of the code signer's certificate (kind code-signer, from the casino CA),
     "files": {path: base64(content), ...}}

and the manifest is a JSON object: ``format``, ``name``, ``version``, ``description``, ``created``
(ISO 8601) and ``files``: ``[{"path", "sha256", "size"}, ...]``, exactly the container's files.
The one file a package must carry is ``options.toml``: a table per game id, in the keys of the
configuration's ``[games.options.<game>]`` (the rules files' option names); installing the package
sets those options as ``egm service config set`` would, after the same jurisdiction check.

Firmware code is not installed this way: a package changes the options of games the verified
software already contains, so the signed software manifest (docs/software-verification.md) still
describes everything that runs.

:func:`parse` checks the structure, :func:`verify` the signer's certificate (chain to the casino CA,
not revoked, codeSigning), the signature and every file's digest and size. Both raise
:class:`PackageRejected` with a reason code (:data:`REASONS`) and one line; nothing here writes a
file or keeps state, so the host (which checks a package before offering it) and the terminal
(which checks it again after the download and again before installing it) share it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding
from packaging.version import InvalidVersion, Version

from egmproto import x509parse
from egmproto.errors import EgmError

FORMAT = "egm-package/1"
SUFFIX = ".egmpkg"
OPTIONS_FILE = "options.toml"
#: A package larger than this is refused unread (a package of game options is a few kB).
MAX_PACKAGE_BYTES = 4 * 1024 * 1024
MAX_FILES = 64
MAX_PATH = 128
MAX_DESCRIPTION = 500

#: reason code -> what it means (docs/packages.md lists the same).
REASONS: dict[str, str] = {
    "too_large": f"the package is larger than {MAX_PACKAGE_BYTES} bytes",
    "malformed": "not an egm-package/1 container, or its manifest is not one",
    "digest_mismatch": "the downloaded bytes do not have the SHA-256 the host offered",
    "untrusted_signer": "the signer's certificate is not a valid, unrevoked code-signer certificate of the casino CA",
    "bad_signature": "the signature does not verify with the signer's key",
    "file_mismatch": "a file is missing, extra, or differs from the manifest",
    "bad_content": "options.toml is missing or holds options the firmware does not accept",
    "download_failed": "the package could not be downloaded",
    "downgrade": "this package is installed at the same or a later version (no rollback)",
}

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\Z")
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+-]{0,31}\Z")
_PATH_PART = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}\Z")
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")
_MANIFEST_KEYS = {"format", "name", "version", "description", "created", "files"}
_CONTAINER_KEYS = {"format", "manifest", "signature", "certificate", "files"}


class PackageRejected(EgmError):
    """A package that must not be installed: ``reason`` is a code of :data:`REASONS`."""

    def __init__(self, reason: str, detail: str) -> None:
        assert reason in REASONS, reason
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Package:
    """A parsed package (structure checked; :func:`verify` says whether to trust it)."""

    name: str
    version: str
    description: str
    created: str
    files: Mapping[str, bytes]
    manifest_bytes: bytes
    signature: bytes
    certificate: x509.Certificate
    sha256: str                      #: of the whole container, as the host offers it

    def options(self) -> dict[str, dict[str, Any]]:
        """``options.toml`` as game id -> option table (:class:`PackageRejected` if it is not one)."""
        raw = self.files.get(OPTIONS_FILE)
        if raw is None:
            raise PackageRejected("bad_content", f"the package has no {OPTIONS_FILE}")
        try:
            doc = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise PackageRejected("bad_content", f"{OPTIONS_FILE}: {exc}") from None
        if not doc:
            raise PackageRejected("bad_content", f"{OPTIONS_FILE} sets no game's options")
        for game, table in doc.items():
            if not isinstance(table, dict):
                raise PackageRejected("bad_content", f"{OPTIONS_FILE}: {game!r} must be a table of options")
        return doc

    def checked_options(self, accept: Callable[[str, dict[str, Any]], object]) -> dict[str, dict[str, Any]]:
        """:meth:`options`, each table accepted by ``accept(game, table)``: the firmware's games (a
        known id, known options, valid values: ``firmware.cabinet.packages.accept_game_options``),
        passed in because this format is shared with the host, which knows no games. An
        :class:`EgmError` from ``accept`` refuses the package with its first line."""
        options = self.options()
        for game, table in options.items():
            try:
                accept(game, table)
            except EgmError as exc:
                raise PackageRejected("bad_content", f"{OPTIONS_FILE}: {str(exc).splitlines()[0]}") from None
        return options

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "description": self.description,
                "created": self.created, "sha256": self.sha256, "signer": signer_name(self.certificate),
                "files": {p: len(b) for p, b in sorted(self.files.items())}}


def signer_name(cert: x509.Certificate) -> str:
    names = cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
    return str(names[0].value) if names else "?"


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PackageRejected("malformed", f"package name {name!r}: 1-64 of a-z 0-9 . _ -, starting alnum")
    return name


def check_version(version: Any) -> str:
    """1-32 of ``A-Z a-z 0-9 . + -`` that read as a PEP 440 version (1.2.0, 2.0rc1, 1.0.0-beta), so
    that two versions of a package can be ordered (no downgrade, :func:`is_newer`)."""
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise PackageRejected("malformed", f"package version {version!r}: 1-32 of A-Z a-z 0-9 . + -")
    try:
        Version(version)
    except InvalidVersion:
        raise PackageRejected("malformed", f"package version {version!r} is not a version number "
                                           "(PEP 440: 1.2.0, 2.0rc1)") from None
    return version


def is_newer(version: str, than: str) -> bool:
    """Whether package version ``version`` comes after ``than`` (PEP 440 ordering: 1.10 > 1.9)."""
    return Version(version) > Version(than)


def check_path(path: Any) -> str:
    """A relative POSIX path of plain names: no ``..``, no leading dot or slash, at most 4 deep."""
    if not isinstance(path, str) or not 0 < len(path) <= MAX_PATH:
        raise PackageRejected("malformed", f"file path {path!r} is not 1-{MAX_PATH} characters")
    parts = path.split("/")
    if len(parts) > 4 or not all(_PATH_PART.fullmatch(p) for p in parts):
        raise PackageRejected("malformed", f"file path {path!r} is not a plain relative path")
    return path


def _b64(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise PackageRejected("malformed", f"{what} is not base64 text")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise PackageRejected("malformed", f"{what} is not valid base64") from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise PackageRejected("malformed", f"key {key!r} appears twice")
        out[key] = value
    return out


def _json(data: bytes, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates,
                         parse_constant=lambda c: _refuse_constant(c, what))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise PackageRejected("malformed", f"{what} is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise PackageRejected("malformed", f"{what} is not a JSON object")
    return doc


def _refuse_constant(constant: str, what: str) -> Any:
    raise PackageRejected("malformed", f"{what} holds {constant}")


def parse(data: bytes) -> Package:
    """The package in ``data``, structure checked (not yet trusted: see :func:`verify`)."""
    if not isinstance(data, (bytes, bytearray)):
        raise PackageRejected("malformed", "a package is bytes")
    if len(data) > MAX_PACKAGE_BYTES:
        raise PackageRejected("too_large", f"{len(data)} bytes; at most {MAX_PACKAGE_BYTES}")
    digest = hashlib.sha256(data).hexdigest()
    container = _json(bytes(data), "the package")
    if set(container) != _CONTAINER_KEYS or container.get("format") != FORMAT:
        raise PackageRejected("malformed", f"expected a {FORMAT} container with keys "
                                           f"{', '.join(sorted(_CONTAINER_KEYS))}")
    manifest_bytes = _b64(container["manifest"], "the manifest")
    signature = _b64(container["signature"], "the signature")
    if not isinstance(container["certificate"], str):
        raise PackageRejected("malformed", "the certificate is not PEM text")
    try:
        cert = x509parse.certificate(container["certificate"].encode("ascii"))
    except x509parse.PARSE_ERRORS:
        raise PackageRejected("malformed", "the certificate is not a PEM X.509 certificate") from None
    raw_files = container["files"]
    if not isinstance(raw_files, dict) or len(raw_files) > MAX_FILES:
        raise PackageRejected("malformed", f"files must be an object of at most {MAX_FILES} entries")
    files = {check_path(p): _b64(v, f"file {p!r}") for p, v in raw_files.items()}

    manifest = _json(manifest_bytes, "the manifest")
    if set(manifest) != _MANIFEST_KEYS or manifest["format"] != FORMAT:
        raise PackageRejected("malformed", f"the manifest must have exactly {', '.join(sorted(_MANIFEST_KEYS))}")
    description, created = manifest["description"], manifest["created"]
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
        raise PackageRejected("malformed", f"description must be text of at most {MAX_DESCRIPTION} characters")
    if not isinstance(created, str) or len(created) > 64:
        raise PackageRejected("malformed", "created must be an ISO 8601 time")
    try:
        datetime.fromisoformat(created)
    except ValueError:
        raise PackageRejected("malformed", f"created {created!r} is not an ISO 8601 time") from None
    listed = manifest["files"]
    if not isinstance(listed, list) or len(listed) > MAX_FILES:
        raise PackageRejected("malformed", f"the manifest's files must be a list of at most {MAX_FILES}")
    for entry in listed:
        if not isinstance(entry, dict) or set(entry) != {"path", "sha256", "size"}:
            raise PackageRejected("malformed", "each manifest file is {path, sha256, size}")
        check_path(entry["path"])
        if not isinstance(entry["sha256"], str) or not _HEX64.fullmatch(entry["sha256"]):
            raise PackageRejected("malformed", f"{entry['path']}: sha256 must be 64 lower-case hex digits")
        if isinstance(entry["size"], bool) or not isinstance(entry["size"], int) or entry["size"] < 0:
            raise PackageRejected("malformed", f"{entry['path']}: size must be a count")
    return Package(check_name(manifest["name"]), check_version(manifest["version"]), description, created,
                   files, manifest_bytes, signature, cert, digest)


def verify(package: Package, check_signer: Callable[[x509.Certificate], None]) -> None:
    """Return only if ``package`` is what a trusted code signer signed, file for file.

    ``check_signer(cert)`` raises (any :class:`EgmError`) unless the certificate is a valid, unrevoked
    code-signer certificate of the casino CA (``Trust.check(cert, "code-signer")``).
    """
    try:
        check_signer(package.certificate)
    except (EgmError, ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise PackageRejected("untrusted_signer", str(exc).splitlines()[0][:300]) from None
    key = package.certificate.public_key()
    if not isinstance(key, Ed25519PublicKey):
        raise PackageRejected("untrusted_signer", "the code signer's key is not Ed25519")
    try:
        key.verify(package.signature, package.manifest_bytes)
    except InvalidSignature:
        raise PackageRejected("bad_signature", f"{package.name} {package.version}: the signature does not "
                                               f"verify with {signer_name(package.certificate)}'s key") from None
    listed = json.loads(package.manifest_bytes)["files"]
    paths = [e["path"] for e in listed]
    if len(set(paths)) != len(paths) or set(paths) != set(package.files):
        missing, extra = sorted(set(paths) - set(package.files)), sorted(set(package.files) - set(paths))
        raise PackageRejected("file_mismatch", f"missing {missing or '-'}, not in the manifest {extra or '-'}")
    for entry in listed:
        content = package.files[entry["path"]]
        if len(content) != entry["size"] or hashlib.sha256(content).hexdigest() != entry["sha256"]:
            raise PackageRejected("file_mismatch", f"{entry['path']} differs from the signed manifest")


def load(data: bytes, check_signer: Callable[[x509.Certificate], None], *,
         expected_sha256: str | None = None) -> Package:
    """:func:`parse` then :func:`verify`; with ``expected_sha256`` the bytes must be those offered."""
    if expected_sha256 is not None and len(data) <= MAX_PACKAGE_BYTES \
            and hashlib.sha256(data).hexdigest() != expected_sha256:
        raise PackageRejected("digest_mismatch", f"got {hashlib.sha256(data).hexdigest()[:16]}..., "
                                                 f"offered {expected_sha256[:16]}...")
    package = parse(data)
    verify(package, check_signer)
    return package


def build(name: str, version: str, files: Mapping[str, bytes], *, signing_key: Ed25519PrivateKey,
          certificate: x509.Certificate, description: str = "", created: datetime | None = None) -> bytes:
    """A signed package of ``files`` (the code signer's tool: ``egm package build``)."""
    check_name(name)
    check_version(version)
    if OPTIONS_FILE not in files:
        raise PackageRejected("bad_content", f"a package must carry {OPTIONS_FILE}")
    if not isinstance(signing_key, Ed25519PrivateKey):
        raise PackageRejected("untrusted_signer", "the code signer's key must be Ed25519")
    if signing_key.public_key().public_bytes_raw() != _raw(certificate):
        raise PackageRejected("untrusted_signer", "the key does not belong to the certificate")
    if len(description) > MAX_DESCRIPTION:
        raise PackageRejected("malformed", f"description longer than {MAX_DESCRIPTION} characters")
    listed = [{"path": check_path(p), "sha256": hashlib.sha256(b).hexdigest(), "size": len(b)}
              for p, b in sorted(files.items())]
    when = (created or datetime.now(UTC)).isoformat()
    manifest = json.dumps({"format": FORMAT, "name": name, "version": version, "description": description,
                           "created": when, "files": listed}, sort_keys=True, separators=(",", ":")).encode()
    container = {
        "format": FORMAT,
        "manifest": base64.b64encode(manifest).decode("ascii"),
        "signature": base64.b64encode(signing_key.sign(manifest)).decode("ascii"),
        "certificate": certificate.public_bytes(Encoding.PEM).decode("ascii"),
        "files": {p: base64.b64encode(b).decode("ascii") for p, b in sorted(files.items())},
    }
    data = json.dumps(container, sort_keys=True, indent=1).encode("utf-8") + b"\n"
    if len(data) > MAX_PACKAGE_BYTES:
        raise PackageRejected("too_large", f"{len(data)} bytes; at most {MAX_PACKAGE_BYTES}")
    return data


def _raw(cert: x509.Certificate) -> bytes | None:
    key = cert.public_key()
    return key.public_bytes_raw() if isinstance(key, Ed25519PublicKey) else None
