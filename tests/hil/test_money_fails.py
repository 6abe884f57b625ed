"""The money tests of the lab suite can fail: ``validator.denominations`` run from a copy of the
software in which a stacked note is credited twice (the one place money-in credits a note,
``MoneyIn.on_note_stacked``, calls ``Ledger.bill_in`` a second time) reports FAIL, naming the
note's credit and bill meters; from the unchanged software the same test passes."""

from __future__ import annotations

import pytest

from tests.hil.broken import broken_copy, run_hil, verdicts

pytestmark = pytest.mark.slow          # two suite runs, one from a copy of the software: about 30 s

CREDIT_NOTE = "        self.t.ledger.bill_in(event.value_cents, denom_cents=event.value_cents)\n"


def test_a_note_credited_twice_fails_validator_denominations(tmp_path):
    software = broken_copy(tmp_path, {"firmware/cabinet/money_in.py": (CREDIT_NOTE, CREDIT_NOTE * 2)})
    code, record = run_hil(software, tmp_path, "validator.denominations")
    assert verdicts(record) == {"validator.denominations": "FAIL"}, record["tests"][0]["reason"]
    assert code == 1
    failed = {m["name"] for m in record["tests"][0]["measurements"] if not m["passed"]}
    assert "$1 note: credit meter rise" in failed and "$1 note: notes counted of its denomination" in failed


def test_the_unchanged_software_passes_validator_denominations(tmp_path):
    code, record = run_hil(None, tmp_path, "validator.denominations")
    assert verdicts(record) == {"validator.denominations": "PASS"}, record["tests"][0]["reason"]
    assert code == 0
