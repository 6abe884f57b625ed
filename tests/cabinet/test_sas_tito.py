"""SAS TITO on the terminal in-process, with the simulated validator and printer: a ticket printed
with a secure-enhanced number and the host's ticket text, read back with 0x4D, inserted, redeemed
through the SAS host once, and refused the second time; with system validation, the host's number
printed, or a handpay when it does not come."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from drivers.sas.codec import GeneralPoll, LongPoll
from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.host_tito import redeem_ticket
from drivers.sas.messages import (
    PendingCashout,
    RedeemTicket,
    Status,
    TicketData,
    ValidationId,
    ValidationNumber,
)
from drivers.sas.validation import RedemptionStatus as St
from drivers.sas.validation import secure_enhanced_number, validation_to_bcd
from firmware.cabinet.sas_tito import sas_tito
from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService
from firmware.sas.responder import SasMachine
from firmware.sas.view import LedgerView
from tests.sas.helpers import ADDRESS, IDENTITY, ask


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _build(tmp_path, validation: str, clock: Clock):
    from hal.registry import parse_spec
    from sim_hardware.rig import SimRig

    rig = SimRig({"bill_validator": parse_spec("bill_validator", "sim:id003"),
                  "printer": parse_spec("printer", "sim:tcl")})
    ledger = Ledger.open(tmp_path)
    built = []

    def sas(terminal: Terminal) -> SimpleNamespace:         # the SAS port's part the terminal sees
        tito = sas_tito(terminal, validation=validation, asset_number=42)
        built.append(tito.polls)
        return SimpleNamespace(ticket_host=tito.ticket_host, numbering=tito.numbering, status=dict,
                               close=lambda: None, play_held=lambda: None)

    terminal = Terminal(Config.model_validate({}), ledger, RngService.seeded(1),
                        Devices(bill_validator=rig.device("bill_validator"), printer=rig.device("printer")),
                        VoucherBook(ledger, terminal_id="T1"), clock=clock, sas=sas)
    terminal.power_up()
    return terminal, SasMachine(ADDRESS, LedgerView(ledger, IDENTITY), polls=built), rig


@pytest.fixture(params=["secure-enhanced", "system"])
def cabinet(tmp_path, request):
    clock = Clock()
    terminal, machine, rig = _build(tmp_path, request.param, clock)
    try:
        yield terminal, machine, rig, clock
    finally:
        terminal.ledger.close()
        rig.close()


def _until(terminal: Terminal, done, what: str, steps: int = 1000) -> None:
    for _ in range(steps):
        terminal.step(0.01)
        if done():
            return
    raise AssertionError(f"no {what}: {terminal.status()}")


def _wait(terminal: Terminal, machine: SasMachine) -> None:
    """Between two status queries: time for the validator, and a poll to another machine (the same
    query twice in a row would be a retry, answered with the previous reply)."""
    for _ in range(20):
        terminal.step(0.01)
    machine.receive(bytes([0x82]))


def _exceptions(machine: SasMachine) -> list[int]:
    out = []
    machine.receive(bytes([0x82]))
    while (code := ask(machine, GeneralPoll(ADDRESS))) != 0:
        out.append(code)
        machine.receive(bytes([0x82]))
    return out


def _note(terminal: Terminal, validator) -> None:
    _until(terminal, lambda: terminal.money_in.accepting and validator.insert_note(20), "the validator")
    _until(terminal, lambda: terminal.ledger.credits_cents == 2000, "the note credited")


def test_a_ticket_printed_by_the_terminal_is_redeemed_through_the_sas_host_once(cabinet):
    terminal, machine, rig, _ = cabinet
    validator, printer = rig.simulator("bill_validator"), rig.simulator("printer")
    host = lambda poll: ask(machine, poll)                                            # noqa: E731
    system = terminal.cashout.numbering.deferred
    if not system:
        assert host(LongPoll(ADDRESS, 0x4C, ValidationId(0x654321, 0).encode())) == ValidationId(0x654321, 0)
    host(LongPoll(ADDRESS, 0x7D, TicketData(1, 0, "SAS CASINO", "", "").encode()))
    _note(terminal, validator)

    terminal.request_cashout()
    if system:                                       # the host gives the number
        _until(terminal, lambda: X.SYSTEM_VALIDATION_REQUEST in _exceptions(machine), "0x57")
        assert host(LongPoll(ADDRESS, 0x57)) == PendingCashout(0x00, 2000)
        assert host(LongPoll(ADDRESS, 0x58, ValidationNumber(12, 1234567890123456).encode())) == Status(0)
    _until(terminal, lambda: terminal.tickets_printed == 1, "the ticket printed")
    ticket = terminal.last_ticket
    expected = "121234567890123456" if system else secure_enhanced_number(0x654321, 1)
    assert ticket == expected and terminal.ledger.credits_cents == 0
    assert "SAS CASINO" in str(printer.printed[-1])
    assert X.CASHOUT_TICKET_PRINTED in _exceptions(machine)
    if not system:
        record = host(LongPoll(ADDRESS, 0x4D, b"\x00"))
        assert (record.validation_number, record.amount) == (int(ticket[2:]), 2000)

    def redeem() -> int:
        _until(terminal, lambda: terminal.money_in.accepting and validator.insert_ticket(ticket), "validator")
        _until(terminal, lambda: terminal.money_in.ticket_host.escrow == ticket, "the ticket in escrow")
        assert _exceptions(machine) == [X.TICKET_INSERTED]
        final = redeem_ticket(host, ADDRESS, 2000, validation=ticket,
                              between=lambda: _wait(terminal, machine), tries=20)
        _until(terminal, lambda: terminal.money_in.ticket_host.escrow is None, "the escrow settled")
        assert _exceptions(machine) == [X.TICKET_TRANSFER_COMPLETE]
        return final.status

    assert redeem() == St.CASHABLE_REDEEMED
    assert terminal.ledger.credits_cents == 2000 and terminal.ledger.meters["ticket_in"] == 2000
    assert redeem() == St.REJECTED_BY_HOST                           # the same ticket again
    _until(terminal, lambda: "voucher returned" in terminal.message, "the ticket returned")
    assert terminal.ledger.credits_cents == 2000 and terminal.ledger.meters["ticket_in"] == 2000


def test_a_number_the_host_does_not_give_in_ten_seconds_is_a_handpay(tmp_path):
    clock = Clock()
    terminal, machine, rig = _build(tmp_path, "system", clock)
    try:
        _note(terminal, rig.simulator("bill_validator"))
        terminal.request_cashout()
        _until(terminal, lambda: X.SYSTEM_VALIDATION_REQUEST in _exceptions(machine), "0x57")
        clock.now += 9.5
        terminal.step()
        assert terminal.status()["state"] == "CASHOUT" and terminal.status()["handpay"] is None
        clock.now += 0.5
        terminal.step()
        status = terminal.status()
        assert status["state"] == "HANDPAY" and "within ten seconds" in status["message"]
        assert ask(machine, LongPoll(ADDRESS, 0x57)) == PendingCashout(0x80, 0)
        assert terminal.ledger.credits_cents == 2000 and terminal.tickets_printed == 0
    finally:
        terminal.ledger.close()
        rig.close()


def test_a_ticket_waiting_for_the_host_when_the_power_goes_is_not_credited_by_a_late_verdict(tmp_path):
    other = "123456789012345678"
    terminal, machine, rig = _build(tmp_path, "secure-enhanced", Clock())
    try:
        validator = rig.simulator("bill_validator")
        _until(terminal, lambda: terminal.money_in.accepting and validator.insert_ticket(other), "validator")
        _until(terminal, lambda: terminal.money_in.ticket_host.escrow == other, "the ticket in escrow")
    finally:
        terminal.ledger.close()                   # the power goes with the ticket waiting
        rig.close()
    terminal, machine, rig = _build(tmp_path, "secure-enhanced", Clock())
    try:
        host = lambda poll: ask(machine, poll)                                        # noqa: E731
        assert host(LongPoll(ADDRESS, 0x70)).status == 0xFF                          # no ticket now
        late = RedeemTicket(0x00, 500, 0, validation_to_bcd(other)).encode()
        assert host(LongPoll(ADDRESS, 0x71, late)).status == St.NOT_COMPATIBLE
        assert host(LongPoll(ADDRESS, 0x71, b"\xff")).status == St.UNABLE_TO_ACCEPT
        assert _exceptions(machine)[:2] == [X.TICKET_INSERTED, X.TICKET_TRANSFER_COMPLETE]   # priority ones first
        assert terminal.ledger.credits_cents == 0
        validator = rig.simulator("bill_validator")                   # the player tries it again
        _until(terminal, lambda: terminal.money_in.accepting and validator.insert_ticket(other), "validator")
        _until(terminal, lambda: terminal.money_in.ticket_host.escrow == other, "the ticket in escrow")
        final = redeem_ticket(host, ADDRESS, 500, validation=other,
                              between=lambda: _wait(terminal, machine), tries=20)
        assert final.status == St.CASHABLE_REDEEMED and terminal.ledger.credits_cents == 500
    finally:
        terminal.ledger.close()
        rig.close()
