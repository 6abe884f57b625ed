"""Software verification (GLI-11): the terminal's own verdict on its signed manifest, and the lab's
digests on request computed by the terminal equal to those computed over the installed files."""

from __future__ import annotations

import hashlib
import secrets
import shutil
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from firmware.cabinet.software import (
    DEFAULT_PACKAGES,
    build_manifest,
    default_root,
    lab_hash,
    public_key_pem,
    sign_manifest,
    signed_json,
)
from firmware.hil.errors import TargetError
from firmware.hil.target import SimTarget

SIGNATURE_REQUIREMENT = (
    "The gaming device must verify its critical software at power-up and on demand, and must offer "
    "a way for the test lab to check the software's identity independently: a digest over the "
    "installed files (SHA-1, SHA-256, and a keyed HMAC with a seed the lab chooses). "
    "(Section title: 'Software Verification'; number approximate.)")


def independent_sha256(root: Path) -> tuple[str, int]:
    """The lab's overall SHA-256 (docs/software-verification.md, framing ``egm-lab-hash/1``)
    computed here from the files themselves, without the product's hashing code: every file under
    the packages but ``__pycache__``, in relative-path order, each framed as path, NUL, size, NUL,
    bytes. (The overall digest, the number of files.)"""
    files = sorted(p.relative_to(root).as_posix() for package in DEFAULT_PACKAGES
                   for p in (root / package).rglob("*")
                   if p.is_file() and "__pycache__" not in p.relative_to(root).parts)
    digest = hashlib.sha256()
    for rel in files:
        data = (root / rel).read_bytes()
        digest.update(rel.encode("utf-8") + b"\x00" + str(len(data)).encode("ascii") + b"\x00" + data)
    return digest.hexdigest(), len(files)


@pytest.mark.hil(id="software.signature", standard="gli-11", clause="4.6 Software Verification (approx.)",
                 requirement=SIGNATURE_REQUIREMENT, title="Software signature verified and lab digests match",
                 operator=False, duration=10, targets=("sim", "cabinet"))
def test_signature(cabinet, record):
    record.step("ask the terminal for its power-up software verification (service software)")
    answer = cabinet.service("software")
    verification = answer.get("verification") or {}
    record.attach("software-verification", answer, "json")
    record.measure("power-up verification of the signed manifest", verification.get("ok"), equals=True)
    record.step("the overall SHA-256 of the installed files, computed by the suite from the files "
                "themselves (not with the product's code), against the terminal's")
    independent, count = independent_sha256(default_root())
    theirs = cabinet.service("software", "hash", "sha256")
    record.measure("sha256 overall digest (terminal) equals the suite's own computation", theirs["overall"],
                   equals=independent)
    record.measure("files the terminal hashed", len(theirs["files"]), equals=count)
    seed = secrets.token_hex(16)
    record.note(f"HMAC seed chosen for this run: {seed}")
    root = default_root()
    for algorithm, key in (("sha256", None), ("sha1", None), ("hmac-sha256", seed)):
        record.step(f"service software hash {algorithm}{' ' + key if key else ''}; the same digest over "
                    f"the installed files ({root})")
        theirs = cabinet.service("software", "hash", algorithm, *([key] if key else []))
        ours = lab_hash(root, algorithm, bytes.fromhex(key) if key else None)
        record.attach(f"software-hash-{algorithm}", {"terminal": theirs, "installed": ours["overall"]}, "json")
        record.measure(f"{algorithm} overall digest (terminal) equals the installed files'", theirs["overall"],
                       equals=ours["overall"])
        record.measure(f"{algorithm} files hashed", len(theirs["files"]), equals=len(ours["files"]))


CHANGED_REQUIREMENT = (
    "Software that is not exactly the approved, signed build must be detected at power-up and the "
    "gaming device must not offer play: one changed byte in one file of the installed software fails "
    "the verification, the failure is recorded, and the cabinet stays out of service. "
    "(Section title: 'Software Verification' / program integrity at power-up; number approximate.)")


def _signed_copy(folder: Path) -> tuple[Path, Path, Path]:
    """The installed packages copied to ``folder/software`` and signed with a fresh code-signer key:
    (the copy, its signed manifest, the signer's public key)."""
    root = folder / "software"
    for package in DEFAULT_PACKAGES:
        shutil.copytree(default_root() / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    key = Ed25519PrivateKey.generate()
    manifest = folder / "manifest.signed.json"
    manifest.write_text(signed_json(sign_manifest(build_manifest(root), key)), encoding="utf-8")
    public = folder / "code-signer.pub.pem"
    public.write_bytes(public_key_pem(key))
    return root, manifest, public


def _flip_a_docstring_byte(root: Path) -> tuple[str, int]:
    """One bit of one letter inside the first docstring of a module of the copy (still valid Python):
    (the file, the offset)."""
    for rel in ("hal/events.py", "firmware/errors.py", *sorted(p.relative_to(root).as_posix()
                                                                   for p in root.rglob("*.py"))):
        path = root / rel
        if not path.is_file():
            continue
        data = bytearray(path.read_bytes())
        start = data.find(b'"""')
        end = data.find(b'"""', start + 3)
        for at in range(start + 3, end if start >= 0 else 0):
            if chr(data[at]).isalpha() and chr(data[at] ^ 0x01).isalpha():
                data[at] ^= 0x01
                path.write_bytes(bytes(data))
                return rel, at
    raise AssertionError("no docstring letter to change in the copied software")


@pytest.mark.hil(id="software.changed-byte", standard="gli-11", clause="4.6 Software Verification (approx.)",
                 requirement=CHANGED_REQUIREMENT, title="One changed byte of the software stops play at power-up",
                 operator=False, duration=30, targets=("sim",))
def test_changed_byte(record):
    work = record.report_dir / "sim-changed-byte"
    record.step("copy the installed software and sign the copy with a fresh code-signer key")
    root, manifest, public = _signed_copy(work)
    config = (f"[software]\ndevelopment = false\nmanifest = {str(manifest)!r}\n"
              f"trusted_keys = [{str(public)!r}]\n")
    terminal = SimTarget(work, config_text=config, software=root)
    try:
        record.step("control: start the terminal from the unchanged signed copy")
        terminal.power_on()
        record.measure("unchanged copy: power-up verification", terminal.service("software")["verification"]["ok"],
                       equals=True)
        record.measure("unchanged copy: cabinet state", terminal.wait("IDLE", timeout=30)["state"], equals="IDLE")
        terminal.stop()

        rel, offset = _flip_a_docstring_byte(root)
        record.step(f"change one bit of one byte of {rel} (offset {offset}) and power the terminal up again")
        record.note(f"changed byte: {rel} offset {offset}")
        terminal.power_on()
        verification = terminal.service("software")["verification"]
        record.attach("software-verification-changed", verification, "json")
        record.measure("changed copy: power-up verification", verification["ok"], equals=False)
        record.measure("changed copy: the verification names the changed file", f"changed: {rel}" in
                       verification["reason"], equals=True)
        status = terminal.status()
        tilts = [t["tilt"] for t in status.get("tilts", [])]
        record.attach("status-changed", status, "json")
        record.measure("changed copy: cabinet state", status["state"], equals="TILT")
        record.measure("changed copy: the software signature is a tilt", any("software" in t for t in tilts),
                       equals=True)
        record.step("wait 5 s: the cabinet must not reach IDLE")
        try:
            terminal.wait("IDLE", timeout=5)
            reached_idle = True
        except TargetError:
            reached_idle = False
        record.measure("changed copy: reached IDLE", reached_idle, equals=False)
        record.step("press DEAL: the round must be refused")
        try:
            terminal.play()
            refused = ""
        except TargetError as exc:
            refused = str(exc)
        record.measure("changed copy: a round is refused", bool(refused), equals=True)
        events = terminal.events(100)
        record.attach("events-changed", events, "json")
        raised = [e for e in events if e.get("event") == "cabinet.tilt_raised"
                  and e.get("tilt") == "self_test:software_signature" and rel in str(e.get("reason"))]
        record.measure("changed copy: tilt events recording the failed software signature", len(raised), low=1)
    finally:
        terminal.close()
        record.attach("terminal-log", "\n".join(terminal.log_lines()) + "\n", "text")
