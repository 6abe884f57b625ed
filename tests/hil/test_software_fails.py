"""The software tests of the lab suite, shown able to fail: run from a copy of the software with one
thing broken on purpose (tests/hil/broken.py), each reports FAIL; the unbroken software passes."""

from __future__ import annotations

import pytest

from tests.hil.broken import broken_copy, run_hil, verdicts

pytestmark = pytest.mark.slow          # three suite runs from copies of the software: about 30 s

SOFTWARE = "firmware/cabinet/software.py"


def test_the_unbroken_software_passes(tmp_path):
    code, record = run_hil(None, tmp_path, "software.")
    assert verdicts(record) == {"software.signature": "PASS", "software.changed-byte": "PASS"}
    assert code == 0


def test_a_lab_digest_framed_wrongly_fails_the_signature_test(tmp_path):
    # the size in each file's frame off by one: the terminal's digest is no longer the files'
    software = broken_copy(tmp_path, {SOFTWARE: ('str(len(data)).encode("ascii")', 'str(len(data) + 1).encode("ascii")')})
    code, record = run_hil(software, tmp_path, "software.signature")
    assert verdicts(record) == {"software.signature": "FAIL"}
    assert "equals the suite's own computation" in record["tests"][0]["reason"]
    assert code == 1


def test_a_verification_blind_to_changed_files_fails_the_changed_byte_test(tmp_path):
    software = broken_copy(tmp_path, {SOFTWARE: (
        "if len(data) != expected[1] or hashlib.sha256(data).hexdigest() != expected[0]:",
        "if len(data) != expected[1]:")})
    code, record = run_hil(software, tmp_path, "software.changed-byte")
    assert verdicts(record) == {"software.changed-byte": "FAIL"}
    assert "changed copy: power-up verification = True" in record["tests"][0]["reason"]
    assert code == 1
