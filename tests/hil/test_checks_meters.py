"""firmware/hil/checks_meters.py: its accounting identity is the product's (a station's open table
bet included), and the
"no meter went back" comparison allows exactly the documented exceptions."""

from __future__ import annotations

from firmware.hil.checks_meters import (
    decreases,
    flat,
    identity_difference,
    pairwise_decreases,
    rolled_over,
)
from firmware.ledger.ledger import accounting_difference
from firmware.ledger.meters import ROLLOVER, TABLE_HELD

METERS = {"bills_in": 5000, "ticket_in": 700, "transfers_in": 300, "ticket_out": 1200,
          "handpay_cancelled_credits": 400, "transfers_out": 100, "coin_in": 900, "coin_out": 650}


def _answer(credits: int, **changes: int) -> dict:
    return {"meters": {**METERS, **changes, "bills_in_by_denom": {"2000": 2}}, "credits": credits}


def test_the_identity_agrees_with_the_products():
    credits = accounting_difference({**METERS, "credits": 0}) * -1
    assert identity_difference(_answer(credits)) == 0
    for name in METERS:          # every term counts, with the product's sign
        changed = _answer(credits, **{name: METERS[name] + 7})
        assert identity_difference(changed) == accounting_difference(flat(changed)) != 0, name


def test_a_station_with_an_open_table_bet_passes_the_identity():
    """A player station holds its open bet's stake (``table_held``) off the credit meter and not yet
    played: the lab's check counts it as the ledger does."""
    credits = accounting_difference({**METERS, "credits": 0}) * -1
    open_bet = _answer(credits - 2500, **{TABLE_HELD: 2500})
    assert identity_difference(open_bet) == 0
    assert identity_difference(_answer(credits - 2500)) == -2500          # without it: 25.00 unexplained


def test_a_meter_that_goes_back_is_found_and_the_documented_exceptions_are_not():
    assert flat(_answer(10))["bills_in_by_denom.2000"] == 2
    assert decreases({"coin_in": 50}, {"coin_in": 49}) == ["coin_in: 50 -> 49"]
    assert decreases({"credits": 50, "games_since_power_up": 4}, {"credits": 0, "games_since_power_up": 0}) == []
    assert rolled_over(ROLLOVER - 100, 200) and not rolled_over(500, 499)
    assert decreases({"transfers_in": ROLLOVER - 100}, {"transfers_in": 200}) == []
    assert pairwise_decreases([("a", {"door_open": 2}), ("b", {"door_open": 3}), ("c", {"door_open": 1})]) == [
        "b -> c: door_open: 3 -> 1"]
