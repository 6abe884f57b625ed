"""The control polls (0x01-0x07, 0x0E, 0x1B, 0x94) through ``SasMachine`` on a real ledger: golden
frames (request and reply bytes) and what each asks of the terminal. The frames' sources are in
docs/protocols/sas.md ("Long polls"); the terminal's side is tested in tests/cabinet/test_sas_control.py."""

from __future__ import annotations

import pytest

from firmware.sas.control import ControlPolls, Handpay, Sound
from firmware.sas.responder import SasMachine
from firmware.sas.view import LedgerView
from tests.sas.helpers import ADDRESS, IDENTITY, NOW


class Recorder:
    """Controls that record what the polls asked."""

    def __init__(self, handpay: Handpay | None = None, resettable: bool = True) -> None:
        self.calls: list[tuple[str, object]] = []
        self.pending = handpay
        self.resettable = resettable

    def lock_out_play(self, locked):
        self.calls.append(("play_locked", locked))

    def bill_acceptor(self, enabled):
        self.calls.append(("bill_acceptor", enabled))

    def sound(self, sound):
        self.calls.append(("sound", sound))

    def real_time_events(self, enabled):
        self.calls.append(("real_time_events", enabled))

    def handpay(self):
        return self.pending

    def reset_handpay(self):
        self.calls.append(("reset_handpay", None))
        if self.resettable:
            self.pending = None
        return self.resettable


def machine(ledger, controls) -> SasMachine:
    return SasMachine(ADDRESS, LedgerView(ledger, IDENTITY, clock=lambda: NOW), polls=[ControlPolls(controls)])


def send(m: SasMachine, frame: str) -> str:
    return m.receive(bytes.fromhex(frame)).hex(" ")


#: (request, reply, what the terminal is asked). 01 01 51 08 and 01 02 CA 3A are the frames
#: spark-sas2 sends to real machines; the CRCs of the others were computed with the independent
#: calculator ``drivers.crc.crc16_kermit``.
GOLDEN = [
    ("01 01 51 08", "01", ("play_locked", True)),
    ("01 02 CA 3A", "01", ("play_locked", False)),
    ("01 03 43 2B", "01", ("sound", Sound.OFF)),
    ("01 04 FC 5F", "01", ("sound", Sound.ON)),
    ("01 05 75 4E", "01", ("sound", Sound.GAME_OFF)),
    ("01 06 EE 7C", "01", ("bill_acceptor", True)),
    ("01 07 67 6D", "01", ("bill_acceptor", False)),
    ("01 0E 01 45 D1", "01", ("real_time_events", True)),
    ("01 0E 00 CC C0", "01", ("real_time_events", False)),
]


@pytest.mark.parametrize(("request_", "reply", "call"), GOLDEN)
def test_each_control_poll_is_acked_with_the_address_after_it_acted(ledger, request_, reply, call):
    controls = Recorder()
    assert send(machine(ledger, controls), request_) == reply
    assert controls.calls == [call]


def test_real_time_reporting_with_a_value_sas_does_not_define_is_nacked_and_changes_nothing(ledger):
    controls = Recorder()
    assert send(machine(ledger, controls), "01 0E 02 DE E3") == "81"
    assert controls.calls == []


def test_a_control_poll_with_a_bad_crc_is_not_answered_and_not_acted_on(ledger):
    controls = Recorder()
    assert send(machine(ledger, controls), "01 01 51 09") == ""
    assert controls.calls == []


def test_a_repeated_shutdown_is_acked_again_without_acting_twice(ledger):
    controls = Recorder()
    m = machine(ledger, controls)
    assert send(m, "01 01 51 08") == "01" and send(m, "01 01 51 08") == "01"
    assert controls.calls == [("play_locked", True)]


def test_handpay_information_is_all_zero_without_a_handpay(ledger):
    # 01 1B -> 01 1B, group 00, level 00, amount 00000 00000, partial 0000, reset 00, 10 x 00, CRC
    assert send(machine(ledger, Recorder()), "01 1B") == "01 1b " + "00 " * 20 + "6b 2d"


def test_handpay_information_gives_the_lockup_in_accounting_credits_as_cancelled_credits(ledger):
    # level 80 (cancelled credits), amount 1234 credits in 5 BCD bytes, no partial pay, reset ID 0
    frame = send(machine(ledger, Recorder(Handpay(1234))), "01 1B")
    assert frame.startswith("01 1b 00 80 00 00 00 12 34 00 00 00 " + "00 " * 10)
    assert frame == "01 1b 00 80 00 00 00 12 34 00 00 00 " + "00 " * 10 + "71 67"


def test_remote_handpay_reset_replies_reset_then_not_in_a_handpay(ledger):
    controls = Recorder(Handpay(500))
    m = machine(ledger, controls)
    assert send(m, "01 94 75 CB") == "01 94 00 e1 24"            # 00: handpay reset
    send(m, "81")                                                # another poll in between
    assert send(m, "01 94 75 CB") == "01 94 02 f3 07"            # 02: not in a handpay
    assert controls.calls == [("reset_handpay", None)]


def test_remote_handpay_reset_that_the_terminal_cannot_do_replies_unable(ledger):
    controls = Recorder(Handpay(500), resettable=False)
    assert send(machine(ledger, controls), "01 94 75 CB") == "01 94 01 68 35"
