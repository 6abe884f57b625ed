"""Hand-written war scenarios: several wars at once, the dealer in the pool, card reuse, modes,
WAR optional and the misdeal cap."""

from __future__ import annotations

import pytest

from tests.games.helpers import POOL_ON, egm_round, outcome, seat, wagers

BW = ("bac=10", "war=10")


def _bets(seats, extra=()):
    return wagers(*(f"{s}:{w}" for s in seats for w in (*BW, *extra)))


def test_several_seats_at_war_with_the_dealer_share_its_war_cards(capsys):
    # Seats 1 and 2 tie the dealer at 5, seat 3 (2) loses outright. Step 1: seat 1 draws 4 (9) and
    # beats the dealer's 8; seat 2 ties at 8. Step 2: seat 2 draws 7 (5) under the dealer's 6.
    rec = egm_round(capsys, "baccarat-war", *_bets((1, 2, 3)),
                    "--cards", "2c 4d Kc 5s 3c Ah 2h Td 4h 3d 3s 7h 8h")
    assert [seat(rec, s)["score"] for s in (1, 2, 3)] == [5, 5, 2] and rec["dealer"]["score"] == 5
    assert rec["dealer"]["war_cards"] == ["3s", "8h"]
    assert seat(rec, 1)["war_cards"] == ["4h"]
    assert seat(rec, 2)["war_cards"] == ["3d", "7h"]
    assert seat(rec, 3)["war_cards"] == []
    assert outcome(rec, 1, "bac") == ("win", 10) and outcome(rec, 1, "war") == ("push", 0)
    assert outcome(rec, 2, "bac") == ("lose", -10) and outcome(rec, 2, "war") == ("lose", -10)
    assert outcome(rec, 3, "bac") == ("lose", -10) and outcome(rec, 3, "war") == ("push", 0)
    assert rec["wars"] == {"seats": [1, 2], "steps": 2, "misdeal": False, "reason": None}


def test_dealer_in_the_highest_tied_tier_contests_the_pool_with_the_reused_war_cards(capsys):
    # Seat 1 and the dealer tie at 7; seat 2 (6) is out of the pool. The war against the dealer
    # takes two steps (2/2 tie at 9, then K against 5: 9 to 4) and the pool contest between seat 1
    # and the dealer reuses exactly those cards: no card is dealt for it.
    rec = egm_round(capsys, "baccarat-war", *POOL_ON, *_bets((1, 2), ("war_pool=5",)),
                    "--cards", "3s 2c 4d 4h 4c 3h 2s 2h Kd 5c")
    assert rec["war_pool"]["contestants"] == [1, "dealer"]
    assert rec["war_pool"]["winner"] == 1 and rec["war_pool"]["steps"] == 2
    assert rec["cards_dealt"] == ["3s", "2c", "4d", "4h", "4c", "3h", "2s", "2h", "Kd", "5c"]
    assert seat(rec, 1)["war_cards"] == ["2s", "Kd"] and rec["dealer"]["war_cards"] == ["2h", "5c"]
    assert outcome(rec, 1, "bac") == ("win", 10)
    assert outcome(rec, 1, "war_pool") == ("win", 9 - 5)       # pot 10, 9 paid
    assert outcome(rec, 2, "war_pool") == ("lose", -5)


def test_a_seat_won_at_war_contests_the_pool_and_draws_past_its_war_cards(capsys):
    # Seats 1, 2 and the dealer all score 7. War step 1: seats draw 2 and 2 (9), the dealer A (8):
    # both seats win their war. The pool contest reuses those cards (9, 9, 8: dealer out), then
    # deals seat 1 a 5 (4) and seat 2 a 3 (2): seat 1 takes the pot.
    rec = egm_round(capsys, "baccarat-war", *POOL_ON, *_bets((1, 2), ("war_pool=5",)),
                    "--cards", "3s 4d 2c 4h 3d 5d 2s 2d Ah 5c 3c")
    assert rec["war_pool"]["contestants"] == [1, 2, "dealer"]
    assert rec["war_pool"]["eliminated"] == [{"step": 1, "hand": "dealer"}, {"step": 2, "hand": 2}]
    assert seat(rec, 1)["war_cards"] == ["2s", "5c"]
    assert seat(rec, 2)["war_cards"] == ["2d", "3c"]
    assert rec["dealer"]["war_cards"] == ["Ah"]
    assert outcome(rec, 1, "bac") == ("win", 10) and outcome(rec, 2, "bac") == ("win", 10)
    assert outcome(rec, 1, "war_pool") == ("win", 4) and outcome(rec, 2, "war_pool") == ("lose", -5)


def test_three_way_pool_contest_with_eliminations_on_separate_steps(capsys):
    # Seats 1, 2, 3 tie at 6 (dealer 2). Step 1: 3, 3, 2 -> 9, 9, 8 (seat 3 out);
    # step 2: K, 9 -> 9, 8 (seat 2 out); seat 1 wins.
    rec = egm_round(capsys, "baccarat-war", *POOL_ON, *_bets((1, 2, 3), ("war_pool=10",)),
                    "--cards", "6s 6h 3d 2c Kc Kd 3h Ts 3s 3c 2d Kh 9h")
    assert rec["war_pool"]["contestants"] == [1, 2, 3]
    assert rec["war_pool"]["eliminated"] == [{"step": 1, "hand": 3}, {"step": 2, "hand": 2}]
    assert rec["war_pool"]["winner"] == 1
    assert rec["war_pool"]["pot"] == 30 and rec["war_pool"]["paid"] == 28
    assert outcome(rec, 1, "war_pool") == ("win", 18)
    assert rec["net"] + rec["house_net"] == 0


@pytest.mark.parametrize(
    ("mode", "bac", "war"),
    [
        # seat (5) and dealer (5) tie; seat draws 4, dealer K:
        ("baccarat", ("win", 10), ("push", 0)),     # 9 against 5
        ("high_card", ("lose", -10), ("lose", -10)),  # 4 under K
        ("aggregate", ("lose", -10), ("lose", -10)),  # 4 under 10
    ],
)
def test_each_war_scoring_mode_decides_the_same_cards_its_own_way(capsys, mode, bac, war):
    rec = egm_round(capsys, "baccarat-war", *_bets((1,)), "--option", f"war_scoring={mode}",
                    "--cards", "2c 5s 3c Td 4h Kc")
    assert outcome(rec, 1, "bac") == bac and outcome(rec, 1, "war") == war


def test_aggregate_keeps_the_tens_where_high_card_does_not(capsys):
    # War step 1: T against K: high card K wins for the dealer; aggregate 10 = 10 goes on;
    # step 2: 2 against A: aggregate 12 to 11, the seat wins.
    cards = "2c 5s 3c Td Th Kc 2h Ad"
    hc = egm_round(capsys, "baccarat-war", *_bets((1,)), "--option", "war_scoring=high_card", "--cards", cards)
    ag = egm_round(capsys, "baccarat-war", *_bets((1,)), "--option", "war_scoring=aggregate", "--cards", cards)
    assert outcome(hc, 1, "bac") == ("lose", -10) and hc["wars"]["steps"] == 1
    assert outcome(ag, 1, "bac") == ("win", 10) and ag["wars"]["steps"] == 2


def test_war_optional_lets_a_seat_play_without_war_or_with_a_smaller_war(capsys):
    rec = egm_round(capsys, "baccarat-war", "--option", "war_wager=optional",
                    *wagers("1:bac=10", "2:bac=10", "2:war=4"),
                    "--cards", "2c 2d 5s 3c 3d Td 4h 4d Kc")
    # Both seats tie the dealer at 5; each draws a 4 (9) against the dealer's K (5) and wins.
    assert "war" not in seat(rec, 1)["results"]
    assert outcome(rec, 1, "bac") == ("win", 10)
    assert outcome(rec, 2, "bac") == ("win", 10) and outcome(rec, 2, "war") == ("push", 0)


def test_misdeal_cap_returns_every_wager_still_at_war(capsys):
    # Seat and dealer tie at 5, then draw tens twice: still tied when max_war_steps = 2 is reached.
    rec = egm_round(capsys, "baccarat-war", *wagers("1:bac=10", "1:war=10", "1:tie=2"),
                    "--option", "max_war_steps=2", "--cards", "2c 5s 3c Td Th Kc Js Qd")
    assert outcome(rec, 1, "bac") == ("void", 0) and outcome(rec, 1, "war") == ("void", 0)
    assert outcome(rec, 1, "tie") == ("win", 16)           # settled on the initial cards
    assert rec["wars"]["misdeal"] is True and "max_war_steps" in rec["wars"]["reason"]
    assert rec["wars"]["steps"] == 2


def test_pool_misdeal_returns_the_antes(capsys):
    rec = egm_round(capsys, "baccarat-war", *POOL_ON, *_bets((1, 2), ("war_pool=5",)),
                    "--option", "max_war_steps=1", "--option", "pool.dealer_ante=3",
                    "--cards", "2c 3c 9s 3d 2d Kh Th Td")
    # Seats 1 and 2 tie at 5 (dealer 9): one pool step of T/T does not separate them.
    assert rec["war_pool"]["misdeal"] is True and rec["war_pool"]["winner"] is None
    assert outcome(rec, 1, "war_pool") == ("void", 0) and outcome(rec, 2, "war_pool") == ("void", 0)
    assert rec["net"] + rec["house_net"] == 0


def test_dealer_ante_and_commission_options(capsys):
    rec = egm_round(capsys, "baccarat-war", *POOL_ON, *_bets((3, 5), ("war_pool=5",)),
                    "--option", "pool.dealer_ante=7", "--option", "pool.commission=10",
                    "--cards", "4s 7d Kd 3h Qc 9c 2s 2d Th Qd 8c 8d 9h 8s")
    pool = rec["war_pool"]
    assert pool["pot"] == 17 and pool["paid"] == 15 and pool["commission"] == 2   # floor(17 * 0.9)
    assert outcome(rec, 3, "war_pool") == ("win", 10)
    assert rec["net"] + rec["house_net"] == 0
