"""A terminal that loses power in the middle of a redemption through the host gives the voucher
back at power-up, whatever step it had reached: the request is in critical memory before it is
sent, so the terminal knows it asked (docs/cashless.md, "Power loss")."""

from __future__ import annotations

import pytest

from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import POWER_LOST_ASKING, VoucherBook
from firmware.config import Config
from firmware.rng.service import RngService

from .conftest import Floor


def _voucher(floor: Floor, validation: str) -> dict:
    return next(v for v in floor.store.vouchers() if v["validation"] == validation)


def _power_loss_and_restart(floor: Floor, terminal_id: str) -> Terminal:
    """Power off (nothing more recorded, nothing more sent), then the terminal's power-up with its
    host link, as ``egm run`` starts it."""
    link, ledger = floor.links.pop(terminal_id), floor.ledgers.pop(terminal_id)
    link.client.stop()
    link.outbox.close()
    ledger.close()
    floor.terminal(terminal_id)
    ledger = floor.ledgers[terminal_id]
    terminal = Terminal(Config.model_validate({}), ledger, RngService.seeded(1), Devices(),
                        VoucherBook(ledger, terminal_id=terminal_id))
    terminal.power_up()
    return terminal


@pytest.mark.parametrize("phase", ["answered", "not_sent"])
def test_a_redemption_asked_of_the_host_and_cut_by_a_power_loss_is_released(floor: Floor, phase: str) -> None:
    floor.terminal("T1")
    floor.terminal("T2")
    t3 = floor.terminal("T3")
    voucher = floor.cash_out("T1", 1000)
    floor.settle()
    if phase == "not_sent":
        floor.link_down("T2")
    floor.ledgers["T2"].voucher_record(voucher, "host_request")    # as HostLink.validate records it
    floor.settle()
    if phase == "answered":                                        # approved, and then the power went
        assert floor.links["T2"].redemptions[voucher]["approved"] is True
        assert _voucher(floor, voucher)["held_by"] == "T2"
    terminal = _power_loss_and_restart(floor, "T2")
    floor.settle()
    records = [r["body"] for r in floor.ledgers["T2"].records_for(voucher) if r["kind"] == "voucher"]
    # not sent: the request reaches the host with the abandonment, is approved after it, and that
    # late approval is released again (HostLink's late-approval rule)
    late = 1 if phase == "not_sent" else 0
    assert [(r["state"], r.get("reason")) for r in records] == \
        [("host_request", None), ("redeem_abandoned", POWER_LOST_ASKING)] + \
        [("redeem_abandoned", None)] * late
    assert terminal.vouchers.unsettled_requests() == []
    row = _voucher(floor, voucher)
    assert (row["state"], row["held_by"]) == ("issued", None)
    floor.ledgers["T3"].voucher_record(voucher, "host_request")    # another terminal may pay it now
    floor.settle()
    assert t3.redemptions[voucher]["approved"] is True
    # settled once: the next power-up has nothing to abandon
    _power_loss_and_restart(floor, "T2")
    assert [r["body"] for r in floor.ledgers["T2"].records_for(voucher) if r["kind"] == "voucher"] == records
