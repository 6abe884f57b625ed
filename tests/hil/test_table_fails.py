"""The table-game tests of the lab suite can fail: ``table.shoe.misread`` run from a copy of the
software in which a war's misdeal does not return the BAC wager (the war family's settlement, in the
product's own game code, scores a seat whose war ended in a misdeal as a lost BAC) reports FAIL,
naming the wagers returned and the credit meter; ``table.shoe.cards`` run from a copy in which the
physical shoe's card source skips the third card the shoe reads reports FAIL (the cards dealt are
not the shoe's); ``table.virtual.deal`` run from a copy whose RNG shoe picks each card among the
next 32 of the shoe only (not all the cards left) reports FAIL; from the unchanged software the
shoe tests pass (``table.virtual.deal`` passing is the suite's own run, and tests/hil's catalogue
tests)."""

from __future__ import annotations

import pytest

from tests.hil.broken import broken_copy, run_hil, verdicts

pytestmark = pytest.mark.slow          # four suite runs, three from a copy of the software: about a minute

MISDEAL_KEEPS_BAC = {
    "firmware/games/war_family.py": ('                results["bac"] = WagerResult(Outcome.VOID, 0)\n',
                                     '                results["bac"] = WagerResult(Outcome.LOSE, -bac)\n'),
}
READ = "        card = Card(self._shoe.read_card(self._timeout))\n"
#: The physical shoe's source throws away the third card read and deals the fourth in its place.
SKIPS_A_CARD = {
    "firmware/cards/source.py": (READ, READ + "        if len(self.dealt) == 2:\n"
                                        "            card = Card(self._shoe.read_card(self._timeout))\n"),
}


PICK = "        j = i + self._rng.randbelow(n - i)\n"
#: The RNG shoe chooses each card among the next 32 cards of its array, not among all those left.
NEAR_CARDS_ONLY = {"firmware/cards/source.py": (PICK, PICK.replace("randbelow(n - i)", "randbelow(min(32, n - i))"))}


def _test(record: dict, test_id: str) -> dict:
    return next(t for t in record["tests"] if t["id"] == test_id)


def _failed(record: dict, test_id: str) -> set[str]:
    return {m["name"] for m in _test(record, test_id)["measurements"] if not m["passed"]}


def test_a_misdeal_that_keeps_the_wager_fails_table_shoe_misread(tmp_path):
    software = broken_copy(tmp_path, MISDEAL_KEEPS_BAC)
    code, record = run_hil(software, tmp_path, "table.shoe.misread", timeout=300)
    assert verdicts(record) == {"table.shoe.misread": "FAIL"}, _test(record, "table.shoe.misread")["reason"]
    assert code == 1
    failed = _failed(record, "table.shoe.misread")
    assert "every wager returned (void, net 0)" in failed, failed


def test_a_shoe_source_that_skips_a_card_fails_table_shoe_cards(tmp_path):
    software = broken_copy(tmp_path, SKIPS_A_CARD)
    code, record = run_hil(software, tmp_path, "table.shoe.cards", timeout=300)
    assert verdicts(record) == {"table.shoe.cards": "FAIL"}, _test(record, "table.shoe.cards")["reason"]
    assert code == 1


def test_a_shoe_that_picks_among_near_cards_fails_table_virtual_deal(tmp_path):
    software = broken_copy(tmp_path, NEAR_CARDS_ONLY)
    code, record = run_hil(software, tmp_path, "table.virtual.deal", timeout=300)
    assert verdicts(record) == {"table.virtual.deal": "FAIL"}, _test(record, "table.virtual.deal")["reason"]
    assert code == 1
    assert any("p-value" in name for name in _failed(record, "table.virtual.deal"))


def test_the_unchanged_software_passes_both(tmp_path):
    code, record = run_hil(None, tmp_path, "table.shoe.misread", "table.shoe.cards", timeout=300)
    assert verdicts(record) == {"table.shoe.misread": "PASS", "table.shoe.cards": "PASS"}, record["tests"]
    assert code == 0
