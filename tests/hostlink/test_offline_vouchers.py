"""A voucher pays at most once whatever the link does (campaign item 2).

The campaign's case: T1 cashes out, T1's link is cut, the voucher is inserted at T2 (paid through
the host) and at T1 (paid offline as its own). Here the link (of the issuer, or of the redeemer) is
cut before every single message of the whole story in turn, with offline redemption on and off; the
link comes back, both terminals try again, and the voucher must have been paid exactly once.
"""

from __future__ import annotations

import pytest

from egmproto.mqtt import terminal_of
from firmware.cashless.errors import VoucherError
from firmware.cashless.vouchers import VoucherBook

from .conftest import Floor
from .test_link import _pumping, _ticking


def _redeem(floor: Floor, terminal: str, validation: str, offline: bool) -> bool:
    """The voucher inserted at ``terminal``: asked of the host if its link is up, else offline."""
    link = floor.links[terminal]
    book = VoucherBook(floor.ledgers[terminal], terminal_id=terminal, offline_redemption=offline)
    try:
        book.begin_redeem(validation, host=link if link.connected else None)
    except VoucherError:
        return False
    book.commit_redeem(validation)
    return True


def _story(floor: Floor, offline: bool, victim: str, cut_before: int) -> tuple[list[str], int]:
    """Cash out at T1, redeem at T2 and at T1, the ``victim``'s link cut before message
    ``cut_before`` and back at the end; the terminals that paid, and the messages seen."""
    for t in ("T1", "T2"):
        floor.terminal(t, redeem_timeout_s=1.0)
        floor.links[t].poll = _pumping(floor.links[t].poll, floor)
        floor.links[t]._clock = _ticking()
    count = [0]
    cut = [False]

    def drop(topic: str, payload: bytes) -> bool:
        count[0] += 1
        if count[0] == cut_before:
            cut[0] = True
            floor.link_down(victim)
        return cut[0] and terminal_of(topic) == victim

    floor.settle()                                      # the sessions open; then the story counts
    floor.bus.drop = drop
    validation = floor.cash_out("T1", 2000, offline=offline)
    floor.settle()
    paid = [t for t in ("T2", "T1") if _redeem(floor, t, validation, offline)]
    floor.settle()
    floor.bus.drop = lambda topic, payload: False
    floor.link_down(victim, False)
    floor.settle()
    for t in ("T2", "T1"):                              # everyone tries again, link back
        if _redeem(floor, t, validation, offline):
            paid.append(t)
        floor.settle()
    return paid, count[0]


@pytest.mark.slow
@pytest.mark.parametrize("offline", [True, False], ids=["offline_on", "offline_off"])
@pytest.mark.parametrize("victim", ["T1", "T2"])
def test_a_voucher_pays_once_with_the_link_cut_before_any_message(tmp_path, offline: bool, victim: str) -> None:
    _paid, total = _story(Floor(tmp_path / "count"), offline, victim, cut_before=10**9)
    for k in range(1, total + 2):
        floor = Floor(tmp_path / f"cut{k}")
        try:
            paid, _ = _story(floor, offline, victim, cut_before=k)
            assert len(paid) == 1, f"cut before message {k}: paid at {paid}"
            tickets_in = [t for t in ("T1", "T2") if floor.ledgers[t].meters_report()["meters"]["ticket_in"]]
            assert tickets_in == paid
            if offline:
                assert paid == ["T1"]                   # the host approves it nowhere else
            floor.settle()
            [voucher] = [v for v in floor.store.vouchers() if v["issued_by"] == "T1"]
            assert (voucher["state"], voucher["redeemed_by"]) == ("redeemed", paid[0])
        finally:
            floor.close()


def test_offline_redemption_is_off_by_default() -> None:
    from firmware.config.schema import MoneySection

    assert MoneySection().offline_redemption is False
    import tomllib
    from pathlib import Path

    import firmware.config

    default = tomllib.loads((Path(firmware.config.__file__).parent / "default.toml").read_text())
    assert default["money"]["offline_redemption"] is False
