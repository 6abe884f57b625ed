"""GLI-11 software verification: the signed manifest checked at power-up, and the lab's hashes.

The installed software is every file under the product's package directories (``firmware``, ``hal``,
``drivers``, ``sim_hardware``, ``host``, ``egmproto``) except Python's bytecode caches. :func:`build_manifest`
lists those files with their SHA-256 and size; the code signer signs the manifest's canonical bytes
with Ed25519 (:func:`sign_manifest`); at power-up :func:`verify_installation` checks the signature
against the trusted code-signer keys and every file of the tree against the manifest, and fails closed
on anything it does not expect (a missing, changed or extra file, a symlinked directory, bytecode
outside ``__pycache__``, a manifest that is missing, corrupt or hostile). It never raises: the
self-test gets a :class:`VerificationResult` with one clear line.

:func:`lab_hash` is GLI-11's "software verification on request": a test lab's tool asks for SHA-1,
SHA-256, HMAC-SHA1 or HMAC-SHA256 (keyed with the lab's seed) over the same files, per file and
overall. The overall digest's framing is :data:`LAB_FRAMING` (``docs/software-verification.md``).

No private key is committed: a development checkout signs itself with a key pair it makes in
``<root>/.egm-dev/`` (:func:`ensure_development_signature`), trusted only when the configuration says
``development = true`` (:class:`SoftwareSettings`, :func:`power_up_check`).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import errno
import hashlib
import hmac
import json
import logging
import os
import re
import stat
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from firmware.errors import EgmError

log = logging.getLogger(__name__)

#: The top-level package directories that make up the installed software.
DEFAULT_PACKAGES: tuple[str, ...] = ("firmware", "hal", "drivers", "sim_hardware", "host", "egmproto")
#: The manifest's file hash.
ALGORITHM = "sha256"
#: The development signature's directory under the root (in ``.gitignore``).
DEV_DIR_NAME = ".egm-dev"
DEV_PRIVATE_KEY = "code-signer-dev.key.pem"
DEV_PUBLIC_KEY = "code-signer-dev.pub.pem"
SIGNED_MANIFEST = "manifest.signed.json"
#: A signed manifest larger than this is refused unread (this tree's is about 30 kB).
MAX_SIGNED_MANIFEST_BYTES = 16 * 1024 * 1024
#: At most this many mismatch lines are listed (the count in the reason stays exact).
MAX_MISMATCH_LINES = 1000
#: The lab hash algorithms: name -> (hashlib name, keyed with the seed).
LAB_ALGORITHMS: dict[str, tuple[str, bool]] = {
    "sha1": ("sha1", False),
    "sha256": ("sha256", False),
    "hmac-sha1": ("sha1", True),
    "hmac-sha256": ("sha256", True),
}
#: How the lab's overall digest frames the files (see docs/software-verification.md).
LAB_FRAMING = ("egm-lab-hash/1: for each file in manifest order: UTF-8 relative path, 0x00, "
               "size in bytes as ASCII decimal, 0x00, the file's bytes")

_BYTECODE_SUFFIXES = (".pyc", ".pyo")
_PACKAGE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")


class SoftwareError(EgmError):
    """A software-verification tool cannot do what it was asked (bad key, unreadable tree, bad seed)."""


# --- results and settings ---------------------------------------------------------------------------

@dataclass(frozen=True)
class VerificationResult:
    """What the power-up software check found. ``reason`` is one line, also when ``ok``."""

    ok: bool
    reason: str
    files_checked: int = 0                                   #: files hashed and compared
    mismatches: list[str] = field(default_factory=list)      #: "changed: P", "missing: P", "unexpected: P"...
    signer: str | None = None                                #: fingerprint of the key that verified
    manifest_sha256: str | None = None                       #: SHA-256 of the manifest's canonical bytes

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "reason": self.reason, "files_checked": self.files_checked,
                "mismatches": list(self.mismatches), "signer": self.signer,
                "manifest_sha256": self.manifest_sha256}


@dataclass(frozen=True)
class SoftwareSettings:
    """Where the terminal finds its signed manifest and whom it trusts.

    ``manifest``: the signed manifest (None: in development the development one, in production none,
    which fails the check). ``trusted_keys``: the code signers' public keys (PEM). ``development``:
    also trust the checkout's own development key, and (re)sign the tree with it at power-up; a
    development terminal's check therefore proves nothing and must never be used on a casino floor.
    """

    manifest: Path | None = None
    trusted_keys: tuple[Path, ...] = ()
    development: bool = False

    @classmethod
    def defaults(cls, root: Path, *, development: bool = False) -> SoftwareSettings:
        """The settings when the configuration says nothing but (possibly) ``development``.

        Production (the default, fail-safe): no manifest and no trusted key, so the check fails
        until both are configured. Development: the checkout's development manifest and key.
        """
        if not development:
            return cls(manifest=None, trusted_keys=(), development=False)
        key_dir = Path(root) / DEV_DIR_NAME
        return cls(manifest=key_dir / SIGNED_MANIFEST, trusted_keys=(key_dir / DEV_PUBLIC_KEY,),
                   development=True)

    def effective(self, root: Path) -> tuple[Path | None, tuple[Path, ...]]:
        """(manifest, trusted keys) the check uses: development adds the development key."""
        if not self.development:
            return self.manifest, tuple(self.trusted_keys)
        key_dir = Path(root) / DEV_DIR_NAME
        manifest = self.manifest if self.manifest is not None else key_dir / SIGNED_MANIFEST
        dev_key = key_dir / DEV_PUBLIC_KEY
        keys = tuple(self.trusted_keys) + (() if dev_key in self.trusted_keys else (dev_key,))
        return manifest, keys


def default_root() -> Path:
    """The directory that holds the installed ``firmware`` package (the repository in an editable
    install, ``site-packages`` otherwise)."""
    import firmware

    return Path(firmware.__file__).resolve().parent.parent


def installed_version() -> str:
    """The installed distribution's version (``egm-terminal``), else ``0+unknown``."""
    from importlib import metadata

    for name in ("egm-terminal", "egm"):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "0+unknown"


# --- the file set -----------------------------------------------------------------------------------

@dataclass
class _Tree:
    files: list[str]        #: relative POSIX paths, sorted
    problems: list[str]     #: entries that can be neither hashed nor ignored


def _check_packages(packages: Iterable[str]) -> tuple[str, ...]:
    if isinstance(packages, str):
        raise SoftwareError("packages must be a list of package directory names, not one string")
    result = tuple(packages)
    for name in result:
        if not isinstance(name, str) or not _PACKAGE_NAME.match(name):
            raise SoftwareError(f"not a top-level package name: {name!r}")
    if len(set(result)) != len(result):
        raise SoftwareError(f"a package is listed twice: {', '.join(result)}")
    return result


def _scan(root: Path, packages: Sequence[str]) -> _Tree:
    """Every file of the packages, except ``__pycache__`` directories; never follows a directory link.

    A symlinked directory, a special file (FIFO, socket, device), a broken link and bytecode outside
    ``__pycache__`` (Python imports a lone ``x.pyc``) are problems: they can be neither verified nor
    safely ignored.
    """
    files: list[str] = []
    problems: list[str] = []
    for package in packages:
        top = root / package
        if not top.is_dir():
            problems.append(f"missing package directory: {package}")
            continue
        stack = [(str(top), package)]
        while stack:
            directory, rel_dir = stack.pop()
            try:
                with os.scandir(directory) as it:
                    entries = list(it)
            except OSError as exc:
                problems.append(f"unreadable directory: {rel_dir} ({exc.strerror or exc})")
                continue
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}"
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "__pycache__":
                            stack.append((entry.path, rel))
                        continue
                    if entry.is_symlink():
                        if entry.is_dir():
                            problems.append(f"symlinked directory: {rel}")
                            continue
                        if not entry.is_file():
                            problems.append(f"broken or special symlink: {rel}")
                            continue
                    elif not entry.is_file(follow_symlinks=False):
                        problems.append(f"not a regular file: {rel}")
                        continue
                except OSError as exc:
                    problems.append(f"unreadable: {rel} ({exc.strerror or exc})")
                    continue
                if entry.name.endswith(_BYTECODE_SUFFIXES):
                    problems.append(f"bytecode outside __pycache__: {rel}")
                    continue
                files.append(rel)
    files.sort()
    return _Tree(files, problems)


def _read_regular(path: Path | str, limit: int | None = None) -> bytes:
    """The bytes of a regular file; never blocks on a FIFO that took a file's place."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if limit is not None and total > limit:
                break
        return b"".join(chunks)
    finally:
        os.close(fd)


def _problems_error(what: str, root: Path, problems: list[str]) -> SoftwareError:
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return SoftwareError(f"cannot {what} {root}: {'; '.join(problems[:5])}{more}")


# --- the manifest -----------------------------------------------------------------------------------

def _installed_files(root: Path, packages: tuple[str, ...], what: str) -> Iterator[tuple[str, bytes]]:
    """Every installed file of ``packages`` under ``root``, in manifest order, with its bytes;
    SoftwareError if the tree holds what cannot be verified or a file cannot be read."""
    tree = _scan(root, packages)
    if tree.problems:
        raise _problems_error(what, root, tree.problems)
    for rel in tree.files:
        try:
            data = _read_regular(root / rel)
        except OSError as exc:
            raise SoftwareError(f"cannot read {rel}: {exc.strerror or exc}") from exc
        yield rel, data


def installed_paths(root: Path, packages: Sequence[str] = DEFAULT_PACKAGES) -> list[str]:
    """The installed files of ``packages`` under ``root`` (relative POSIX paths), in manifest order:
    the files ``manifest`` lists and ``verify`` checks. Raises :class:`SoftwareError` as they do."""
    root = Path(root)
    tree = _scan(root, _check_packages(packages))
    if tree.problems:
        raise _problems_error("list the software of", root, tree.problems)
    return tree.files


def installed_files(root: Path, packages: Sequence[str] = DEFAULT_PACKAGES) -> Iterator[tuple[str, bytes]]:
    """:func:`installed_paths` with each file's bytes (the SAS ROM signature reads them)."""
    return _installed_files(Path(root), _check_packages(packages), "read")


def canonical_bytes(manifest: dict[str, Any]) -> bytes:
    """The bytes that are signed: sorted keys, no whitespace, ASCII."""
    return json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()


def build_manifest(root: Path, packages: Sequence[str] = DEFAULT_PACKAGES) -> dict[str, Any]:
    """The unsigned manifest of the software installed under ``root``.

    ``{"algorithm": "sha256", "created": UTC ISO time, "version": ..., "packages": [...],
    "files": [{"path": "firmware/cli.py", "sha256": hex, "size": bytes}, ...]}``, files sorted by
    relative POSIX path. Raises :class:`SoftwareError` if the tree holds something that cannot be
    verified (see :func:`_scan`).
    """
    root = Path(root)
    packages = _check_packages(packages)
    files = []
    for rel, data in _installed_files(root, packages, "build a manifest of"):
        files.append({"path": rel, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)})
    return {
        "algorithm": ALGORITHM,
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "version": installed_version(),
        "packages": list(packages),
        "files": files,
    }


# --- keys and signatures ----------------------------------------------------------------------------

def fingerprint(public_key: Ed25519PublicKey) -> str:
    """Hex SHA-256 of the raw 32-byte Ed25519 public key: how a signer is named."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def private_key_pem(key: Ed25519PrivateKey, password: bytes | None = None) -> bytes:
    """PKCS#8 PEM (encrypted with ``password`` if given)."""
    encryption = (serialization.BestAvailableEncryption(password) if password
                  else serialization.NoEncryption())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def public_key_pem(key: Ed25519PrivateKey | Ed25519PublicKey) -> bytes:
    """SubjectPublicKeyInfo PEM."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def _read_key_file(path: Path) -> bytes:
    try:
        data = _read_regular(path, limit=64 * 1024)
    except FileNotFoundError:
        raise SoftwareError(f"key file {path} does not exist") from None
    except OSError as exc:
        raise SoftwareError(f"key file {path} cannot be read: {exc.strerror or exc}") from None
    if len(data) > 64 * 1024:
        raise SoftwareError(f"key file {path} is too large to be a PEM key")
    return data


def load_private_key(path: Path, password: bytes | None = None) -> Ed25519PrivateKey:
    """The code signer's Ed25519 private key from a PKCS#8 PEM file."""
    path = Path(path)
    data = _read_key_file(path)
    try:
        key = serialization.load_pem_private_key(data, password=password)
    except TypeError:
        if password is None:
            raise SoftwareError(f"{path} is encrypted: give its passphrase") from None
        raise SoftwareError(f"{path} is not encrypted: give no passphrase") from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        hint = " (wrong passphrase?)" if password is not None else ""
        raise SoftwareError(f"{path} is not a PEM private key{hint}: {_first_line(exc)}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SoftwareError(f"{path} is not an Ed25519 key (the code signer's key must be Ed25519)")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """A trusted code signer's Ed25519 public key from a SubjectPublicKeyInfo PEM file."""
    path = Path(path)
    data = _read_key_file(path)
    if b"PRIVATE KEY" in data:
        raise SoftwareError(f"{path} holds a private key: trust the public key (SubjectPublicKeyInfo PEM)")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise SoftwareError(f"{path} is not a PEM public key: {_first_line(exc)}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SoftwareError(f"{path} is not an Ed25519 public key")
    return key


def sign_manifest(manifest: dict[str, Any], private_key: Ed25519PrivateKey) -> dict[str, Any]:
    """``{"manifest": ..., "signature": base64 Ed25519 over canonical_bytes(manifest), "signer": fp}``."""
    if not isinstance(private_key, Ed25519PrivateKey):
        raise SoftwareError("the code signer's key must be an Ed25519 private key")
    if not isinstance(manifest, dict):
        raise SoftwareError("a manifest is a JSON object")
    try:
        data = canonical_bytes(manifest)
    except (TypeError, ValueError) as exc:
        raise SoftwareError(f"the manifest cannot be written as JSON: {exc}") from None
    return {
        "manifest": json.loads(data),
        "signature": base64.b64encode(private_key.sign(data)).decode("ascii"),
        "signer": fingerprint(private_key.public_key()),
    }


def signed_json(signed: dict[str, Any]) -> str:
    """The signed manifest as written to a file (readable; the signature covers the canonical form)."""
    return json.dumps(signed, sort_keys=True, indent=1) + "\n"


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``path`` so that a reader sees the old or the new content, never half of it."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# --- verification -----------------------------------------------------------------------------------

class _Refused(Exception):
    """Internal: the check fails with this one-line reason."""


def _first_line(exc: BaseException, limit: int = 120) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class _Signed:
    manifest: dict[str, Any]
    canonical: bytes
    signature: bytes
    signer: str


def _read_signed(path: Path) -> _Signed:
    """Parse a signed manifest file, whatever it holds (nothing is trusted yet)."""
    try:
        data = _read_regular(path, limit=MAX_SIGNED_MANIFEST_BYTES)
    except FileNotFoundError:
        raise _Refused(f"signed manifest {path} is missing") from None
    except OSError as exc:
        raise _Refused(f"signed manifest {path} cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_SIGNED_MANIFEST_BYTES:
        raise _Refused(f"signed manifest {path} is larger than {MAX_SIGNED_MANIFEST_BYTES} bytes")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _Refused(f"signed manifest {path} is not valid JSON: {_first_line(exc)}") from None
    if not isinstance(doc, dict):
        raise _Refused(f"signed manifest {path} is not a JSON object with manifest, signature and signer")
    manifest, signature, signer = doc.get("manifest"), doc.get("signature"), doc.get("signer")
    if not isinstance(manifest, dict):
        raise _Refused(f"signed manifest {path} has no manifest object")
    if not isinstance(signature, str):
        raise _Refused(f"signed manifest {path} has no signature")
    try:
        raw_signature = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        raise _Refused(f"signed manifest {path}: the signature is not base64") from None
    if len(raw_signature) != 64:
        raise _Refused(f"signed manifest {path}: the signature is not an Ed25519 signature (64 bytes)")
    if not isinstance(signer, str) or not _HEX64.match(signer):
        raise _Refused(f"signed manifest {path}: the signer is not a SHA-256 key fingerprint")
    try:
        canonical = canonical_bytes(manifest)
    except (TypeError, ValueError, RecursionError) as exc:
        raise _Refused(f"signed manifest {path} cannot be canonicalised: {_first_line(exc)}") from None
    return _Signed(manifest, canonical, raw_signature, signer)


def _trusted_keys(paths: Sequence[Path]) -> dict[str, Ed25519PublicKey]:
    if not paths:
        raise _Refused("no trusted code-signer public key is configured")
    keys: dict[str, Ed25519PublicKey] = {}
    for path in paths:
        try:
            key = load_public_key(Path(path))
        except SoftwareError as exc:
            raise _Refused(f"trusted key: {exc}") from None
        keys[fingerprint(key)] = key
    return keys


def _check_signature(signed: _Signed, keys: dict[str, Ed25519PublicKey]) -> None:
    key = keys.get(signed.signer)
    if key is None:
        trusted = ", ".join(fp[:16] for fp in keys)
        raise _Refused(f"the manifest's signer {signed.signer[:16]} is not trusted (trusted: {trusted})")
    try:
        key.verify(signed.signature, signed.canonical)
    except InvalidSignature:
        raise _Refused(f"the signature does not verify: the manifest was changed after signing, "
                       f"or was not signed by {signed.signer[:16]}") from None


def _valid_relpath(path: Any, packages: tuple[str, ...]) -> bool:
    if not isinstance(path, str) or "\x00" in path or "\\" in path:
        return False
    parts = path.split("/")
    return (len(parts) >= 2 and parts[0] in packages
            and not any(part in ("", ".", "..") for part in parts))


def _check_manifest(manifest: dict[str, Any]) -> tuple[tuple[str, ...], dict[str, tuple[str, int]]]:
    """The manifest's packages and files (path -> (sha256, size)); refuses a malformed one."""
    def bad(what: str) -> _Refused:
        return _Refused(f"the signed manifest is malformed: {what}")

    if manifest.get("algorithm") != ALGORITHM:
        raise bad(f"algorithm {str(manifest.get('algorithm'))[:40]!r} is not {ALGORITHM!r}")
    packages = manifest.get("packages")
    if not isinstance(packages, list):
        raise bad("packages is not a list")
    try:
        packages = _check_packages(packages)
    except SoftwareError as exc:
        raise bad(str(exc)) from None
    files = manifest.get("files")
    if not isinstance(files, list):
        raise bad("files is not a list")
    entries: dict[str, tuple[str, int]] = {}
    for index, item in enumerate(files):
        if not isinstance(item, dict):
            raise bad(f"file #{index} is not an object")
        path, digest, size = item.get("path"), item.get("sha256"), item.get("size")
        if not _valid_relpath(path, packages):
            raise bad(f"file #{index} has an unsafe or foreign path {str(path)[:80]!r}")
        if not isinstance(digest, str) or not _HEX64.match(digest):
            raise bad(f"{path}: sha256 is not 64 lower-case hex digits")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise bad(f"{path}: size is not a whole number of bytes")
        if path in entries:
            raise bad(f"{path} is listed twice")
        entries[path] = (digest, size)
    return packages, entries


def _compare(root: Path, packages: tuple[str, ...],
             entries: dict[str, tuple[str, int]]) -> tuple[int, list[str]]:
    """(files hashed, mismatch lines) of the tree under ``root`` against the manifest's entries.

    Only files found by walking the tree are opened: a path in the manifest is never opened.
    """
    tree = _scan(root, packages)
    mismatches = list(tree.problems)
    checked = 0
    present = set()
    for rel in tree.files:
        present.add(rel)
        expected = entries.get(rel)
        if expected is None:
            mismatches.append(f"unexpected: {rel}")
            continue
        try:
            data = _read_regular(root / rel)
        except OSError as exc:
            mismatches.append(f"unreadable: {rel} ({exc.strerror or exc})")
            continue
        checked += 1
        if len(data) != expected[1] or hashlib.sha256(data).hexdigest() != expected[0]:
            mismatches.append(f"changed: {rel}")
    mismatches.extend(f"missing: {rel}" for rel in sorted(entries) if rel not in present)
    return checked, mismatches


def verify_installation(signed_path: Path, root: Path, trusted_public_keys: Iterable[Path], *,
                        required_packages: Sequence[str] = DEFAULT_PACKAGES) -> VerificationResult:
    """Check the signed manifest at ``signed_path`` and the software under ``root`` against it.

    ``ok`` only if the manifest parses, its signer is one of ``trusted_public_keys`` (PEM files), the
    signature verifies, it covers ``required_packages``, and every file under its packages is
    exactly the listed one (no file changed, missing or extra). Never raises.
    """
    try:
        return _verify(Path(signed_path), Path(root), list(trusted_public_keys), tuple(required_packages))
    except Exception as exc:  # the power-up check fails closed; it never stops the terminal with a trace
        log.exception("software verification failed unexpectedly")
        return VerificationResult(False, f"software verification error: {type(exc).__name__}: "
                                         f"{_first_line(exc)}")


def _verify(signed_path: Path, root: Path, trusted: list[Path],
            required: tuple[str, ...]) -> VerificationResult:
    try:
        signed = _read_signed(signed_path)
    except _Refused as exc:
        return VerificationResult(False, str(exc))
    manifest_sha256 = hashlib.sha256(signed.canonical).hexdigest()
    try:
        _check_signature(signed, _trusted_keys(trusted))
    except _Refused as exc:
        return VerificationResult(False, str(exc), manifest_sha256=manifest_sha256)
    signer = signed.signer
    try:
        packages, entries = _check_manifest(signed.manifest)
        uncovered = [p for p in required if p not in packages]
        if uncovered:
            raise _Refused(f"the signed manifest does not cover package(s) {', '.join(uncovered)}")
    except _Refused as exc:
        return VerificationResult(False, str(exc), signer=signer, manifest_sha256=manifest_sha256)
    checked, mismatches = _compare(root, packages, entries)
    version = str(signed.manifest.get("version"))[:40]
    if mismatches:
        shown = "; ".join(mismatches[:3]) + ("; ..." if len(mismatches) > 3 else "")
        reason = f"{len(mismatches)} difference(s) from the signed manifest: {shown}"
        if len(mismatches) > MAX_MISMATCH_LINES:
            mismatches = mismatches[:MAX_MISMATCH_LINES] + [
                f"... and {len(mismatches) - MAX_MISMATCH_LINES} more"]
        return VerificationResult(False, reason, checked, mismatches, signer, manifest_sha256)
    reason = f"{checked} files match the manifest signed by {signer[:16]} (version {version})"
    return VerificationResult(True, reason, checked, [], signer, manifest_sha256)


# --- development signing ----------------------------------------------------------------------------

def _create_private_key(path: Path) -> None:
    """Write a new key to ``path`` unless one exists; atomic, so concurrent starts agree on one key."""
    key = Ed25519PrivateKey.generate()
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(private_key_pem(key))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:  # another process made it first: use theirs
            pass
        except OSError:  # no hard links on this file system: rename (last writer wins)
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def ensure_development_signature(root: Path, key_dir: Path | None = None) -> Path:
    """Make sure ``key_dir/manifest.signed.json`` is a current development signature of ``root``.

    Creates the development code-signer key pair in ``key_dir`` (default ``<root>/.egm-dev``) if it
    is missing, and (re)writes the signed manifest if it is missing, unreadable, not signed by the
    development key, or lists other files, hashes, packages or version than the tree now has.
    Returns the signed manifest's path. Raises :class:`SoftwareError`.
    """
    root = Path(root)
    key_dir = Path(key_dir) if key_dir is not None else root / DEV_DIR_NAME
    private_path, public_path = key_dir / DEV_PRIVATE_KEY, key_dir / DEV_PUBLIC_KEY
    signed_path = key_dir / SIGNED_MANIFEST
    try:
        key_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not private_path.exists():
            _create_private_key(private_path)
        key = load_private_key(private_path)
        public = public_key_pem(key)
        try:
            current_public = _read_regular(public_path, limit=64 * 1024)
        except OSError:
            current_public = b""
        if current_public != public:
            write_atomic(public_path, public)
        fresh = build_manifest(root)
        if not _dev_signature_current(signed_path, fresh, key.public_key()):
            write_atomic(signed_path, signed_json(sign_manifest(fresh, key)).encode())
    except OSError as exc:
        raise SoftwareError(f"cannot write the development signature in {key_dir}: "
                            f"{exc.strerror or exc}") from None
    return signed_path


def _dev_signature_current(signed_path: Path, fresh: dict[str, Any], public: Ed25519PublicKey) -> bool:
    try:
        signed = _read_signed(signed_path)
        _check_signature(signed, {fingerprint(public): public})
    except _Refused:
        return False
    old = signed.manifest
    return all(old.get(k) == fresh[k] for k in ("algorithm", "version", "packages", "files"))


# --- the power-up check -----------------------------------------------------------------------------

def power_up_check(settings: SoftwareSettings, root: Path | None = None) -> VerificationResult:
    """The self-test's ``software_signature`` check. Never raises.

    In development, when the manifest is the development one (``<root>/.egm-dev``), first makes or
    refreshes it with the development key (:func:`ensure_development_signature`).
    """
    try:
        root = Path(root) if root is not None else default_root()
        manifest, keys = settings.effective(root)
        if manifest is None:
            return VerificationResult(False, "no signed manifest is configured (production: sign the "
                                             "build with egm software sign and configure it)")
        if settings.development and Path(manifest) == root / DEV_DIR_NAME / SIGNED_MANIFEST:
            ensure_development_signature(root)
        return verify_installation(manifest, root, keys)
    except SoftwareError as exc:
        return VerificationResult(False, str(exc))
    except Exception as exc:  # fail closed
        log.exception("software power-up check failed unexpectedly")
        return VerificationResult(False, f"software verification error: {type(exc).__name__}: "
                                         f"{_first_line(exc)}")


# --- the lab's hashes on request --------------------------------------------------------------------

def lab_hash(root: Path, algorithm: str, seed: bytes | None = None,
             packages: Sequence[str] = DEFAULT_PACKAGES) -> dict[str, Any]:
    """The test lab's digests of the installed software: per file and overall (:data:`LAB_FRAMING`).

    Plain ``sha1``/``sha256`` take no seed; ``hmac-sha1``/``hmac-sha256`` need one (the lab's
    challenge, the HMAC key). Raises :class:`SoftwareError`.
    """
    if algorithm not in LAB_ALGORITHMS:
        raise SoftwareError(f"unknown hash algorithm {algorithm!r}; choose {', '.join(LAB_ALGORITHMS)}")
    name, keyed = LAB_ALGORITHMS[algorithm]
    if keyed:
        if seed is None:
            raise SoftwareError(f"{algorithm} needs a seed (the lab's challenge, given in hex)")
        if not isinstance(seed, bytes | bytearray) or len(seed) == 0:
            raise SoftwareError(f"{algorithm} needs a non-empty seed")
        key = bytes(seed)

        def new() -> Any:
            return hmac.new(key, digestmod=name)
    else:
        if seed is not None:
            raise SoftwareError(f"{algorithm} is a plain hash and takes no seed; "
                                f"use hmac-{algorithm} for a seeded digest")

        def new() -> Any:
            return hashlib.new(name)

    root = Path(root)
    packages = _check_packages(packages)
    overall = new()
    files = []
    for rel, data in _installed_files(root, packages, "hash"):
        per_file = new()
        per_file.update(data)
        overall.update(rel.encode("utf-8", "surrogateescape") + b"\x00" + str(len(data)).encode("ascii")
                       + b"\x00")
        overall.update(data)
        files.append({"path": rel, "size": len(data), "digest": per_file.hexdigest()})
    return {
        "algorithm": algorithm,
        "seed": bytes(seed).hex() if seed is not None else None,
        "version": installed_version(),
        "packages": list(packages),
        "framing": LAB_FRAMING,
        "files": files,
        "overall": overall.hexdigest(),
    }
