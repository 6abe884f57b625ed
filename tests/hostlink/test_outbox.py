"""The persistent outbox: reports numbered from critical memory, kept until acknowledged."""

from __future__ import annotations

from pathlib import Path

from egmproto.envelope import canonical_json
from egmproto.messages import check_body
from firmware.hostlink.outbox import ACK_FLUSH_EVERY, Outbox, build
from firmware.ledger.ledger import Ledger


def _reports(ledger: Ledger, outbox: Outbox) -> list[tuple[int, str, dict]]:
    return [(n, *outbox.message(n)) for n in outbox.numbers()]


def test_reports_are_numbered_in_log_order_and_survive_a_restart(tmp_path: Path) -> None:
    with Ledger.open(tmp_path) as ledger:
        outbox = Outbox(ledger)
        first = outbox.last_number                     # ledger_created
        ledger.bill_in(2000)
        ledger.store_setting("touch.calibration", {"x": 1})   # not a report
        ledger.event("door_open", door="main")
        ledger.meters_snapshot("test")
        assert outbox.last_number == first + 3
        types = [(t, b.get("name")) for _, t, b in _reports(ledger, outbox)][-3:]
        assert types == [("event", "bill_in"), ("event", "door_open"), ("meters", None)]
        numbers = outbox.numbers()
    with Ledger.open(tmp_path) as again:
        rebuilt = Outbox(again)
        assert rebuilt.numbers() == numbers
        assert rebuilt.last_number == first + 3


def test_acknowledged_reports_leave_and_the_watermark_persists(tmp_path: Path) -> None:
    now = [0.0]
    with Ledger.open(tmp_path) as ledger:
        outbox = Outbox(ledger, clock=lambda: now[0])
        for _ in range(5):
            ledger.bill_in(100)
        numbers = outbox.numbers()
        assert outbox.ack(numbers[1]) and not outbox.ack(numbers[1])   # a repeat changes nothing
        assert outbox.watermark == 0                   # report 1 is still missing
        assert not outbox.ack(10_000)                  # nonsense
        outbox.ack(numbers[0])
        assert outbox.watermark == numbers[1]
        assert outbox.numbers() == numbers[2:]
        assert not outbox.flush()                      # not yet due: coalesced
        now[0] = 10.0
        assert outbox.flush()
    with Ledger.open(tmp_path) as again:
        assert Outbox(again).numbers() == numbers[2:]


def test_acks_not_flushed_before_a_power_cut_are_sent_again(tmp_path: Path) -> None:
    with Ledger.open(tmp_path) as ledger:
        outbox = Outbox(ledger)
        ledger.bill_in(100)
        n = outbox.numbers()
        for number in n:
            outbox.ack(number)
        assert len(outbox) == 0
    with Ledger.open(tmp_path) as again:                # power cut: the watermark was never written
        assert Outbox(again).numbers() == n


def test_flush_every_many_acks(tmp_path: Path) -> None:
    with Ledger.open(tmp_path) as ledger:
        outbox = Outbox(ledger, clock=lambda: 0.0)
        with ledger.batch():
            for _ in range(ACK_FLUSH_EVERY + 1):
                ledger.bill_in(100)
        for number in outbox.numbers():
            outbox.ack(number)
        assert outbox.flush()
        assert ledger.log_record(ledger.log_index()[-1][0])["kind"] == "host_ack"


def test_every_report_fits_the_schema(tmp_path: Path) -> None:
    with Ledger.open(tmp_path) as ledger:
        outbox = Outbox(ledger)
        ledger.event("power_up")
        ledger.event("cabinet.tilt_raised", tilt="door:main", reason="open", time=1234.5)
        ledger.bill_in(500)
        ledger.ticket_out(500, "123456789012345678")
        ledger.voucher_record("123456789012345678", "host_request")
        ledger.event("hostlink.hello", kem_public="AAAA", software="egm", last_host_seq=None)
        ledger.meters_snapshot("periodic")
        for n in outbox.numbers():
            type_, body = outbox.message(n)
            check_body(type_, body)
            canonical_json(body)
        kinds = [outbox.message(n)[0] for n in outbox.numbers()]
        assert "voucher_redeem_request" in kinds and "hello" in kinds and "meters" in kinds
        tilt = [outbox.message(n)[1] for n in outbox.numbers() if outbox.message(n)[1].get("name") == "cabinet.tilt_raised"]
        assert tilt[0]["data"]["time"] == "1234.5"     # floats travel as strings


def test_build_meters_is_the_egm_meters_document(tmp_path: Path) -> None:
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(2000)
        ledger.meters_snapshot("test")
        seq = ledger.log_index()[-1][0]
        type_, body = build(ledger, ledger.log_record(seq))
        report = ledger.meters_report()
        assert type_ == "meters"
        assert body["meters"] == report["meters"] and body["credits"] == report["credits"]


def _outbox_from_whole_history(ledger: Ledger) -> tuple[int, int, dict[int, int]]:
    """The outbox as a walk of every record gives it: (last number, watermark, number -> seq)."""
    from firmware.hostlink.outbox import REPORTED

    numbered = [seq for seq, kind, _ in ledger.log_index() if kind in REPORTED]
    watermark = max((ledger.log_record(seq)["body"]["upto"] for seq, kind, _ in ledger.log_index()
                     if kind == "host_ack"), default=0)
    return len(numbered), watermark, {n: seq for n, seq in enumerate(numbered, 1) if n > watermark}


def test_the_outbox_at_power_up_reads_only_what_is_outstanding(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(Ledger, "CHECKPOINT_EVERY", 10)
    with Ledger.open(tmp_path) as ledger:
        outbox = Outbox(ledger)
        for i in range(400):
            ledger.bill_in(100) if i % 3 else ledger.store_setting("touch.calibration", {"i": i})
            if i % 50 == 49:
                for n in outbox.numbers()[:-7]:              # the newest 7 stay outstanding
                    outbox.ack(n)
                outbox.flush(force=True)
        outbox.close()
    with Ledger.open(tmp_path) as booted:
        read: list[int] = []
        query = booted._store.query
        monkeypatch.setattr(booted._store, "query", lambda sql, params=(): read.append(
            len(rows := query(sql, params))) or rows)
        rebuilt = Outbox(booted)
        assert sum(read) <= len(rebuilt) == 7
        monkeypatch.undo()
        assert (rebuilt.last_number, rebuilt.watermark, rebuilt._pending) == _outbox_from_whole_history(booted)
        assert rebuilt.last_number > 250
