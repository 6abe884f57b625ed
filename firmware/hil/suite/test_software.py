"""Software verification (GLI-11): the terminal's own verdict on its signed manifest, and the lab's
digests on request computed by the terminal equal to those computed over the installed files."""

from __future__ import annotations

import secrets

import pytest

from firmware.cabinet.software import default_root, lab_hash

SIGNATURE_REQUIREMENT = (
    "The gaming device must verify its critical software at power-up and on demand, and must offer "
    "a way for the test lab to check the software's identity independently: a digest over the "
    "installed files (SHA-1, SHA-256, and a keyed HMAC with a seed the lab chooses). "
    "(Section title: 'Software Verification'; number approximate.)")


@pytest.mark.hil(id="software.signature", standard="gli-11", clause="4.6 (approx.)",
                 requirement=SIGNATURE_REQUIREMENT, title="Software signature verified and lab digests match",
                 operator=False, duration=10, targets=("sim", "cabinet"))
def test_signature(cabinet, record):
    record.step("ask the terminal for its power-up software verification (service software)")
    answer = cabinet.service("software")
    verification = answer.get("verification") or {}
    record.attach("software-verification", answer, "json")
    record.measure("power-up verification of the signed manifest", verification.get("ok"), equals=True)
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
