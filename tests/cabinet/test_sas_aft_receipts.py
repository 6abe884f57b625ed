"""AFT transaction receipts on a real terminal with the simulated TCL printer: the receipt comes out
of the printer with the transfer and the host's 0x75 texts, its status follows the printer's answer,
a jam mid-receipt is reported not printed, a printer out of paper refuses a transfer asking for a
receipt (0x90) without moving money, and a cash-out voucher still prints after a receipt."""

from __future__ import annotations

import pytest

from drivers.sas.aft import ReceiptStatus, TransferFlag
from drivers.sas.aft_receipt import AftReceiptData
from drivers.sas.messages import AftInterrogate, AftTransfer, AftTransferReply, parse_reply
from firmware.cabinet.states import CabinetState as S
from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.rng.service import RngService
from firmware.sas.aft import AftPolls, AftSettings
from sim_hardware.tcl_printer import MidTicket
from tests.cabinet.test_sas_aft import sas_part
from tests.cabinet.test_sas_tito import Clock
from tests.cabinet.test_sas_tito import _until as until

ASSET = 1234


@pytest.fixture
def cabinet(tmp_path):
    from hal.registry import parse_spec
    from sim_hardware.rig import SimRig

    rig = SimRig({"printer": parse_spec("printer", "sim:tcl")})
    ledger = Ledger.open(tmp_path)
    terminal = Terminal(Config.model_validate({"terminal": {"venue": "RIVER CASINO"}}), ledger,
                        RngService.seeded(1), Devices(printer=rig.device("printer")),
                        VoucherBook(ledger, terminal_id="T1"), clock=Clock(), sas=sas_part(made := []))
    terminal.power_up()
    polls = AftPolls(ledger, made[0], AftSettings(ASSET, 100_000), monotonic=terminal.clock)
    try:
        yield terminal, polls, rig.simulator("printer")
    finally:
        ledger.close()
        rig.close()


def transfer(polls: AftPolls, tid: str, cents: int, *, out: bool = False) -> AftTransferReply:
    body = AftTransfer(0, 0, 0x80 if out else 0x00, cents, 0, 0, TransferFlag.RECEIPT_REQUEST, ASSET, bytes(20),
                       tid, 0, 0, b"\x10\x09PAT JONES", 0).encode()
    reply = parse_reply(0x72, polls.transfer_poll(body))
    assert isinstance(reply, AftTransferReply)
    return reply


def receipt_status(polls: AftPolls) -> int:
    reply = parse_reply(0x72, polls.transfer_poll(AftInterrogate(0xFF, 0).encode()))
    assert isinstance(reply, AftTransferReply)
    return reply.receipt_status


def test_the_receipt_comes_out_of_the_printer_once_with_the_transfer_and_the_host_texts(cabinet):
    terminal, polls, printer = cabinet
    polls.receipts.set_data(AftReceiptData(((0x10, "GOOD LUCK"),)).encode())
    reply = transfer(polls, "IN-1", 2500)
    assert (reply.transfer_status, reply.receipt_status) == (0x00, ReceiptStatus.PRINTING)
    until(terminal, lambda: receipt_status(polls) == ReceiptStatus.PRINTED, "receipt printed")
    [paper] = printer.printed
    lines = paper.receipt()
    assert lines[0] == "RIVER CASINO" and "TRANSFER TO GAME" in lines and "CASH IN $25.00" in lines
    assert {"ID IN-1", f"ASSET # {ASSET}", "PAT JONES", "GOOD LUCK"} <= set(lines)
    assert terminal.ledger.credits_cents == 2500 and accounting_difference(terminal.ledger.meters) == 0
    for _ in range(50):                               # nothing more comes out, polls or not
        terminal.step(0.01)
        receipt_status(polls)
    assert len(printer.printed) == 1


def test_a_receipt_jammed_mid_print_is_reported_not_printed_with_the_reason(cabinet):
    terminal, polls, printer = cabinet
    printer.fail_mid_ticket(MidTicket.JAM)
    transfer(polls, "IN-1", 2500)
    until(terminal, lambda: receipt_status(polls) == ReceiptStatus.NONE, "receipt not printed")
    body = polls.history.newest()
    assert body is not None and "jam" in (polls.receipts.reason(body) or "")
    assert printer.printed == [] and terminal.ledger.credits_cents == 2500


def test_out_of_paper_a_transfer_asking_for_a_receipt_is_refused_and_moves_nothing(cabinet):
    terminal, polls, printer = cabinet
    printer.paper_out()
    until(terminal, lambda: terminal.cashout.printer_problem() is not None, "paper out seen")
    reply = transfer(polls, "IN-1", 2500)
    assert (reply.transfer_status, reply.receipt_status) == (0x90, ReceiptStatus.NONE)
    assert terminal.ledger.credits_cents == 0 and polls.status().aft_status & 0x01 == 0


def test_a_cashout_voucher_prints_after_a_transfer_receipt(cabinet):
    terminal, polls, printer = cabinet
    transfer(polls, "IN-1", 2500)
    until(terminal, lambda: receipt_status(polls) == ReceiptStatus.PRINTED, "receipt printed")
    terminal.request_cashout()
    until(terminal, lambda: terminal.ledger.credits_cents == 0, "voucher printed")
    assert printer.printed[-1].voucher().amount_cents == 2500


def test_a_cashout_asked_while_a_receipt_prints_waits_for_it_and_is_no_handpay(cabinet):
    terminal, polls, printer = cabinet
    assert transfer(polls, "IN-1", 2500).receipt_status == ReceiptStatus.PRINTING
    terminal.request_cashout()                        # the receipt is still in the printer
    until(terminal, lambda: terminal.ledger.credits_cents == 0, "voucher printed")
    assert terminal.cabinet.state is not S.HANDPAY
    assert [p.template for p in printer.printed] == ["1", "0"]
    assert printer.printed[0].receipt()[4] == "TRANSFER TO GAME"
    assert printer.printed[1].voucher().amount_cents == 2500
    assert receipt_status(polls) == ReceiptStatus.PRINTED
