"""The TCL status tracker, pure: records in, events out; the ticket settled exactly once."""

from __future__ import annotations

import pytest

from drivers.tcl.codec import Flag, StatusRecord
from drivers.tcl.driver import StatusTracker
from hal.errors import DeviceOperationError
from hal.events import DeviceFault, FaultKind, PaperLow, TicketNotPrinted, TicketPrinted

V = "123456789012345678"
IDLE = StatusRecord(Flag.TOP_OF_FORM)
BUSY = StatusRecord(Flag.BUSY)
DONE = StatusRecord(Flag.TOP_OF_FORM | Flag.VALIDATION_DONE)


def run(tracker: StatusTracker, records, now: float = 0.0) -> list:
    events = []
    for record in records:
        reaction = tracker.on_missed(now) if record is None else tracker.on_status(record, now)
        events += reaction.events
    return events


def test_a_single_record_that_looks_done_confirms_nothing():
    tracker = StatusTracker("p", start_timeout=1.0)
    run(tracker, [IDLE, IDLE])
    tracker.sent(V, 0.0)
    assert run(tracker, [BUSY, DONE, BUSY, DONE, None, DONE]) == []   # never two in a row
    assert run(tracker, [DONE]) == [TicketPrinted("p", V)]
    assert run(tracker, [DONE, DONE, IDLE, IDLE]) == []                # once
    with pytest.raises(DeviceOperationError):
        tracker.sent(V, 0.0)
        tracker.sent(V, 0.0)


def test_faults_and_paper_low_are_reported_on_change_when_two_records_agree():
    tracker = StatusTracker("p", start_timeout=1.0)
    out = StatusRecord(Flag.PAPER_OUT | Flag.PAPER_LOW)
    assert run(tracker, [out, IDLE, out]) == []
    assert run(tracker, [out, out]) == [DeviceFault("p", FaultKind.PAPER_OUT, "paper out"),
                                        PaperLow("p", True)]
    assert run(tracker, [IDLE, IDLE]) == [
        DeviceFault("p", FaultKind.PAPER_OUT, "paper out", cleared=True), PaperLow("p", False)]


@pytest.mark.parametrize(("records", "reason"), [
    ([BUSY, StatusRecord(Flag.JAM), StatusRecord(Flag.JAM)], "paper jam mid-ticket"),
    ([StatusRecord(Flag.CHASSIS_OPEN)] * 2, "chassis open"),
    ([BUSY, None, StatusRecord(Flag.RESET)] + [StatusRecord(Flag.RESET)], "power cut mid-ticket"),
    ([StatusRecord(Flag.DATA_ERROR)] * 2, "job refused: the fields do not fit the template"),
    ([BUSY, IDLE, IDLE], "the job ended without its validation number"),
], ids=["jam", "chassis", "power", "refused", "no-validation"])
def test_every_other_ending_is_not_printed(records, reason):
    tracker = StatusTracker("p", start_timeout=1.0)
    tracker.sent(V, 0.0)
    events = [e for e in run(tracker, records) if not isinstance(e, DeviceFault)]
    assert events == [TicketNotPrinted("p", V, reason)]
    assert tracker.pending is None


def test_a_job_that_never_starts_times_out_but_silence_does_not():
    tracker = StatusTracker("p", start_timeout=1.0)
    tracker.sent(V, 0.0)
    assert run(tracker, [IDLE, IDLE], now=0.5) == []
    assert run(tracker, [None, None, None], now=5.0) == []          # unknown while silent
    assert run(tracker, [IDLE, IDLE], now=5.0) == [
        TicketNotPrinted("p", V, "the printer did not start the job within 1 s")]
    tracker.sent(V, 10.0)
    assert tracker.on_lost("gone") == [TicketNotPrinted("p", V, "printer lost mid-ticket (gone)")]
