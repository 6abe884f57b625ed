"""The SAS meter polls read critical memory: after real ledger operations, each poll's meters are
the ledger's, in credits of the accounting denomination, rolled over at their BCD widths."""

from __future__ import annotations

from pathlib import Path

from drivers.sas.codec import LongPoll
from drivers.sas.messages import (
    METER_CODE_WIDTHS,
    METER_LAYOUTS,
    ExtendedMetersRequest,
    SelectedMetersRequest,
)
from firmware.cards.card import parse_cards
from firmware.cards.source import StackedSource
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel
from firmware.sas.meters import BY_CODE, BY_FIELD, SAS_METERS, markdown_table
from tests.sas.helpers import ADDRESS, ask, machine_on

FIG8 = parse_cards("Qs 2d 3h Ah Td Ts 6c 9s")
DOC = Path(__file__).resolve().parents[2] / "docs" / "protocols" / "sas.md"


def play_a_round(ledger) -> None:
    game = get_game("baccarat-war")
    kernel = RoundKernel(game, make_options("baccarat-war"), journal=ledger)
    kernel.play({7: {"bac": 10, "war": 10, "tie": 5}}, StackedSource(FIG8), credits=ledger.credits)


def meters(machine, command):
    return dict(ask(machine, LongPoll(ADDRESS, command)).values)


def test_meter_polls_equal_the_ledger_after_bills_a_round_and_a_ticket(ledger):
    ledger.bill_in(2000)
    ledger.bill_in(2000)
    ledger.bill_in(500)
    play_a_round(ledger)                      # 25 credits staked, 75 back (FIG. 8)
    ledger.ticket_out(1000, "000000000000000002")
    ledger.event("door_open", door="main")
    m = ledger.meters
    machine = machine_on(ledger)              # accounting denomination 5 cents
    assert meters(machine, 0x11) == {"total_coin_in": 25} and m["coin_in"] == 125
    assert meters(machine, 0x12) == {"total_coin_out": 75}
    assert meters(machine, 0x10) == {"total_cancelled_credits": 200}       # the $10 ticket
    assert meters(machine, 0x15) == {"games_played": 1}
    assert meters(machine, 0x16) == {"games_won": 1}
    assert meters(machine, 0x17) == {"games_lost": 0}
    assert meters(machine, 0x18) == {"games_since_power_up": 1, "games_since_door_closed": 1}
    assert meters(machine, 0x1A) == {"current_credits": ledger.credits} and ledger.credits == 750
    assert meters(machine, 0x1C) == {"total_coin_in": 25, "total_coin_out": 75, "total_drop": 900,
                                     "total_jackpot": 0, "games_played": 1, "games_won": 1,
                                     "slot_door_opened": 1, "power_reset": 0}
    assert meters(machine, 0x1E) == {"bills_1": 0, "bills_5": 1, "bills_10": 0, "bills_20": 2,
                                     "bills_50": 0, "bills_100": 0}
    assert meters(machine, 0x20) == {"total_bills_dollars": 45}
    assert meters(machine, 0x0F)["total_coin_in"] == 25
    assert meters(machine, 0x19)["total_coin_out"] == 75
    assert meters(machine, 0x1D) == {"cumulative_progressive_wins": 0}      # not kept: reads 0


def test_selected_and_extended_meters_by_code(ledger):
    ledger.bill_in(2000)
    ledger.transfer_in(1000, "aft-1")
    machine = machine_on(ledger)
    reply = ask(machine, LongPoll(ADDRESS, 0x2F, SelectedMetersRequest(0, (0x0B, 0x0C, 0xA0, 0x08)).encode()))
    assert dict(reply.meters) == {0x0B: 400, 0x0C: 600, 0xA0: 1000, 0x08: 0}   # credits, credits, cents
    reply = ask(machine, LongPoll(ADDRESS, 0x6F, ExtendedMetersRequest(0, (0x0C, 0xA0)).encode()))
    assert reply.meters == ((0x0C, 4, 600), (0xA0, 5, 1000))


def test_meters_roll_over_at_their_bcd_width(ledger):
    ledger.bill_in(5 * (10**8 + 7), denom_cents=10000)       # 100,000,007 credits
    machine = machine_on(ledger)
    assert meters(machine, 0x1A) == {"current_credits": 7}
    reply = ask(machine, LongPoll(ADDRESS, 0x2F, SelectedMetersRequest(0, (0x0C,)).encode()))
    assert reply.meters == ((0x0C, 7),)                      # 4 bytes: 8 digits


def test_the_table_covers_every_meter_the_polls_read_and_the_page_shows_it():
    assert set(BY_FIELD) == {name for layout in METER_LAYOUTS.values() for name, _ in layout}
    assert set(BY_CODE) == set(METER_CODE_WIDTHS)
    assert len({(m.code, m.field) for m in SAS_METERS}) == len(SAS_METERS)
    assert markdown_table() in DOC.read_text()
