"""SAS TITO on the terminal in-process, with the simulated validator and printer: a ticket printed
with a secure-enhanced number and the host's ticket text, read back with 0x4D, inserted, redeemed
through the SAS host once, and refused the second time."""

from __future__ import annotations

import pytest

from drivers.sas.codec import GeneralPoll, LongPoll
from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.host_tito import redeem_ticket
from drivers.sas.messages import TicketData, ValidationId
from drivers.sas.validation import RedemptionStatus as St
from drivers.sas.validation import secure_enhanced_number
from firmware.cabinet.sas_tito import attach_sas_tito
from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService
from firmware.sas.responder import SasMachine
from firmware.sas.view import LedgerView
from tests.sas.helpers import ADDRESS, IDENTITY, ask


@pytest.fixture
def cabinet(tmp_path):
    from hal.registry import parse_spec
    from sim_hardware.rig import SimRig

    rig = SimRig({"bill_validator": parse_spec("bill_validator", "sim:id003"),
                  "printer": parse_spec("printer", "sim:tcl")})
    ledger = Ledger.open(tmp_path)
    terminal = Terminal(Config.model_validate({}), ledger, RngService.seeded(1),
                        Devices(bill_validator=rig.device("bill_validator"), printer=rig.device("printer")),
                        VoucherBook(ledger, terminal_id="T1"))
    terminal.power_up()
    polls = attach_sas_tito(terminal, validation="secure-enhanced", asset_number=42)
    machine = SasMachine(ADDRESS, LedgerView(ledger, IDENTITY), polls=[polls])
    try:
        yield terminal, machine, rig
    finally:
        ledger.close()
        rig.close()


def _until(terminal: Terminal, done, what: str, steps: int = 1000) -> None:
    for _ in range(steps):
        terminal.step(0.01)
        if done():
            return
    raise AssertionError(f"no {what}: {terminal.status()}")


def _exceptions(machine: SasMachine) -> list[int]:
    out = []
    machine.receive(bytes([0x82]))
    while (code := ask(machine, GeneralPoll(ADDRESS))) != 0:
        out.append(code)
        machine.receive(bytes([0x82]))
    return out


def test_a_ticket_printed_by_the_terminal_is_redeemed_through_the_sas_host_once(cabinet):
    terminal, machine, rig = cabinet
    validator, printer = rig.simulator("bill_validator"), rig.simulator("printer")
    host = lambda poll: ask(machine, poll)                                            # noqa: E731
    assert host(LongPoll(ADDRESS, 0x4C, ValidationId(0x654321, 0).encode())) == ValidationId(0x654321, 0)
    host(LongPoll(ADDRESS, 0x7D, TicketData(1, 0, "SAS CASINO", "", "").encode()))
    _until(terminal, lambda: terminal.money_in.accepting and validator.insert_note(20), "the validator")
    _until(terminal, lambda: terminal.ledger.credits_cents == 2000, "the note credited")

    terminal.request_cashout()
    _until(terminal, lambda: terminal.tickets_printed == 1, "the ticket printed")
    ticket = terminal.last_ticket
    assert ticket == secure_enhanced_number(0x654321, 1) and terminal.ledger.credits_cents == 0
    assert "SAS CASINO" in str(printer.printed[-1])
    assert X.CASHOUT_TICKET_PRINTED in _exceptions(machine)
    record = host(LongPoll(ADDRESS, 0x4D, b"\x00"))
    assert (record.validation_number, record.amount) == (int(ticket[2:]), 2000)

    def redeem() -> int:
        _until(terminal, lambda: terminal.money_in.accepting and validator.insert_ticket(ticket), "validator")
        _until(terminal, lambda: terminal.money_in.ticket_host.escrow == ticket, "the ticket in escrow")
        assert _exceptions(machine) == [X.TICKET_INSERTED]
        final = redeem_ticket(host, ADDRESS, 2000, validation=ticket,
                              between=lambda: [terminal.step(0.01) for _ in range(50)] and None, tries=20)
        _until(terminal, lambda: terminal.money_in.ticket_host.escrow is None, "the escrow settled")
        assert _exceptions(machine) == [X.TICKET_TRANSFER_COMPLETE]
        return final.status

    assert redeem() == St.CASHABLE_REDEEMED
    assert terminal.ledger.credits_cents == 2000 and terminal.ledger.meters["ticket_in"] == 2000
    assert redeem() == St.REJECTED_BY_HOST                           # the same ticket again
    _until(terminal, lambda: "voucher returned" in terminal.message, "the ticket returned")
    assert terminal.ledger.credits_cents == 2000 and terminal.ledger.meters["ticket_in"] == 2000
