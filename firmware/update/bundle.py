"""RAUC bundles: made with ``rauc bundle``, checked and unpacked with ``rauc info``/``rauc extract``.

A bundle is RAUC's ``verity`` format: a SquashFS holding ``manifest.raucm`` and the payload
``app.tar`` (the application tree, :mod:`firmware.update.tree`), then a dm-verity hash tree, then a
CMS signature over the manifest (which names the payload's SHA-256 and the verity root hash). The
signer is the product PKI's ``update-signer`` (ECDSA P-256, EKU codeSigning): bookworm's OpenSSL 3.0
cannot put an Ed25519 signer into CMS, so the ``code-signer`` key cannot sign bundles. RAUC checks
the chain against the casino CA with ``check-purpose=codesign``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from firmware.update.errors import UpdateError, UpdateRefused
from firmware.update.tree import pack

__all__ = ["BundleInfo", "check", "extract", "make", "pack", "rauc", "system_conf"]
from firmware.update.version import parse

log = logging.getLogger(__name__)

COMPATIBLE = "egm-terminal"
SLOT_CLASS = "appfs"
PAYLOAD = "app.tar"
#: Below this many bytes the payload is not compressed (RAUC wants a SquashFS over 4 KiB).
SMALL_PAYLOAD = 64 * 1024
TIMEOUT_S = 600


@dataclass(frozen=True)
class BundleInfo:
    compatible: str
    version: str
    payload_sha256: str
    payload_size: int
    signer: str          #: the signer's subject as RAUC reports it


def rauc() -> str:
    path = shutil.which("rauc")
    if path is None:
        raise UpdateError("rauc is not installed (apt-get install -y rauc squashfs-tools)")
    return path


def system_conf(directory: Path, keyring: Path, compatible: str = COMPATIBLE, crl: Path | None = None) -> Path:
    """A system.conf for checking bundles only: the keyring, codesign purpose, no bootloader.

    With ``crl`` (the casino CA's CRL, ``egm certs revoke`` rewrites it) the keyring is the CA and
    the CRL in one file and RAUC checks it (``check-crl=true``): a revoked signer is refused, and
    so is a CRL past its next update (``egm certs crl`` signs a fresh one)."""
    if crl is not None:
        if not Path(crl).is_file():
            raise UpdateError(f"the CRL {crl} is not a file (egm certs crl makes one; --no-crl skips the check)")
        combined = directory / "keyring.pem"
        combined.write_bytes(Path(keyring).read_bytes().rstrip(b"\n") + b"\n" + Path(crl).read_bytes())
        keyring = combined
    conf = directory / "system.conf"
    conf.write_text(
        "[system]\n"
        f"compatible={compatible}\n"
        "bootloader=noop\n"
        f"data-directory={directory / 'data'}\n\n"
        "[keyring]\n"
        f"path={keyring}\n"
        "check-purpose=codesign\n"
        f"{'check-crl=true' if crl is not None else ''}\n")
    return conf


def _run(args: list[str], what: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise UpdateError(f"{what} did not finish in {TIMEOUT_S} s") from None


def rauc_error(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines()
             if ln.strip() and "rauc-Message" not in ln and not ln.startswith("(rauc:")]
    return lines[-1] if lines else "rauc failed"


def make(tree: Path, version: str, cert: Path, key: Path, keyring: Path, out: Path,
         compatible: str = COMPATIBLE) -> BundleInfo:
    """Pack ``tree`` into a signed bundle ``out`` at ``version``; checked against ``keyring``."""
    parse(version)
    for path, what in ((cert, "--signer"), (key, "--key"), (keyring, "--ca")):
        if not Path(path).is_file():
            raise UpdateError(f"{what} {path} is not a file")
    if Path(out).exists():
        raise UpdateError(f"{out} exists; a bundle is never overwritten")
    with tempfile.TemporaryDirectory(prefix="egm-bundle-") as tmp:
        work = Path(tmp)
        content = work / "content"
        content.mkdir()
        pack(Path(tree), content / PAYLOAD)
        (content / "manifest.raucm").write_text(
            f"[update]\ncompatible={compatible}\nversion={version}\n\n"
            f"[bundle]\nformat=verity\n\n[image.{SLOT_CLASS}]\nfilename={PAYLOAD}\n")
        args = [rauc(), "-c", str(system_conf(work, Path(keyring).resolve(), compatible)), "bundle",
                "--cert", str(Path(cert).resolve()), "--key", str(Path(key).resolve())]
        if (content / PAYLOAD).stat().st_size < SMALL_PAYLOAD:
            args.append("--mksquashfs-args=-noI -noD -noF -noX")
        done = _run([*args, str(content), str(Path(out).resolve())], "rauc bundle")
        if done.returncode != 0:
            raise UpdateError(f"rauc bundle: {rauc_error(done.stderr)}")
    return check(Path(out), Path(keyring), compatible)


def check(bundle: Path, keyring: Path, compatible: str = COMPATIBLE, crl: Path | None = None) -> BundleInfo:
    """The bundle's manifest once its signature verifies against ``keyring`` (and its signer is
    not revoked by ``crl``); else refused."""
    if not Path(bundle).is_file():
        raise UpdateError(f"{bundle} is not a file")
    if not Path(keyring).is_file():
        raise UpdateError(f"the keyring {keyring} is not a file")
    with tempfile.TemporaryDirectory(prefix="egm-check-") as tmp:
        conf = system_conf(Path(tmp), Path(keyring).resolve(), compatible, crl)
        done = _run([rauc(), "-c", str(conf), "info", "--output-format=json", str(bundle)], "rauc info")
    if done.returncode != 0:
        why = rauc_error(done.stderr)
        raise UpdateRefused("revoked" if "certificate revoked" in why else "signature", f"the bundle is refused: {why}")
    signer = ""
    for line in done.stderr.splitlines():
        if "Verified" in line and "signature by" in line:
            signer = line.split("signature by", 1)[1].strip().strip("'")
    try:
        doc = json.loads(done.stdout)
        image = next(i[SLOT_CLASS] for i in doc["images"] if SLOT_CLASS in i)
        info = BundleInfo(str(doc["compatible"]), str(doc["version"]), str(image["checksum"]),
                          int(image["size"]), signer)
    except (ValueError, KeyError, TypeError, StopIteration):
        raise UpdateRefused("bad-manifest", f"the bundle's manifest has no {SLOT_CLASS} image") from None
    if info.compatible != compatible:
        raise UpdateRefused("incompatible", f"the bundle is for {info.compatible!r}, not {compatible!r}")
    parse(info.version)
    return info


def extract(bundle: Path, keyring: Path, dest: Path, info: BundleInfo,
            compatible: str = COMPATIBLE, crl: Path | None = None) -> Path:
    """Verify again and extract the payload into ``dest`` (empty or missing); its SHA-256 must be
    the signed manifest's. Returns the payload's path."""
    with tempfile.TemporaryDirectory(prefix="egm-extract-") as tmp:
        conf = system_conf(Path(tmp), Path(keyring).resolve(), compatible, crl)
        done = _run([rauc(), "-c", str(conf), "extract", str(bundle), str(dest)], "rauc extract")
    if done.returncode != 0:
        raise UpdateRefused("payload", f"the bundle's payload is refused: {rauc_error(done.stderr)}")
    payload = Path(dest) / PAYLOAD
    digest = hashlib.sha256()
    try:
        with open(payload, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise UpdateRefused("payload", f"the bundle's payload cannot be read: {exc}") from None
    if digest.hexdigest() != info.payload_sha256:
        raise UpdateRefused("payload", "the payload's SHA-256 is not the one the manifest signs")
    return payload
