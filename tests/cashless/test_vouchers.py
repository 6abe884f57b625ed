"""The voucher book over critical memory: every state change committed before it counts, the state
rebuilt exactly after a power loss at every step, money moved only by ticket_out / ticket_in, and
a voucher paid once."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from firmware.cards.card import parse_cards
from firmware.cards.errors import ShoeExhausted
from firmware.cards.source import StackedSource
from firmware.cashless import (
    POWER_LOST,
    POWER_LOST_ASKING,
    REASON_CODES,
    IssuedVoucher,
    Redemption,
    VoucherBook,
    VoucherError,
    VoucherRefused,
    VoucherState,
    VoucherStateError,
    offline_validation,
)
from firmware.cashless.validation import KEY_SETTING
from firmware.cli import main
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel
from firmware.ledger import meters as M
from firmware.ledger.errors import LedgerError, LedgerStateError
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.ledger.resume import resume_round
from firmware.rng.service import RngService

FIXED_KEY = bytes(range(32))
TERMINAL = "EGM-0042"
START = dt.datetime(2025, 3, 14, 13, 45, 9, tzinfo=dt.UTC)
FOREIGN = "421234567890123456"            # another validation system's number (host-assigned)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += dt.timedelta(**delta)


class Host:
    """A stand-in for the host link's ticket validation."""

    def __init__(self, amounts: dict[str, int | None] | None = None) -> None:
        self.amounts = dict(amounts or {})
        self.asked: list[str] = []

    def validate(self, validation: str) -> int | None:
        self.asked.append(validation)
        return self.amounts.get(validation)


class Terminal:
    """Critical memory and the voucher book, with a power cut (close and reopen) on demand."""

    def __init__(self, path: Path, capsys: pytest.CaptureFixture[str] | None = None, *,
                 key: bytes | None = FIXED_KEY, **options: object) -> None:
        self.path = path
        self.capsys = capsys
        self.clock = Clock()
        self.options = {"offline_redemption": True, **options}   # these tests redeem without a host
        self.ledger = Ledger.open(path)
        if key is not None:
            self.ledger.store_setting(KEY_SETTING, {"key": key.hex()})
        self.book = self._book()
        self.cycles = 0

    def _book(self) -> VoucherBook:
        return VoucherBook(self.ledger, terminal_id=TERMINAL, clock=self.clock, **self.options)

    def snapshot(self) -> tuple:
        book = self.book
        return (book.history(10**6), book.unconfirmed(), book.pending_redemption(),
                book._last_sequence, self.ledger.meters_report(), self.ledger.rows)

    def meters(self) -> dict:
        return self.ledger.meters_report()["meters"]

    def power_cycle(self) -> None:
        """Cut the power: close critical memory, read it as `egm meters` does, open it again, and
        check that the book rebuilt from the records is exactly the book before the cut."""
        assert accounting_difference(self.ledger.meters) == 0
        before = self.snapshot()
        report = self.ledger.meters_report()
        self.ledger.close()
        if self.capsys is not None:
            self.capsys.readouterr()
            assert main(["meters", "--state-dir", str(self.path), "--json"]) == 0
            assert json.loads(self.capsys.readouterr().out) == report
        self.ledger = Ledger.open(self.path)
        self.book = self._book()
        self.cycles += 1
        assert self.snapshot() == before
        assert accounting_difference(self.ledger.meters) == 0

    def close(self) -> None:
        self.ledger.close()


@pytest.fixture
def term(tmp_path, capsys):
    t = Terminal(tmp_path, capsys)
    t.ledger.bill_in(10_000)
    yield t
    t.close()


def refused(code: str, call, *args, **kwargs) -> VoucherRefused:
    with pytest.raises(VoucherRefused) as info:
        call(*args, **kwargs)
    assert info.value.reason_code == code
    assert isinstance(info.value, VoucherError) and str(info.value) == info.value.message
    return info.value


# --- the whole life of a voucher, with the power cut after every step ----------------------------
def test_issue_print_redeem_with_a_power_loss_after_every_step(term):
    v = term.book.issue(2_550)
    assert isinstance(v, IssuedVoucher)
    assert v.validation == offline_validation(FIXED_KEY, TERMINAL, 1)
    assert (v.sequence, v.ticket_number, v.amount_cents, v.issued, v.expiry_days) == (1, 1, 2_550, START, 30)
    assert v.printed_validation == f"{v.validation[:2]}-{v.validation[2:6]}-{v.validation[6:10]}-" \
                                   f"{v.validation[10:14]}-{v.validation[14:]}"
    assert v.expires == START + dt.timedelta(days=30)
    term.power_cycle()
    assert term.book.state(v.validation) is VoucherState.ISSUED
    assert term.book.unconfirmed() == v
    assert term.meters()["ticket_out"] == 0 and term.ledger.credits_cents == 10_000   # not yet
    refused("pending", term.book.check, v.validation)                                # not printed yet

    assert term.book.printed(v.printed_validation) == v          # the printed form is accepted too
    term.power_cycle()
    assert term.book.state(v.validation) is VoucherState.PRINTED and term.book.unconfirmed() is None
    assert term.meters()["ticket_out"] == 2_550 and term.meters()["ticket_out_cashable"] == 2_550
    assert term.ledger.credits_cents == 10_000 - 2_550
    assert [r["kind"] for r in term.ledger.records_for(v.validation)] == ["voucher", "ticket_out"]

    redemption = term.book.check(v.validation)
    assert redemption == Redemption(v.validation, 2_550, True, "own")
    term.power_cycle()                                             # check changed nothing
    assert term.book.begin_redeem(v.validation) == redemption
    term.power_cycle()
    assert term.book.state(v.validation) is VoucherState.REDEEM_PENDING
    assert term.book.pending_redemption() == redemption
    assert term.meters()["ticket_in"] == 0 and term.ledger.credits_cents == 10_000 - 2_550
    refused("pending", term.book.check, v.validation)

    assert term.book.commit_redeem(v.validation) == redemption
    term.power_cycle()
    assert term.book.state(v.validation) is VoucherState.REDEEMED and term.book.pending_redemption() is None
    assert term.meters()["ticket_in"] == 2_550 and term.ledger.credits_cents == 10_000
    refused("already_redeemed", term.book.check, v.validation)
    assert [r["kind"] for r in term.ledger.records_for(v.validation)] == \
        ["voucher", "ticket_out", "voucher", "ticket_in"]
    [entry] = term.book.history()
    assert entry["state"] == "redeemed" and entry["source"] == "own" and entry["own"]
    assert set(entry["times"]) == {"issued", "printed", "redeem_pending", "redeemed"}


def test_power_lost_before_the_printer_confirmed_voids_the_number_for_ever(term):
    v = term.book.issue(1_000)
    term.power_cycle()
    pending = term.book.unconfirmed()
    assert pending == v
    refused_issue = pytest.raises(VoucherStateError, match="not confirmed")
    with refused_issue:
        term.book.issue(500)                       # one unconfirmed voucher at a time
    assert term.book.void(pending.validation, POWER_LOST) == v
    term.power_cycle()
    assert term.book.state(v.validation) is VoucherState.VOID and term.book.unconfirmed() is None
    assert term.ledger.credits_cents == 10_000 and term.meters()["ticket_out"] == 0   # credits stayed
    assert refused("void", term.book.check, v.validation).message.endswith(f"({POWER_LOST})")
    refused("void", term.book.check, v.validation, host=Host({v.validation: 1_000}))
    refused("void", term.book.begin_redeem, v.validation)
    with pytest.raises(VoucherStateError):
        term.book.printed(v.validation)            # a late confirmation cannot revive it
    assert term.book.history()[0]["reason"] == POWER_LOST
    # the next voucher has the next sequence and another number
    w = term.book.issue(1_000)
    assert w.sequence == 2 and w.validation != v.validation
    term.book.printed(w.validation)
    term.power_cycle()


@pytest.mark.parametrize("stacked", [True, False])
def test_a_pending_redemption_at_power_up_settles_either_way(term, stacked):
    v = term.book.issue(700)
    term.book.printed(v.validation)
    term.book.begin_redeem(v.validation)
    term.power_cycle()
    pending = term.book.pending_redemption()
    assert pending == Redemption(v.validation, 700, True, "own")
    with pytest.raises(VoucherStateError, match="still being redeemed"):
        term.book.begin_redeem(FOREIGN, host=Host({FOREIGN: 100}))   # one escrow
    if stacked:
        term.book.commit_redeem(pending.validation)
        term.power_cycle()
        assert term.ledger.credits_cents == 10_000
        refused("already_redeemed", term.book.check, v.validation)
    else:
        term.book.cancel_redeem(pending.validation, "ticket returned")
        term.power_cycle()
        assert term.book.state(v.validation) is VoucherState.PRINTED   # back where it was
        assert term.ledger.credits_cents == 10_000 - 700 and term.meters()["ticket_in"] == 0
        assert term.book.check(v.validation).amount_cents == 700        # and it redeems later
        assert term.book.history()[0]["times"]["redeem_returned"]
    assert term.book.pending_redemption() is None


def test_a_request_to_the_host_that_never_went_ahead_is_unsettled_until_abandoned(term):
    # the host link records the request (and an abandonment) itself; the book folds them in, at
    # open and as they are committed
    own = term.book.issue(700)
    term.book.printed(own.validation)
    term.ledger.voucher_record(FOREIGN, "host_request")
    assert term.book.unsettled_requests() == [FOREIGN]
    term.power_cycle()
    assert term.book.unsettled_requests() == [FOREIGN]                 # rebuilt from the records
    term.ledger.voucher_record(own.validation, "host_request")
    term.book.begin_redeem(own.validation, host=Host({own.validation: 700}))   # it went ahead
    assert term.book.unsettled_requests() == [FOREIGN]
    with pytest.raises(VoucherStateError, match="no unsettled request"):
        term.book.abandon_request(own.validation, "power lost")
    term.book.abandon_request(FOREIGN, POWER_LOST_ASKING)
    assert term.book.unsettled_requests() == []
    assert term.ledger.records_for(FOREIGN)[-1]["body"] == {
        "validation": FOREIGN, "state": "redeem_abandoned", "reason": POWER_LOST_ASKING}
    term.power_cycle()
    assert term.book.unsettled_requests() == [] and term.meters()["ticket_in"] == 0
    assert term.book.pending_redemption() == Redemption(own.validation, 700, True, "host")


def test_a_voucher_redeemed_twice_pays_once(term):
    v = term.book.issue(1_234)
    term.book.printed(v.validation)
    term.book.begin_redeem(v.validation)
    term.book.commit_redeem(v.validation)
    term.power_cycle()
    before = term.snapshot()
    refused("already_redeemed", term.book.check, v.validation)
    refused("already_redeemed", term.book.begin_redeem, v.validation)
    refused("already_redeemed", term.book.check, v.validation, host=Host({v.validation: 1_234}))
    with pytest.raises(VoucherStateError):
        term.book.commit_redeem(v.validation)
    with pytest.raises(VoucherStateError):
        term.book.cancel_redeem(v.validation, "returned")
    assert term.snapshot() == before               # refusals record nothing
    assert term.meters()["ticket_in"] == 1_234
    term.power_cycle()


def test_expired_vouchers_are_refused_by_the_injected_clock(tmp_path):
    t = Terminal(tmp_path, expiry_days=3)
    t.ledger.bill_in(5_000)
    v = t.book.issue(1_000)
    t.book.printed(v.validation)
    t.clock.advance(days=3)                                 # the last instant it is good
    assert t.book.check(v.validation).amount_cents == 1_000
    t.power_cycle()
    t.clock.advance(seconds=1)
    e = refused("expired", t.book.check, v.validation)
    assert "3 days after 2025-03-14" in e.message
    refused("expired", t.book.begin_redeem, v.validation, host=Host({v.validation: 1_000}))
    t.power_cycle()
    refused("expired", t.book.check, v.validation)
    # expiry is recorded with each voucher: a later configuration does not change it
    t.close()
    t.options = {"expiry_days": 0, "offline_redemption": True}
    t.ledger = Ledger.open(tmp_path)
    t.book = t._book()
    refused("expired", t.book.check, v.validation)
    w = t.book.issue(500)
    t.book.printed(w.validation)
    assert w.expiry_days == 0 and w.expires is None
    t.clock.advance(days=100_000)
    assert t.book.check(w.validation).amount_cents == 500   # 0 days: never expires
    t.close()


def test_offline_redemption_needs_configuring_and_the_host_validates_otherwise(tmp_path):
    t = Terminal(tmp_path, offline_redemption=False)
    t.ledger.bill_in(5_000)
    v = t.book.issue(2_000)
    t.book.printed(v.validation)
    e = refused("offline", t.book.check, v.validation)
    assert "offline redemption is not configured" in e.message
    refused("offline", t.book.begin_redeem, v.validation)
    host = Host({v.validation: 2_000})
    assert t.book.check(v.validation, host=host) == Redemption(v.validation, 2_000, True, "host")
    refused("unknown", t.book.check, v.validation, host=Host({v.validation: 1_999}))  # not ours
    refused("unknown", t.book.check, v.validation, host=Host())                        # host says no
    t.book.begin_redeem(v.validation, host=host)
    t.power_cycle()
    assert t.book.pending_redemption().source == "host"
    t.book.commit_redeem(v.validation)
    t.power_cycle()
    assert t.ledger.credits_cents == 5_000
    t.close()


def test_another_machines_voucher_redeems_only_through_the_host(term):
    e = refused("offline", term.book.check, FOREIGN)
    assert "not this terminal's" in e.message
    refused("unknown", term.book.check, FOREIGN, host=Host())
    for impossible in (0, -5, True, 10**9, "100", 1.5):
        refused("unknown", term.book.check, FOREIGN, host=Host({FOREIGN: impossible}))
    host = Host({FOREIGN: 4_000})
    assert term.book.begin_redeem("42-1234-5678-9012-3456", host=host) == Redemption(FOREIGN, 4_000, True, "host")
    term.power_cycle()
    assert term.book.state(FOREIGN) is VoucherState.REDEEM_PENDING
    term.book.cancel_redeem(FOREIGN, "stacker jam: ticket returned")
    term.power_cycle()
    assert term.book.state(FOREIGN) is None                 # not ours: forgotten again
    assert term.book.history() == []
    term.book.begin_redeem(FOREIGN, host=host)
    term.book.commit_redeem(FOREIGN)
    term.power_cycle()
    assert term.ledger.credits_cents == 14_000 and term.meters()["ticket_in"] == 4_000
    refused("already_redeemed", term.book.check, FOREIGN, host=host)   # the host is not even asked
    assert host.asked == [FOREIGN, FOREIGN]
    assert term.book.history()[0]["own"] is False and term.book.history()[0]["source"] == "host"


def test_a_ticket_in_already_in_the_ledger_is_already_redeemed(term):
    term.ledger.ticket_in(300, FOREIGN)                # committed without the book
    refused("already_redeemed", term.book.check, FOREIGN, host=Host({FOREIGN: 300}))
    term.book = term._book()                           # the book rebuilt from the records knows it
    assert term.book.state(FOREIGN) is VoucherState.REDEEMED
    term.power_cycle()
    refused("already_redeemed", term.book.check, FOREIGN, host=Host({FOREIGN: 300}))


def test_malformed_numbers_are_refused_as_unknown(term):
    for text in ("", "12345", "00-1234-5678-9012-345X", "０" * 18):
        refused("unknown", term.book.check, text)
        refused("unknown", term.book.begin_redeem, text, host=Host())
    with pytest.raises(VoucherError):
        term.book.printed("nonsense")
    with pytest.raises(VoucherStateError, match="not in this terminal's book"):
        term.book.void(FOREIGN, "no such voucher")


# --- issuing refusals and uniqueness ----------------------------------------------------------------
def open_a_round(ledger: Ledger) -> None:
    kernel = RoundKernel(get_game("baccarat-war"), make_options("baccarat-war"), journal=ledger)
    with pytest.raises(ShoeExhausted):                # a tie: the war needs cards the stack lacks
        kernel.begin({1: {"bac": 10, "war": 10}}, StackedSource(parse_cards("Qs 2d 3h Ah")),
                     round_id="cut")
    assert ledger.open_round is not None


def test_issue_refusals_record_nothing(tmp_path):
    t = Terminal(tmp_path, key=None)
    t.ledger.bill_in(1_000)
    rows = t.ledger.rows
    for amount in (0, -100, True, 10.0, "500", None):
        with pytest.raises(VoucherError, match="positive whole number"):
            t.book.issue(amount)
    with pytest.raises(VoucherStateError, match="exceeds the credit meter"):
        t.book.issue(1_001)
    open_a_round(t.ledger)
    rows = t.ledger.rows
    with pytest.raises(VoucherStateError, match="in progress"):
        t.book.issue(100)
    assert t.ledger.rows == rows and t.ledger.setting(KEY_SETTING) is None   # not even the key
    resume_round(t.ledger, RngService.seeded(5))
    t.power_cycle()
    v = t.book.issue(t.ledger.credits_cents)
    key = bytes.fromhex(t.ledger.setting(KEY_SETTING)["key"])                # made at first use
    assert len(key) == 32 and v.validation == offline_validation(key, TERMINAL, 1)
    t.book.printed(v.validation)
    t.power_cycle()
    assert t.ledger.credits_cents == 0
    assert bytes.fromhex(t.ledger.setting(KEY_SETTING)["key"]) == key          # kept
    t.close()


def test_issue_needs_whole_credits_and_a_voucher_sized_amount(tmp_path):
    with Ledger.open(tmp_path, denomination=5) as ledger:
        ledger.bill_in(200_000_000)
        book = VoucherBook(ledger, terminal_id=TERMINAL)
        with pytest.raises(VoucherError, match="whole number of 5-cent credits"):
            book.issue(1_001)
        with pytest.raises(VoucherError, match="at most 99999999"):
            book.issue(100_000_000)
        assert book.issue(99_999_995).amount_cents == 99_999_995


@pytest.mark.parametrize("kwargs", [
    {"terminal_id": ""}, {"terminal_id": "  "}, {"terminal_id": 42},
    {"terminal_id": TERMINAL, "expiry_days": -1}, {"terminal_id": TERMINAL, "expiry_days": 10_000},
    {"terminal_id": TERMINAL, "expiry_days": True},
])
def test_book_refuses_bad_configuration(tmp_path, kwargs):
    with Ledger.open(tmp_path) as ledger, pytest.raises(VoucherError):
        VoucherBook(ledger, **kwargs)


def test_void_needs_a_reason(term):
    v = term.book.issue(100)
    with pytest.raises(VoucherError):
        term.book.void(v.validation, " ")
    assert term.book.state(v.validation) is VoucherState.ISSUED


def test_a_number_already_in_the_ledger_is_skipped(term):
    taken = offline_validation(FIXED_KEY, TERMINAL, 1)
    term.ledger.ticket_in(100, taken)                  # someone's record with that number
    also_taken = offline_validation(FIXED_KEY, TERMINAL, 2)
    term.ledger.event("test", note="x")
    term.ledger.voucher_record(also_taken, "note", note="a stray record")
    term.book = term._book()                           # records made without the book: rebuild it
    term.power_cycle()
    v = term.book.issue(500)
    assert v.sequence == 3 and v.validation == offline_validation(FIXED_KEY, TERMINAL, 3)
    term.book.printed(v.validation)
    term.power_cycle()
    assert term.book.issue(500).sequence == 4


def test_ten_thousand_issues_are_unique_and_rebuilt_at_open(tmp_path):
    t = Terminal(tmp_path)
    t.ledger.bill_in(10_000 * 100)
    with t.ledger.batch():                       # one transaction: the book's own view is the index
        issued = []
        for _ in range(10_000):
            v = t.book.issue(100)
            t.book.printed(v.validation)
            issued.append(v)
    numbers = {v.validation for v in issued}
    assert len(numbers) == 10_000
    assert [v.sequence for v in issued] == list(range(1, 10_001))
    assert {v.ticket_number for v in issued} == set(range(10_000))      # 10000 -> ticket # 0000
    assert all(v.validation == offline_validation(FIXED_KEY, TERMINAL, v.sequence) for v in issued[::97])
    assert t.ledger.credits_cents == 0 and t.meters()["ticket_out"] == 1_000_000
    t.power_cycle()
    history = t.book.history(10_000)
    assert len(history) == 10_000 and {h["state"] for h in history} == {"printed"}
    assert history[0]["validation"] == issued[-1].validation and history[-1]["sequence"] == 1
    t.ledger.bill_in(100)
    assert t.book.issue(100).sequence == 10_001
    t.close()


# --- money moves only with printed and commit_redeem ----------------------------------------------
def test_meters_move_only_on_printed_and_commit(term):
    def money() -> tuple[int, int, int]:
        m = term.ledger.meters_report()
        return m["meters"]["ticket_out"], m["meters"]["ticket_in"], m["credits"]

    assert money() == (0, 0, 10_000)
    v = term.book.issue(3_000)
    assert money() == (0, 0, 10_000)
    term.power_cycle()
    term.book.printed(v.validation)
    assert money() == (3_000, 0, 7_000)
    term.power_cycle()
    w = term.book.issue(1_000)
    term.book.void(w.validation, "paper out")
    assert money() == (3_000, 0, 7_000)
    term.power_cycle()
    term.book.check(v.validation)
    term.book.begin_redeem(v.validation)
    assert money() == (3_000, 0, 7_000)
    term.power_cycle()
    term.book.cancel_redeem(v.validation, "ticket returned")
    assert money() == (3_000, 0, 7_000)
    term.power_cycle()
    term.book.begin_redeem(v.validation)
    term.book.commit_redeem(v.validation)
    assert money() == (3_000, 3_000, 10_000)
    term.power_cycle()
    assert term.cycles == 6
    kinds = [h["state"] for h in term.book.history()]
    assert kinds == ["void", "redeemed"]


def test_printed_is_refused_while_a_round_is_in_progress_and_nothing_moves(term):
    v = term.book.issue(500)
    open_a_round(term.ledger)
    with pytest.raises(LedgerStateError, match="round is in progress"):
        term.book.printed(v.validation)
    assert term.book.state(v.validation) is VoucherState.ISSUED


# --- the ledger's additions ------------------------------------------------------------------------
def test_voucher_records_are_meter_neutral_and_records_for_lists_them_oldest_first(tmp_path):
    assert M.deltas("voucher", {"validation": "0" * 18, "state": "issued", "amount_cents": 500}) == {}
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(1_000)
        meters = dict(ledger.meters)
        ledger.voucher_record("001", "issued", amount_cents=500)
        ledger.voucher_record("001", "void", reason="jam")
        ledger.voucher_record("002", "issued", amount_cents=5)
        assert ledger.meters == meters
        records = ledger.records_for("001")
        assert [(r["kind"], r["body"]["state"]) for r in records] == [("voucher", "issued"), ("voucher", "void")]
        assert records[0]["seq"] < records[1]["seq"] and records[0]["time"]
        assert records[1]["body"] == {"validation": "001", "state": "void", "reason": "jam"}
        assert ledger.records_for("nothing") == []
        for bad in ("", None):
            with pytest.raises(LedgerError, match="voucher record needs"):
                ledger.voucher_record(bad, "issued")
        with pytest.raises(LedgerError, match="voucher record needs a state"):
            ledger.voucher_record("001", "")
    assert main(["ledger", "verify", "--state-dir", str(tmp_path)]) == 0


def test_reason_codes_are_the_documented_ones():
    assert REASON_CODES == ("unknown", "already_redeemed", "void", "expired", "pending", "offline")
    with pytest.raises(ValueError):
        VoucherRefused("nope", "x")


def test_a_damaged_stored_key_is_refused(term):
    term.ledger.store_setting(KEY_SETTING, {"key": "not hex"})
    book = VoucherBook(term.ledger, terminal_id=TERMINAL)
    with pytest.raises(VoucherError, match="damaged"):
        book.issue(100)


# --- numbers a validation system gives (SAS secure-enhanced or system validation) -----------------
def test_a_voucher_numbered_by_a_validation_system(tmp_path):
    t = Terminal(tmp_path, key=None)
    t.ledger.bill_in(1_000)
    rows = t.ledger.rows
    for bad in ("12345", "00-1234-5678-9012-345X", 123):
        with pytest.raises(VoucherError):
            t.book.issue(500, validation=bad)
    assert t.ledger.rows == rows
    v = t.book.issue(500, validation="12-1234-5678-9012-3456", sas_sequence=7)
    assert v.validation == "121234567890123456" and v.sequence == 1
    assert t.ledger.records_for(v.validation)[0]["body"]["sas_sequence"] == 7   # the giver's data, kept
    assert t.ledger.setting(KEY_SETTING) is None                               # no offline key needed
    t.book.printed(v.validation)
    t.power_cycle()
    with pytest.raises(VoucherError, match="used before"):
        t.book.issue(500, validation=v.validation)
    refused("offline", t.book.check, FOREIGN)
    t.close()


def test_a_redemption_asked_through_a_channel_keeps_it_on_its_return(term):
    redemption = term.book.begin_redeem(FOREIGN, host=Host({FOREIGN: 500}), cashable=False, channel="sas")
    assert redemption.cashable is False
    term.power_cycle()
    term.book.cancel_redeem(FOREIGN, "returned")
    returned = term.ledger.records_for(FOREIGN)[-1]["body"]
    assert (returned["state"], returned["channel"]) == ("redeem_returned", "sas")
    term.book.begin_redeem(FOREIGN, host=Host({FOREIGN: 500}), cashable=False)
    term.book.commit_redeem(FOREIGN)
    assert term.meters()["ticket_in_noncashable"] == 500
