"""The responder's identity, bill and clock polls, and the polls it must not answer."""

from __future__ import annotations

import pytest

from drivers.sas.codec import LongPoll, encode_poll
from drivers.sas.messages import DateTime, LastBill, MachineInfo, SasVersion, SelectedMetersRequest
from tests.sas.helpers import ADDRESS, NOW, ask, machine_on


def test_machine_id_and_version(ledger):
    machine = machine_on(ledger)
    assert ask(machine, LongPoll(ADDRESS, 0x1F)) == MachineInfo("BW", "001", 0x02, 50, 0, 0, "BW0001", "9650")
    assert ask(machine, LongPoll(ADDRESS, 0x54)) == SasVersion("602", "EGM-0042")
    assert ask(machine, LongPoll(ADDRESS, 0x7E)) == DateTime(NOW)


def test_last_accepted_bill_comes_from_the_ledger(ledger):
    machine = machine_on(ledger)
    assert ask(machine, LongPoll(ADDRESS, 0x48)) == LastBill(0, 0, 0)
    ledger.bill_in(2000)
    ledger.bill_in(500)
    ledger.bill_in(500)
    assert ask(machine, LongPoll(ADDRESS, 0x48)) == LastBill(0, 0, 0)        # same poll again: a retry
    machine.receive(bytes([0x80 | 2]))                                       # the host's next machine
    assert ask(machine, LongPoll(ADDRESS, 0x48)) == LastBill(0, 0x02, 2)      # $5: code 02, two of them


def test_polls_not_answered(ledger):
    machine = machine_on(ledger)
    assert machine.receive(encode_poll(LongPoll(2, 0x1A))) == b""            # another machine
    assert machine.receive(encode_poll(LongPoll(0, 0x01))) == b""            # broadcast
    assert machine.receive(bytes([ADDRESS, 0xE5])) == b""                    # not a SAS long poll
    game_7 = LongPoll(ADDRESS, 0x2F, SelectedMetersRequest(7, (0x0C,)).encode())
    assert machine.receive(encode_poll(game_7)) == b""                       # no game 7 (6 games)
    assert ask(machine, LongPoll(ADDRESS, 0x1A)) is not None                 # and it still answers


# --- poll sets ------------------------------------------------------------------------------------
class _Echo:
    """A poll set answering 0x21 with its seed reversed (a stand-in for a real module)."""

    def handlers(self):
        return {0x21: lambda data: data[::-1]}


def test_a_poll_set_adds_its_long_polls_to_the_machine(ledger) -> None:
    from drivers.sas.messages import RomSignature, RomSignatureRequest
    from firmware.sas.responder import SasMachine
    from firmware.sas.view import LedgerView
    from tests.sas.helpers import IDENTITY

    machine = SasMachine(ADDRESS, LedgerView(ledger, IDENTITY, clock=lambda: NOW), polls=[_Echo()])
    assert 0x21 in machine.commands and 0x1F in machine.commands
    reply = ask(machine, LongPoll(ADDRESS, 0x21, RomSignatureRequest(0x1234).encode()))
    assert reply == RomSignature(0x3412)


def test_a_long_poll_answered_twice_is_refused(ledger) -> None:
    from firmware.sas.responder import SasMachine
    from firmware.sas.view import LedgerView
    from tests.sas.helpers import IDENTITY

    class Twice:
        def handlers(self):
            return {0x1F: lambda data: b""}

    with pytest.raises(ValueError, match="0x1F is answered twice"):
        SasMachine(ADDRESS, LedgerView(ledger, IDENTITY), polls=[Twice()])
