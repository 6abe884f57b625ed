"""The voucher lifecycle is one table: the book asks it before every record that moves a voucher,
so a move it does not hold raises and writes nothing, and every move the book makes is a row."""

from __future__ import annotations

import pytest

from firmware.cashless import VoucherBook, VoucherState, VoucherStateError
from firmware.cashless.voucher_states import VOUCHER_TABLE
from firmware.kernel.table import Row, StateTable
from firmware.ledger.ledger import Ledger

S = VoucherState
FOREIGN = "421234567890123456"            # another machine's number, validated by the host


class Host:
    def validate(self, validation: str) -> int | None:
        return 500 if validation == FOREIGN else None


@pytest.fixture
def book(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(2000)
        yield VoucherBook(ledger, terminal_id="T1", offline_redemption=True)


def _written(book: VoucherBook, validation: str) -> tuple[int, dict]:
    ledger = book._ledger
    return len(ledger.records_for(validation)), dict(ledger.meters)


def test_a_redeemed_voucher_cannot_be_printed_voided_or_returned_and_nothing_is_written(book):
    v = book.issue(1000).validation
    book.printed(v)
    book.begin_redeem(v)
    book.commit_redeem(v)
    assert book.state(v) is S.REDEEMED
    before = _written(book, v)
    for move, pattern in ((lambda: book.printed(v), "printed is not allowed in REDEEMED"),
                          (lambda: book.void(v, "jam"), "void is not allowed in REDEEMED"),
                          (lambda: book.cancel_redeem(v, "returned"), "cancel_redeem is not allowed in REDEEMED"),
                          (lambda: book.commit_redeem(v), "commit_redeem is not allowed in REDEEMED")):
        with pytest.raises(VoucherStateError, match=f"voucher .*: {pattern} \\(allowed there: nothing\\)"):
            move()
        assert book.state(v) is S.REDEEMED and _written(book, v) == before


def test_a_printed_voucher_is_not_voided_nor_its_redemption_committed_before_it_is_pending(book):
    v = book.issue(1000).validation
    book.printed(v)
    before = _written(book, v)
    with pytest.raises(VoucherStateError, match=r"void is not allowed in PRINTED \(allowed there: begin_redeem\)"):
        book.void(v, "jam")
    with pytest.raises(VoucherStateError, match="commit_redeem is not allowed in PRINTED"):
        book.commit_redeem(v)
    assert book.state(v) is S.PRINTED and _written(book, v) == before


def test_the_book_moves_by_the_table_it_is_drawn_from(book, monkeypatch):
    # Without the row ISSUED -> PRINTED, the printer's confirmation is refused and nothing is written.
    rows = tuple(r for r in VOUCHER_TABLE.rows if r.trigger != "printed")
    monkeypatch.setattr("firmware.cashless.vouchers.VOUCHER_TABLE",
                        StateTable("vouchers", S, None, rows, error=VoucherStateError))
    v = book.issue(1000).validation
    before = _written(book, v)
    with pytest.raises(VoucherStateError, match="printed is not allowed in ISSUED"):
        book.printed(v)
    assert book.state(v) is S.ISSUED and _written(book, v) == before


def test_every_move_of_a_lifecycle_is_a_row_of_the_table(book, monkeypatch):
    taken: list[tuple[S | None, str, S | None]] = []
    move = VOUCHER_TABLE.move

    def watching(state, trigger, dest, **kw):
        taken.append((state, trigger, dest))
        return move(state, trigger, dest, **kw)

    monkeypatch.setattr(VOUCHER_TABLE, "move", watching)
    printed = book.issue(1000).validation
    book.printed(printed)
    book.begin_redeem(printed)
    book.cancel_redeem(printed, "returned by the validator")
    book.begin_redeem(printed)
    book.commit_redeem(printed)
    voided = book.issue(500).validation
    book.void(voided, "paper out")
    book.begin_redeem(FOREIGN, host=Host())
    book.cancel_redeem(FOREIGN, "returned by the validator")
    book.begin_redeem(FOREIGN, host=Host())
    book.commit_redeem(FOREIGN)
    rows = {(src, row.trigger, row.dest) for row in VOUCHER_TABLE.rows for src in row.sources}
    assert set(taken) == rows                              # every row, and the book moved as it said
    assert book.state(printed) is S.REDEEMED and book.state(voided) is S.VOID
    assert book.state(FOREIGN) is S.REDEEMED


def test_a_returned_redemption_goes_back_only_where_it_came_from():
    assert VOUCHER_TABLE.move(S.REDEEM_PENDING, "cancel_redeem", S.PRINTED) is S.PRINTED
    assert VOUCHER_TABLE.move(S.REDEEM_PENDING, "cancel_redeem", None) is None
    with pytest.raises(VoucherStateError, match=r"cancel_redeem does not take REDEEM_PENDING to VOID "
                                                r"\(only to PRINTED, \(none\)\)"):
        VOUCHER_TABLE.move(S.REDEEM_PENDING, "cancel_redeem", S.VOID)
    assert Row("issue", (None,), S.ISSUED) in VOUCHER_TABLE.rows


def test_docs_show_the_table_row_for_row():
    from tests.conftest import ROOT

    doc = (ROOT / "docs" / "cashless.md").read_text("utf-8")
    triggers = VOUCHER_TABLE.triggers
    lines = [line for line in doc.splitlines()
             if line.startswith("| `") and line.split("`")[1] in triggers and line.count("|") == 4]

    def name(node):
        return node.name if node else "(none)"

    assert lines == [f"| `{row.trigger}`{f' [{row.when}]' if row.when else ''} | "
                     f"{', '.join(name(s) for s in row.sources)} | {name(row.dest)} |" for row in VOUCHER_TABLE.rows]
