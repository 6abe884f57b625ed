"""Golden frames of the AFT long polls 0x72 and 0x74 and their replies.

Layouts: the field tables of SAS 6.02 chapter 8 as the Aristocrat Monaco SAS client reproduces them
(``LP72AftTransferFundsParser``, ``LP74AftGameLockAndStatusRequestParser``); the cancel frame is
published by soicasino/spark-sas2; the other frames and their CRCs are computed here
(docs/protocols/sas.md, "AFT").
"""

from __future__ import annotations

import pytest

from drivers.sas import messages as m
from drivers.sas.codec import EgmDecoder, HostDecoder, LongPoll, Reply, encode_poll, encode_reply

KEY = bytes(20)
TO_MACHINE = m.AftTransfer(0x00, 0, 0x00, 2500, 0, 0, 0x00, 1234, KEY, "T1", 0, 0, b"", 0)
FROM_MACHINE = m.AftTransfer(0x01, 0, 0x80, 2500, 0, 0, 0x80, 1234, KEY, "T2", 0, 0,
                           bytes.fromhex("0003414243"), 0)
ZEROS_20 = " ".join(["00"] * 20)

POLLS = [
    # to the machine: code 00 (full only), index 0, type 00, $25.00 cashable, flags 0, asset 1234
    # (D2 04 00 00), registration key 20 x 00, ID "T1", expiration 0, pool 0, no receipt data, timeout 0
    (TO_MACHINE, f"01 72 37 00 00 00 00 00 00 25 00 00 00 00 00 00 00 00 00 00 00 00 D2 04 00 00 {ZEROS_20} "
                 "02 54 31 00 00 00 00 00 00 00 00 00 E1 9E"),
    # from the machine to the host: code 01 (partial allowed), type 80, receipt requested (flag 80),
    # receipt data: one element, code 00 (transfer source), 3 characters "ABC"
    (FROM_MACHINE, f"01 72 3C 01 00 80 00 00 00 25 00 00 00 00 00 00 00 00 00 00 00 80 D2 04 00 00 {ZEROS_20} "
                   "02 54 32 00 00 00 00 00 00 05 00 03 41 42 43 00 00 51 A8"),
    (m.AftInterrogate(0xFF, 0x00), "01 72 02 FF 00 0F 22"),
    (m.AftCancel(0x80), "01 72 01 80 0B B4"),                  # published by spark-sas2
    (m.AftLockRequest(0x00, 0x03, 1000), "01 74 00 03 10 00 3D 46"),   # lock, in and out, 10.00 s
    (m.AftLockRequest(0x80, 0x00, 0), "01 74 80 00 00 00 A6 11"),      # cancel the lock
    (m.AftLockRequest(0xFF, 0x00, 0), "01 74 FF 00 00 00 1A F9"),      # interrogate
]


def _wire(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


@pytest.mark.parametrize(("body", "wire"), POLLS)
def test_golden_aft_polls_encode_on_the_host_and_decode_on_the_machine(body, wire):
    command = 0x74 if isinstance(body, m.AftLockRequest) else 0x72
    assert encode_poll(LongPoll(1, command, body.encode())) == _wire(wire)
    decoder = EgmDecoder(1)
    decoder.receive_data(_wire(wire))
    [poll] = decoder.events()
    assert poll == LongPoll(1, command, body.encode())
    assert m.parse_request(command, poll.data) == body


REPLIES = [
    # transfer complete: position 1, status 00, receipt FF, type 00, $25.00, asset 1234, "T1",
    # 11/27/2026 21:05:09, expiration 0, pool 0, cumulative meters 5 bytes each ($25.00, 0, 0)
    (0x72, m.AftTransferReply(1, 0x00, 0xFF, 0x00, 2500, 0, 0, 0, 1234, "T1", 11272026, 210509, 0, 0, 2500, 0, 0),
     "01 72 3A 01 00 FF 00 00 00 00 25 00 00 00 00 00 00 00 00 00 00 00 00 D2 04 00 00 02 54 31 "
     "11 27 20 26 21 05 09 00 00 00 00 00 00 05 00 00 00 25 00 05 00 00 00 00 00 05 00 00 00 00 00 86 79"),
    # no transfer information available: position, status FF, receipt FF
    (0x72, m.AftShortReply(0, 0xFF, 0xFF), "01 72 03 00 FF FF 25 D2"),
    # lock status: asset 1234, locked, in and out available, host cashout 0, AFT status 92 (any AFT,
    # in-house, partial to host), max buffer index 7F, $25.00 cashable, limit $1000.00
    (0x74, m.AftStatus(1234, 0x00, 0x03, 0x00, 0x92, 0x7F, 2500, 0, 0, 100000, 0, 0),
     "01 74 23 D2 04 00 00 00 03 00 92 7F 00 00 00 25 00 00 00 00 00 00 00 00 00 00 00 00 00 10 00 00 "
     "00 00 00 00 00 00 D8 AE"),
]


@pytest.mark.parametrize(("command", "body", "wire"), REPLIES)
def test_golden_aft_replies_encode_on_the_machine_and_decode_on_the_host(command, body, wire):
    assert encode_reply(Reply(1, command, body.encode())) == _wire(wire)
    host = HostDecoder(1)
    host.expect(LongPoll(1, command, b"\xff\x00\x00\x00" if command == 0x74 else b"\xff\x00"))
    host.receive_data(_wire(wire))
    [reply] = host.events()
    assert m.parse_reply(command, reply.data) == body


def test_a_pending_transfer_is_sent_with_zero_sized_meters():
    pending = m.AftTransferReply(0, 0x40, 0xFF, 0x00, 2500, 0, 0, 0, 1234, "T1", 0, 0, 0, 0, 0, 0, 0)
    assert pending.encode().endswith(bytes(7 + 4 + 2) + b"\x00\x00\x00")
    assert m.AftTransferReply.decode(pending.encode()) == pending


@pytest.mark.parametrize(("mutate", "status"), [
    (lambda b: b[:3] + b"\x00\x00\x0A\x00\x00" + b[8:], 0x83),          # cashable amount not BCD
    (lambda b: b[:43] + b"\x15" + b"X" * 21 + b[46:], 0x95),             # a 21-character transaction ID
    (lambda b: b[:43] + b"\x00" + b[46:], 0x95),                         # an empty transaction ID
    (lambda b: b[:44] + b"\x01" + b[45:], 0x95),                         # not printable ASCII
    (lambda b: b[:30], 0x82),                                            # cut short
    (lambda b: b + b"\x00", 0x82),                                       # a byte left over
    (lambda b: b[:-2] + b"\x99\x9A", 0x83),                              # lock timeout not BCD
])
def test_a_transfer_request_that_cannot_be_read_names_its_transfer_status(mutate, status):
    with pytest.raises(m.AftBodyError) as caught:
        m.parse_request(0x72, mutate(TO_MACHINE.encode()))
    assert caught.value.status == status


def test_the_host_cannot_encode_a_transaction_id_sas_cannot_carry():
    with pytest.raises(ValueError, match="1-20 printable ASCII"):
        m.AftTransfer(0, 0, 0, 100, 0, 0, 0, 1, KEY, "X" * 21, 0, 0, b"", 0)
