"""The driver's status tracker, sans-I/O: status sequences in, events and actions out.

Adversarial orderings the pty tests cannot force on demand: every status repeated, statuses
skipped, VEND_VALID and STACKED repeated, escrows that change, power-ups at awkward moments.
"""

from __future__ import annotations

import itertools

import pytest

from drivers.id003.codec import Frame, Status
from drivers.id003.driver import StatusTracker
from drivers.id003.settings import USD_TABLE, notes_in_cents
from hal.events import (
    DeviceFault,
    FaultKind,
    NoteEscrowed,
    NoteStacked,
    Rejected,
    Returned,
    TicketEscrowed,
    TicketStacked,
)

D = "validator"
TICKET = "123456789012345678"
S = Status


def F(code: int, data: bytes = b"") -> Frame:
    return Frame(code, data)


ESCROW_20 = F(S.ESCROW, b"\x65")
NOTE_CYCLE = [F(S.IDLING), F(S.ACCEPTING), ESCROW_20, F(S.STACKING), F(S.VEND_VALID),
              F(S.STACKED), F(S.IDLING)]


def run(statuses, tracker=None):
    tracker = tracker or StatusTracker(D, notes_in_cents(USD_TABLE))
    events, acks, reactions = [], 0, []
    for frame in statuses:
        reaction = tracker.on_status(frame)
        events += reaction.events
        acks += reaction.ack
        reactions.append(reaction)
    return events, acks, reactions


def test_a_note_is_escrowed_once_and_credited_once():
    events, acks, _ = run(NOTE_CYCLE)
    assert events == [NoteEscrowed(D, 2000), NoteStacked(D, 2000)]
    assert acks == 1


@pytest.mark.parametrize("times", [2, 3, 5])
def test_every_status_repeated_still_credits_once_and_acks_every_vend_valid(times):
    repeated = [frame for frame in NOTE_CYCLE for _ in range(times)]
    events, acks, _ = run(repeated)
    assert events == [NoteEscrowed(D, 2000), NoteStacked(D, 2000)]
    assert acks == times


def test_missed_vend_valid_is_credited_on_stacked_and_not_again():
    events, acks, _ = run([ESCROW_20, F(S.STACKING), F(S.STACKED), F(S.STACKED), F(S.IDLING)])
    assert events == [NoteEscrowed(D, 2000), NoteStacked(D, 2000)] and acks == 0


def test_vend_valid_after_stacked_or_without_escrow_credits_nothing():
    events, _, _ = run([ESCROW_20, F(S.VEND_VALID), F(S.STACKED), F(S.VEND_VALID)])
    assert events.count(NoteStacked(D, 2000)) == 1
    events, acks, _ = run([F(S.IDLING), F(S.VEND_VALID)])
    assert events == [] and acks == 1                         # ACKed, never credited


def test_two_identical_notes_in_a_row_are_two_credits():
    events, _, _ = run(NOTE_CYCLE + NOTE_CYCLE[1:])
    assert events == [NoteEscrowed(D, 2000), NoteStacked(D, 2000)] * 2
    # Even when the validator goes straight from one vend to the next escrow.
    events, _, _ = run([ESCROW_20, F(S.VEND_VALID), ESCROW_20, F(S.VEND_VALID)])
    assert events == [NoteEscrowed(D, 2000), NoteStacked(D, 2000)] * 2


def test_return_reject_and_an_escrow_that_vanishes():
    events, _, _ = run([ESCROW_20, ESCROW_20, F(S.RETURNING), F(S.RETURNING), F(S.IDLING)])
    assert events == [NoteEscrowed(D, 2000), Returned(D)]
    events, _, _ = run([F(S.ACCEPTING), F(S.REJECTING, b"\x79"), F(S.REJECTING, b"\x79"),
                        F(S.IDLING), F(S.ACCEPTING), F(S.REJECTING, b"\x7f")])
    assert events == [Rejected(D, "return by inhibit"), Rejected(D, "reject reason 0x7F")]
    events, _, _ = run([ESCROW_20, F(S.IDLING), F(S.IDLING)])    # RETURNING never seen
    assert events == [NoteEscrowed(D, 2000), Returned(D)]


def test_tickets():
    escrow = F(S.ESCROW, b"\x6f" + TICKET.encode())
    events, _, _ = run([escrow, escrow, F(S.STACKING), F(S.VEND_VALID), F(S.VEND_VALID),
                        F(S.STACKED)])
    assert events == [TicketEscrowed(D, TICKET), TicketStacked(D, TICKET)]


def test_unknown_and_malformed_escrows():
    events, _, reactions = run([F(S.ESCROW, b"\x68"), F(S.ESCROW, b"\x68"), F(S.RETURNING),
                                F(S.IDLING)])
    assert events == [Rejected(D, "unknown note code 0x68")]
    assert [r.return_escrow for r in reactions] == [True, False, False, False]
    events, _, _ = run([F(S.ESCROW, b"\x63\x00"), F(S.ESCROW, b""), F(S.IDLING)])
    assert events == []


def test_a_changed_escrow_reports_the_new_item():
    events, _, _ = run([ESCROW_20, F(S.ESCROW, b"\x63"), F(S.VEND_VALID)])
    assert events == [NoteEscrowed(D, 2000), NoteEscrowed(D, 500), NoteStacked(D, 500)]


@pytest.mark.parametrize(("status", "data", "kind", "detail"), [
    (S.JAM_IN_ACCEPTOR, b"", FaultKind.JAM, "jam in acceptor"),
    (S.JAM_IN_STACKER, b"", FaultKind.JAM, "jam in stacker"),
    (S.STACKER_FULL, b"", FaultKind.STACKER_FULL, "stacker full"),
    (S.STACKER_OPEN, b"", FaultKind.STACKER_OPEN, "stacker open (removed)"),
    (S.CHEATED, b"", FaultKind.CHEAT, "cheat detected"),
    (S.FAILURE, b"\xa2", FaultKind.FAILURE, "failure 0xA2: stack motor failure"),
])
def test_faults_are_reported_once_and_cleared_once(status, data, kind, detail):
    events, _, _ = run([ESCROW_20, F(status, data), F(status, data), F(S.INITIALIZE),
                        F(S.IDLING)])
    assert events == [NoteEscrowed(D, 2000), DeviceFault(D, kind, detail),
                      DeviceFault(D, kind, detail, cleared=True)]


def test_one_fault_replacing_another_clears_the_first():
    events, _, _ = run([F(S.JAM_IN_ACCEPTOR), F(S.STACKER_OPEN), F(S.IDLING)])
    assert events == [DeviceFault(D, FaultKind.JAM, "jam in acceptor"),
                      DeviceFault(D, FaultKind.JAM, "jam in acceptor", cleared=True),
                      DeviceFault(D, FaultKind.STACKER_OPEN, "stacker open (removed)"),
                      DeviceFault(D, FaultKind.STACKER_OPEN, "stacker open (removed)",
                                  cleared=True)]


def test_power_up_asks_for_reinitialisation_and_settles_the_escrow():
    events, _, reactions = run([ESCROW_20, F(S.POWER_UP_BILL_IN_ACCEPTOR), F(S.INITIALIZE)])
    assert events == [NoteEscrowed(D, 2000), Returned(D)]
    assert [r.reinitialise for r in reactions] == [False, True, False]
    # In the stacker: neither credited nor returned (it is the attendant's call).
    events, _, _ = run([ESCROW_20, F(S.STACKING), F(S.POWER_UP_BILL_IN_STACKER),
                        F(S.INITIALIZE), F(S.IDLING)])
    assert events == [NoteEscrowed(D, 2000)]
    # After the credit, a power-up changes nothing.
    events, _, _ = run([ESCROW_20, F(S.VEND_VALID), F(S.POWER_UP), F(S.IDLING)])
    assert events == [NoteEscrowed(D, 2000), NoteStacked(D, 2000)]


def test_no_interleaving_of_the_note_cycle_credits_twice():
    """Any subsequence of a cycle, each status repeated 1-2 times: at most one credit, and one
    whenever VEND_VALID or STACKED was seen."""
    cycle = NOTE_CYCLE[1:6]
    for keep in itertools.product((0, 1, 2), repeat=len(cycle)):
        statuses = [f for f, n in zip(cycle, keep, strict=True) for _ in range(n)]
        events, _, _ = run(statuses)
        credits = events.count(NoteStacked(D, 2000))
        escrowed = keep[1] > 0
        vended = keep[3] > 0 or keep[4] > 0
        assert credits == (1 if escrowed and vended else 0), statuses


def test_held_ack_waits_for_the_record_and_credits_once():
    tracker = StatusTracker(D, notes_in_cents(USD_TABLE), hold_ack=True)
    events, acks, _ = run([ESCROW_20, F(S.STACKING), F(S.VEND_VALID), F(S.VEND_VALID)], tracker)
    assert events == [NoteEscrowed(D, 2000), NoteStacked(D, 2000)] and acks == 0
    tracker.recorded()
    events, acks, _ = run([F(S.VEND_VALID), F(S.STACKED), F(S.IDLING)], tracker)
    assert events == [] and acks == 1
    # Nothing credited (no escrow known): ACKed at once, there is nothing to record.
    events, acks, _ = run([F(S.IDLING), F(S.VEND_VALID)], StatusTracker(D, notes_in_cents(USD_TABLE), hold_ack=True))
    assert events == [] and acks == 1
