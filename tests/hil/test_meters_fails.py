"""The lab suite's ``meters.monotonic`` shown able to fail: run from a copy of the software in which
one meter goes back (a cash-out ticket takes one off ``games_played``, in the product's own meter
code, so the live meters and their recomputation from the log agree and only the meters' history
shows it), the suite reports FAIL naming that meter; the same test from the unbroken software
passes."""

from __future__ import annotations

import pytest

from tests.hil.broken import broken_copy, run_hil, verdicts

pytestmark = pytest.mark.slow          # two suite runs (a broken copy, the unbroken software): about 25 s

TEST_ID = "meters.monotonic"
#: A cash-out ticket (a ``ticket_out`` record) also takes one game off ``games_played``.
A_METER_GOES_BACK = {
    "firmware/ledger/meters.py": ('        d["ticket_out"] = cents\n',
                                  '        d["ticket_out"] = cents\n        d["games_played"] = -1\n'),
}


def _monotonic(record: dict) -> dict:
    return next(t for t in record["tests"] if t["id"] == TEST_ID)


def test_a_meter_that_goes_back_fails_meters_monotonic(tmp_path):
    software = broken_copy(tmp_path, A_METER_GOES_BACK)
    code, record = run_hil(software, tmp_path, TEST_ID, timeout=300)
    assert verdicts(record) == {TEST_ID: "FAIL"}, _monotonic(record)["reason"]
    assert code == 1
    failed = [m for m in _monotonic(record)["measurements"] if not m["passed"]]
    assert failed and failed[0]["name"] == "meters that went back during this test"
    assert any("games_played" in item and "cash-out" in item for item in failed[0]["value"]), failed[0]["value"]


def test_the_unbroken_software_passes_meters_monotonic(tmp_path):
    code, record = run_hil(None, tmp_path, TEST_ID, timeout=300)
    assert verdicts(record) == {TEST_ID: "PASS"}, _monotonic(record)["reason"]
    assert code == 0
