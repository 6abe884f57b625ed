"""Double Super 9 (rules/double-super-9.md; seed 003, US 2004/0007815 A1): the seed's rules 15, 25,
38 and 42, scenarios with stacked cards and fixed dice for every outcome kind, house and player
banking, the banker rotation, clear errors, and properties (credits conserved, records replay)."""

from __future__ import annotations

import json
import random
from collections import Counter
from fractions import Fraction
from itertools import combinations_with_replacement, cycle
from math import factorial, prod

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.cards.card import Card, parse_cards
from firmware.cards.source import RngShoe, StackedSource
from firmware.cli import main
from firmware.games.base import Outcome
from firmware.games.double_super_9 import (
    BankerTurn,
    Comparison,
    compare,
    dice_position,
    hand_outcome,
    next_banker,
)
from firmware.games.double_super_9_house_way import house_way
from firmware.games.errors import DecisionError, OptionError
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel, replay
from firmware.rng.service import RngService
from tests.games.helpers import egm_fails, egm_round, outcome, seat, wagers

GAME = "double-super-9"

#: 24 different cards: fills the hands nobody plays (each at most once per stack).
_FILL = [f"{r}{s}" for r in "A23456" for s in "shdc"]

#: The banker's hand used throughout: house way FRONT 5-2 (7 points, five high), BACK 4-4.
BANKER = "5s 2h 4d 4c"


def stack(first: int, hands: dict[int, str]) -> str:
    """The 32 cards of a deal: one card at a time to each position clockwise from ``first``, four
    times; positions missing from ``hands`` get filler cards."""
    fill = cycle(_FILL)
    out = []
    for r in range(4):
        for k in range(8):
            position = (first - 1 + k) % 8 + 1
            out.append(hands[position].split()[r] if position in hands else next(fill))
    return " ".join(out)


def fails(capsys, *args: str) -> str:
    """Run ``egm round double-super-9 --json ARGS``; it must fail with one clear line."""
    return egm_fails(capsys, "round", GAME, "--json", *args)


# --- seed rule 15: the dice --------------------------------------------------------------------
def test_seed_rule_15_dice_2_3_5_start_the_action_one_position_left_of_the_banker(capsys):
    """Seed rule 15 [0027]: "Dice read 2, 3, 5 for a total of 10; in this case action would begin
    one position to the left of the Banker." The house banks from spot 8, so spot 1 receives the
    first card and acts first; the cards go round clockwise one at a time, four times."""
    cards = ("As 2s 3s 4s 5s 6s Ah 2h "     # first card to spots 1, 2, 3, 4, 5, 6, 7, 8
             "3h 4h 5h 6h Ad 2d 3d 4d "     # second card
             "5d 6d Ac 2c 3c 4c 5c 6c "     # third card
             "Ah 2h 3h 4h 5h 6h As 2s")     # fourth card
    rec = egm_round(capsys, GAME, *wagers("1:bet=10", "3:bet=10", "7:bet=10"),
                    "--dice", "2,3,5", "--cards", cards)
    assert rec["dice"] == [2, 3, 5] and rec["dice_total"] == 10
    assert rec["banker"] == "house" and rec["banker_position"] == 8
    assert rec["first_position"] == 1
    assert rec["dealing_order"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert rec["action_order"] == [1, 3, 7]
    assert seat(rec, 1)["cards"] == ["As", "3h", "5d", "Ah"]
    assert seat(rec, 3)["cards"] == ["3s", "5h", "Ac", "3h"]
    assert seat(rec, 7)["cards"] == ["Ah", "3d", "5c", "As"]
    assert rec["dealer"]["cards"] == ["2h", "4d", "6c", "2s"]
    assert rec["empty_positions"] == [2, 4, 5, 6]


@pytest.mark.parametrize(
    ("total", "banker", "expected"),
    [(9, 8, 8), (17, 8, 8), (9, 3, 3), (17, 3, 3), (10, 8, 1), (10, 3, 4), (3, 8, 2), (3, 3, 5),
     (8, 8, 7), (16, 8, 7), (8, 3, 2), (18, 6, 7), (12, 1, 4)],
)
def test_seed_rule_15_the_banker_position_is_always_1_9_or_17(total, banker, expected):
    """Seed rules 15 and 33 [0027], [0045]: "The Banker position is always 1, 9, or 17; numbers
    count clockwise": totals 9 and 17 land on the banker, 8 and 16 on the spot before it."""
    assert dice_position(total, banker) == expected


def test_dice_counted_from_a_player_banker_and_action_skips_the_banker(capsys):
    # Spot 3 banks; total 4 counts 3 (1), 4 (2), 5 (3), 6 (4): spot 6 is dealt first and acts
    # first, then 7, 8, 1, 2 (the banker at 3 takes no action).
    hands = {3: BANKER, 6: "6h 2c 5d 5c", 1: "6h 2c 5d 5c", 2: "4h 2s 6c 3d"}
    rec = egm_round(capsys, GAME, "--option", "banking=player",
                    *wagers("3:bank=100", "6:bet=10", "1:bet=10", "2:bet=10"),
                    "--dice", "1,1,2", "--cards", stack(6, hands))
    assert rec["banker"] == 3 and rec["banker_position"] == 3 and rec["first_position"] == 6
    assert rec["action_order"] == [6, 1, 2]
    assert rec["dealer"]["seat"] == 3 and rec["dealer"]["cards"] == BANKER.split()
    assert seat(rec, 3)["banker"] is True and seat(rec, 3)["house_way"] is True


def test_dice_on_the_banker_deal_the_banker_first_and_action_starts_after_it(capsys):
    rec = egm_round(capsys, GAME, *wagers("1:bet=10", "7:bet=10"), "--dice", "6,6,5",
                    "--cards", stack(8, {8: BANKER, 1: "6h 2c 5d 5c", 7: "6h 2c 5d 5c"}))
    assert rec["dice_total"] == 17 and rec["first_position"] == 8
    assert rec["cards_dealt"][0] == "5s"             # the banker's first card
    assert rec["action_order"] == [1, 7]


# --- seed rule 38: the showdown table -----------------------------------------------------------
# Against the banker's FRONT 5s 2h (7 points, Five high) and BACK 4d 4c (Pair of Fours).
SHOWDOWN = [
    # FRONT|BACK set by the player, comparisons, outcome, net on a 20 bet (5% commission: 1)
    ("6h 2c|5d 5c", ("win", "win"), "win", 19),
    ("4h 2s|6c 3d", ("lose", "lose"), "lose", -20),
    ("6h 2c|6d 3c", ("win", "lose"), "push", 0),
    ("4h 2s|5d 5c", ("lose", "win"), "push", 0),
    ("5h 2d|5d 5c", ("copy", "win"), "win", 19),
    ("6h 2c|4h 4s", ("win", "copy"), "win", 19),
    ("5h 2d|6c 3d", ("copy", "lose"), "lose", -20),
    ("3h 2s|4h 4s", ("lose", "copy"), "lose", -20),
    ("5h 2d|4h 4s", ("copy", "copy"), "push", 0),
]


@pytest.mark.parametrize(("setting", "comparison", "result", "net"), SHOWDOWN)
def test_seed_rule_38_win_push_copy_table(capsys, setting, comparison, result, net):
    """Seed rule 38 [0050]: both hands must beat the banker's to win; both beaten loses; one wins and
    one loses is a push; copy + win is a win; copy + lose is a loss; copy + copy is a push."""
    front, back = setting.split("|")
    rec = egm_round(capsys, GAME, *wagers("1:bet=20"), "--dice", "3,3,3",
                    "--cards", stack(8, {8: BANKER, 1: f"{front} {back}"}),
                    "--decision", f"1:set:{setting}")
    spot = seat(rec, 1)
    assert spot["front"] == front.split() and spot["back"] == back.split()
    assert spot["house_way"] is False and spot["foul"] is False
    assert spot["comparison"] == {"front": comparison[0], "back": comparison[1]}
    assert outcome(rec, 1, "bet") == (result, net)
    assert spot["commission"] == (1 if result == "win" else 0)
    assert rec["net"] == net and rec["house_net"] == -net


def test_outcome_table_is_the_rules_table():
    W, L, C = Comparison.WIN, Comparison.LOSE, Comparison.COPY
    table = {(W, W): Outcome.WIN, (L, L): Outcome.LOSE, (W, L): Outcome.PUSH, (L, W): Outcome.PUSH,
             (C, W): Outcome.WIN, (W, C): Outcome.WIN, (C, L): Outcome.LOSE, (L, C): Outcome.LOSE,
             (C, C): Outcome.PUSH}
    for (front, back), expected in table.items():
        assert hand_outcome(front, back) is expected


def test_several_spots_settle_in_one_round(capsys):
    hands = {8: BANKER, 1: "6h 2c 5d 5c", 2: "4h 2s 6c 3d", 3: "5h 2d 4h 4s"}
    rec = egm_round(capsys, GAME, *wagers("1:bet=10", "2:bet=30", "3:bet=40"), "--dice", "3,3,3",
                    "--cards", stack(8, hands), "--decision", "1:set:6h 2c|5d 5c",
                    "--decision", "2:set:4h 2s|6c 3d", "--decision", "3:set:5h 2d|4h 4s")
    assert outcome(rec, 1, "bet") == ("win", 9)          # 5% of 10 = 0.5, rounded up to 1
    assert outcome(rec, 2, "bet") == ("lose", -30)
    assert outcome(rec, 3, "bet") == ("push", 0)
    assert rec["net"] == -21 and rec["house_net"] == 21


@pytest.mark.parametrize(
    ("commission", "bet", "net"),
    [("5", 10, 9), ("5", 20, 19), ("5", 30, 28), ("5", 100, 95), ("2.5", 100, 97), ("0", 10, 10),
     ("5%", 41, 38)],
)
def test_commission_on_a_win_is_rounded_up_in_the_houses_favour(capsys, commission, bet, net):
    rec = egm_round(capsys, GAME, *wagers(f"1:bet={bet}"), "--option", f"commission={commission}",
                    "--dice", "3,3,3", "--cards", stack(8, {8: BANKER, 1: "6h 2c 5d 5c"}))
    assert outcome(rec, 1, "bet") == ("win", net)
    assert seat(rec, 1)["commission"] == bet - net
    assert rec["house_net"] == -net


# --- seed rule 25: foul -------------------------------------------------------------------------
def test_seed_rule_25_foul_hand_loses_at_once_to_the_banker_with_foul_setting_lose(capsys):
    """Seed rule 25 [0037]: a wrongly set hand is a "Foul Hand" and "wager will be collected and paid
    to the Banker immediately". 6-3 FRONT (Super 9, six high) over 5-4 BACK (Super 9, five high) is
    foul: it loses though both its hands beat the banker's (3-4 BACK, A-2 FRONT), uncompared."""
    rec = egm_round(capsys, GAME, "--option", "foul_setting=lose", *wagers("1:bet=20"),
                    "--dice", "3,3,3", "--cards", stack(8, {8: "As 2h 3d 4c", 1: "6h 3c 5h 4s"}),
                    "--decision", "1:set:6h 3c|5h 4s")
    assert rec["dealer"]["front"] == ["As", "2h"] and rec["dealer"]["back"] == ["3d", "4c"]
    spot = seat(rec, 1)
    assert spot["foul"] is True and spot["comparison"] is None
    assert spot["front"] == ["6h", "3c"] and spot["back"] == ["5h", "4s"]
    assert outcome(rec, 1, "bet") == ("lose", -20)
    assert rec["house_net"] == 20


def test_foul_setting_refuse_is_a_clear_error_naming_the_rule(capsys):
    line = fails(capsys, *wagers("1:bet=20"), "--dice", "3,3,3",
                 "--cards", stack(8, {8: BANKER, 1: "6h 2c 4h 2s"}), "--decision", "1:set:6h 2c|4h 2s")
    assert "FRONT 6h 2c (8 points, Six high) outranks BACK 4h 2s (6 points, Four high)" in line
    assert "BACK must rank at least as high as the FRONT" in line


def test_refuse_lists_only_legal_settings_and_lose_lists_all_six():
    game = get_game(GAME)
    cards = stack(8, {8: BANKER, 1: "6h 2c 4h 2s"})
    for mode, count in (("refuse", 3), ("lose", 6)):
        kernel = RoundKernel(game, make_options(GAME, {"foul_setting": mode}))
        (request,) = kernel.begin({1: {"bet": 10}}, StackedSource(parse_cards(cards)), dice=(3, 3, 3))
        assert request.kind == "set_hand" and request.default == "house-way"
        assert request.actions[-1] == "house-way" and len(request.actions) == count + 1
        if mode == "refuse":
            assert "set:6h 2c|4h 2s" not in request.actions and "set:4h 2s|6h 2c" in request.actions


def test_an_illegal_setting_changes_nothing_then_a_legal_one_is_taken():
    game = get_game(GAME)
    kernel = RoundKernel(game, make_options(GAME, {}))
    source = StackedSource(parse_cards(stack(8, {8: BANKER, 1: "6h 2c 4h 2s"})))
    before = kernel.begin({1: {"bet": 10}}, source, dice=(3, 3, 3))
    for bad in ("set:6h 2c|4h 2s", "set:6h 2c|4h 3s", "set:6h 6h|4h 2s", "set:6h 2c 4h|2s",
                "set:6h 2c", "split 6h 2c|4h 2s", "set:6h 2x|4h 2s"):
        with pytest.raises(DecisionError):
            kernel.decide(1, bad)
        assert kernel.pending() == before
    assert kernel.decide(1, "set:4h 2s|6h 2c") == []
    rec = kernel.record()
    assert rec["decisions"] == [{"seat": 1, "action": "set:4h 2s|6h 2c"}]
    assert seat(rec, 1)["front"] == ["4h", "2s"]


@pytest.mark.parametrize(
    ("decision", "needle"),
    [
        ("1:set:6h 2c|5d 5s", "seat 1 does not hold 5s; its cards are 6h 2c 5d 5c"),
        ("1:set:5d 5d|6h 2c", "seat 1 holds 5d once, not more"),
        ("1:set:6h 2c 5d|5c", "a FRONT hand of 3 and a BACK hand of 1 cards"),
        ("1:set:6h 2c 5d 5c", "set:FRONT|BACK with one '|'"),
        ("1:fold", "unknown action 'fold'"),
        ("1:set:6h 2c|5d Xc", "bad card 'Xc'"),
        ("1:set:6h 2c|5d 9c", "seat 1 does not hold 9c"),
        ("2:house-way", "decision(s) not asked for"),
    ],
)
def test_illegal_decisions_are_one_clear_line(capsys, decision, needle):
    line = fails(capsys, *wagers("1:bet=10"), "--dice", "3,3,3",
                 "--cards", stack(8, {8: BANKER, 1: "6h 2c 5d 5c"}), "--decision", decision)
    assert needle in line, line


def test_a_spot_with_no_decision_to_make_and_deciding_twice_are_refused():
    game = get_game(GAME)
    kernel = RoundKernel(game, make_options(GAME, {"banking": "player"}))
    source = StackedSource(parse_cards(stack(2, {1: BANKER, 2: "6h 2c 5d 5c", 3: "4h 2s 6c 3d"})))
    pending = kernel.begin({1: {"bank": 50}, 2: {"bet": 10}, 3: {"bet": 10}}, source, dice=(2, 3, 5))
    assert [r.seat for r in pending] == [2, 3]
    with pytest.raises(DecisionError, match="seat 1 has no decision to make"):   # the banker
        kernel.decide(1, "house-way")
    with pytest.raises(DecisionError, match="seat 5 has no decision to make"):   # nobody there
        kernel.decide(5, "house-way")
    kernel.decide(2, "house-way")
    with pytest.raises(DecisionError, match="seat 2 has no decision to make"):   # twice
        kernel.decide(2, "set:6h 2c|5d 5c")
    with pytest.raises(DecisionError, match="seat 1 has no hand to set"):        # the game itself
        game.decide(kernel.round, 1, "house-way")
    with pytest.raises(DecisionError, match="already set"):
        game.decide(kernel.round, 2, "house-way")


def test_time_out_sets_the_hand_the_house_way_and_the_record_says_so():
    game = get_game(GAME)
    kernel = RoundKernel(game, make_options(GAME, {}))
    source = StackedSource(parse_cards(stack(8, {8: BANKER, 1: "6h 2c 4h 2s", 2: "6s 3h 5d 5c"})))
    kernel.begin({1: {"bet": 10}, 2: {"bet": 10}}, source, dice=(3, 3, 3))
    kernel.decide(1, "set:4h 2s|6h 2c")
    assert kernel.time_out() == [(2, "house-way")]
    rec = kernel.record()
    assert rec["decisions"] == [{"seat": 1, "action": "set:4h 2s|6h 2c"},
                                {"seat": 2, "action": "house-way", "timed_out": True}]
    assert seat(rec, 2)["house_way"] is True and seat(rec, 2)["back"] == ["5d", "5c"]
    assert seat(rec, 1)["house_way"] is False
    assert replay(rec) == rec


def test_text_output_shows_the_house_way_split(capsys):
    code = main(["round", GAME, "--wager", "1:bet=10", "--dice", "3,3,3",
                 "--cards", stack(8, {8: BANKER, 1: "6s 3h 5d 5c"})])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "seat 1  6s 3h 5d 5c  score FRONT 6s 3h (Super 9, Six high) / BACK 5d 5c (Pair of Fives) [house way]" in out
    assert "dealer  5s 2h 4d 4c  score FRONT 5s 2h (7 points, Five high) / BACK 4d 4c (Pair of Fours) [house way]" in out


# --- seed rule 42: the banker's action limit (player banking) ------------------------------------
def _player_round(capsys, bank, bets, hands, *extra):
    """Spot 1 banks ``bank``; the seed's dice 2, 3, 5 (total 10) start the action at spot 2."""
    specs = [f"1:bank={bank}"] + [f"{s}:bet={b}" for s, b in bets.items()]
    return egm_round(capsys, GAME, "--option", "banking=player", *wagers(*specs),
                     "--dice", "2,3,5", "--cards", stack(2, {1: BANKER, **hands}), *extra)


WIN = "6h 2c 5d 5c"     # house way: 6-2 FRONT, 5-5 BACK: beats the banker's both hands
LOSE = "4h 2s 6c 3d"    # house way: 4-2 FRONT, 6-3 BACK: beaten on both
PUSH = "5h 2d 4h 4s"    # house way: 5-2 FRONT, 4-4 BACK: copy + copy


def test_seed_rule_42_a_100_banker_loses_50_then_wins_50_and_the_hand_is_over(capsys):
    """Seed rule 42 [0054]: "if the Banker wagers one hundred dollars ($100) and proceeds to lose
    fifty dollars ($50) to the first play then wins fifty dollars ($50) from the second player, the
    hand is over. ... subsequent players get no action on this hand and retain their wager." """
    rec = _player_round(capsys, 100, {2: 50, 3: 50, 4: 50}, {2: WIN, 3: LOSE, 4: WIN})
    assert rec["action_order"] == [2, 3, 4]
    assert outcome(rec, 2, "bet") == ("win", 50)
    assert outcome(rec, 3, "bet") == ("lose", -50)
    assert outcome(rec, 4, "bet") == ("void", 0)            # would have won: no action
    assert seat(rec, 4)["comparison"] == {"front": "win", "back": "win"}
    assert outcome(rec, 1, "bank") == ("push", 0)
    assert rec["bank"] == {"wager": 100, "action": 100, "unused": 0}
    assert [seat(rec, s)["action"] for s in (1, 2, 3, 4)] == [100, 50, 50, 0]
    assert rec["net"] == 0 and rec["house_net"] == 0


def test_a_spot_past_the_bank_gets_action_only_for_the_remainder(capsys):
    rec = _player_round(capsys, 60, {2: 50, 3: 50, 4: 50}, {2: WIN, 3: LOSE, 4: LOSE})
    assert outcome(rec, 2, "bet") == ("win", 50)
    assert outcome(rec, 3, "bet") == ("lose", -10)          # the 10 left of the bank
    assert outcome(rec, 4, "bet") == ("void", 0)
    assert outcome(rec, 1, "bank") == ("lose", -40)
    assert rec["bank"] == {"wager": 60, "action": 60, "unused": 0}


def test_a_push_takes_no_action_and_the_banker_cannot_lose_more_than_the_bank(capsys):
    rec = _player_round(capsys, 70, {2: 30, 3: 50, 4: 50, 5: 50},
                        {2: PUSH, 3: WIN, 4: WIN, 5: LOSE})
    assert outcome(rec, 2, "bet") == ("push", 0)
    assert outcome(rec, 3, "bet") == ("win", 50)
    assert outcome(rec, 4, "bet") == ("win", 20)
    assert outcome(rec, 5, "bet") == ("void", 0)
    assert outcome(rec, 1, "bank") == ("lose", -70)
    assert rec["net"] == 0


def test_a_bank_that_covers_everyone_settles_every_spot(capsys):
    rec = _player_round(capsys, 500, {2: 50, 3: 40, 4: 10}, {2: WIN, 3: LOSE, 4: LOSE})
    assert [outcome(rec, s, "bet") for s in (2, 3, 4)] == [("win", 50), ("lose", -40), ("lose", -10)]
    assert outcome(rec, 1, "bank") == ("push", 0)
    assert rec["bank"] == {"wager": 500, "action": 100, "unused": 400}


def test_bank_has_no_table_maximum(capsys):
    rec = _player_round(capsys, 4000, {2: 50}, {2: LOSE})     # above max_bet 500
    assert outcome(rec, 1, "bank") == ("win", 50) and seat(rec, 1)["wagers"] == {"bank": 4000}
    assert "above the table maximum" in fails(
        capsys, "--option", "banking=player", *wagers("1:bank=100", "2:bet=100000"))


def test_a_foul_hand_is_paid_to_the_banker_first(capsys):
    # Spot 3 fouls (paid to the banker at once: 50 of the 60 bank); spot 2, first in action order,
    # then gets action for the 10 left; spot 4 none.
    rec = _player_round(capsys, 60, {2: 50, 3: 50, 4: 50}, {2: WIN, 3: "6h 2c 4h 2s", 4: WIN},
                        "--option", "foul_setting=lose", "--decision", "3:set:6h 2c|4h 2s")
    assert seat(rec, 3)["foul"] is True
    assert outcome(rec, 3, "bet") == ("lose", -50)
    assert outcome(rec, 2, "bet") == ("win", 10)
    assert outcome(rec, 4, "bet") == ("void", 0)
    assert outcome(rec, 1, "bank") == ("win", 40)


def test_collection_is_the_clubs_fee_from_every_spot_whatever_the_cards(capsys):
    """Seed [0013]-[0014]: the club takes a collection before each bet and has no interest in the
    result: its whole result is the collections."""
    rec = _player_round(capsys, 100, {2: 50, 3: 50}, {2: WIN, 3: WIN}, "--option", "collection=2",
                        *wagers("1:collection=2", "2:collection=2", "3:collection=2"))
    assert outcome(rec, 2, "bet") == ("win", 50) and outcome(rec, 3, "bet") == ("win", 50)
    assert outcome(rec, 1, "bank") == ("lose", -100)
    for s in (1, 2, 3):
        assert outcome(rec, s, "collection") == ("lose", -2)
    assert rec["house_net"] == 6 and rec["net"] == -6
    assert "place 2:collection=2" in fails(
        capsys, "--option", "banking=player", "--option", "collection=2",
        *wagers("1:bank=100", "1:collection=2", "2:bet=10"))


def test_banker_spot_option_names_the_spot_that_must_bank(capsys):
    rec = egm_round(capsys, GAME, "--option", "banking=player", "--option", "banker_spot=5",
                    *wagers("5:bank=40", "1:bet=10"), "--dice", "1,1,1",
                    "--cards", stack(7, {5: BANKER, 1: WIN}))
    assert rec["banker"] == 5 and rec["first_position"] == 7
    assert "spot 5 banks this round (banker_spot), not spot 1" in fails(
        capsys, "--option", "banking=player", "--option", "banker_spot=5",
        *wagers("1:bank=40", "2:bet=10"))


# --- the banker rotation -----------------------------------------------------------------------
def test_rotation_each_spot_banks_twice_starting_at_1():
    """Seed rules 30-31 [0042]-[0043]: each hand acts the Banker twice, 1st and 2nd Banker; hand #1
    banks first."""
    everyone = set(range(1, 9))
    turn = None
    seen = []
    for _ in range(16):
        turn = next_banker(turn, everyone, everyone)
        seen.append((turn.spot, turn.term))
    assert seen == [(s, t) for s in range(1, 9) for t in (1, 2)]
    assert next_banker(BankerTurn(8, 2), everyone, everyone) == BankerTurn(1, 1)


def test_rotation_passes_on_a_spot_that_declines_cannot_cover_or_did_not_wager():
    """Seed rule 31 [0043]: a hand without the minimum, or that does not want to bank, is replaced
    by the next; rule 20 [0032]: only a player who wagered on the previous hand may bank."""
    assert next_banker(None, {1, 2, 3}, {2, 3}) == BankerTurn(2, 1)          # 1 declines
    assert next_banker(None, {2, 3}, {1, 2, 3}) == BankerTurn(2, 1)          # 1 did not wager
    assert next_banker(BankerTurn(2, 1), {2, 3}, {3}) == BankerTurn(3, 1)    # 2 declines its 2nd
    assert next_banker(BankerTurn(3, 2), {1, 3, 6}, {1, 6}) == BankerTurn(6, 1)
    assert next_banker(BankerTurn(7, 2), {2, 7}, {2, 7}) == BankerTurn(2, 1)  # wraps round
    assert next_banker(BankerTurn(4, 2), {4}, {4}) == BankerTurn(4, 1)       # nobody else: again
    assert next_banker(BankerTurn(4, 1), {1, 2}, {1, 2}) == BankerTurn(1, 1)  # 4 did not wager
    assert next_banker(BankerTurn(4, 1), set(), {1, 2}) is None             # nobody may bank
    with pytest.raises(ValueError):
        BankerTurn(9, 1)
    with pytest.raises(ValueError):
        BankerTurn(1, 3)


# --- wagers, options and cards ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (wagers("8:bet=10"), "spot 8 is the house's hand with banking = house"),
        (wagers("1:bank=10"), "bank is the player-banker's wager"),
        (wagers("1:ante=10"), "unknown wager 'ante'"),
        (["--option", "banking=player", *wagers("1:bet=10", "2:bet=10")], "must place the bank wager"),
        (["--option", "banking=player", *wagers("1:bank=10", "2:bank=10", "3:bet=5")],
         "only one spot banks a round"),
        (["--option", "banking=player", *wagers("1:bank=10", "1:bet=10", "2:bet=10")],
         "seat 1 banks this round: its wager is bank, not bet"),
        (["--option", "banking=player", *wagers("1:bank=10")], "needs a spot that plays"),
        (["--option", "banking=player", *wagers("1:bank=10", "2:bet=10", "2:collection=1")],
         "no collection is taken"),
        (["--option", "banker_spot=2"], "banker_spot: with banking = house"),
        (["--option", "collection=1"], "collection: the club's fee applies to banking = player"),
        (["--option", "foul_setting=maybe"], "foul_setting"),
        (["--option", "decks=0"], "decks"),
        (["--option", "commission=100"], "commission"),
        (wagers("1:bet=10") + ["--dice", "2,3", "--cards", "As"], "rolls 3 dice of 1..6"),
        (wagers("1:bet=10") + ["--dice", "3,3,3", "--cards", stack(8, {1: "Kh 2c 5d 5c"})],
         "Kh is given 1 time, but the game's shoe of 288 cards holds none"),
        (wagers("1:bet=10") + ["--option", "decks=2", "--dice", "3,3,3",
                               "--cards", stack(8, {8: "As 2h 4d 4c", 1: "As As 5d 5c"})],
         "As is given 4 times, but the game's shoe of 48 cards holds 2"),
        (["--option", "decks=1"], "decks: a deal takes 32 cards and one deck of A-6 holds 24"),
        (wagers("1:bet=10") + ["--dice", "3,3,3", "--cards", "As 2s 3s"], "ran out"),
        (wagers("1:bet=10") + ["--cards", stack(8, {})], "rolls dice: give --dice"),
    ],
)
def test_bad_wagers_options_and_cards_are_one_clear_line(capsys, args, needle):
    line = fails(capsys, *args)
    assert needle in line, line


def test_options_round_trip_through_the_record():
    options = make_options(GAME, {"commission": "2.5%", "banking": "player", "collection": "3",
                                  "banker_spot": "4", "foul_setting": "lose", "decks": "6"})
    assert options.to_json() == {"decks": 6, "banking": "player", "commission": 2.5, "collection": 3,
                                 "banker_spot": 4, "foul_setting": "lose"}
    assert make_options(GAME, options.to_json()) == options
    with pytest.raises(OptionError):
        make_options(GAME, {"colour": "red"})


def test_shoe_is_288_cards_of_a_to_6():
    game = get_game(GAME)
    shoe = game.shoe(make_options(GAME, {}))
    assert len(shoe) == 288 and {c.rank for c in shoe} == {14, 2, 3, 4, 5, 6}
    assert len(game.shoe(make_options(GAME, {"decks": 2}))) == 48


def test_simulate_reports_bet_and_bank_returns(capsys):
    assert main(["simulate", GAME, "--rounds", "300", "--seed", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["wagers"]) == {"bet"} and doc["wagers"]["bet"]["wagered"] == 3000
    assert main(["simulate", GAME, "--rounds", "300", "--seed", "1", "--seats", "3",
                 "--option", "banking=player", "--option", "collection=1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["wagers"]) == {"bet", "bank", "collection"}
    # Player banking is zero-sum between banker and players; the club keeps only the collections
    # (300 rounds x 3 spots x 1 credit).
    assert doc["wagers"]["bet"]["net"] + doc["wagers"]["bank"]["net"] == 0
    assert doc["wagers"]["collection"]["wagered"] == 900 and doc["wagers"]["collection"]["net"] == -900


# --- properties ----------------------------------------------------------------------------------
@st.composite
def ds9_round(draw):
    banking = draw(st.sampled_from(["house", "player"]))
    table = {
        "banking": banking,
        "decks": draw(st.sampled_from([2, 3, 12])),
        "foul_setting": draw(st.sampled_from(["refuse", "lose"])),
        "commission": draw(st.sampled_from(["0", "5", "2.5", "33"])),
    }
    amount = st.integers(1, 60)
    if banking == "house":
        seats = draw(st.lists(st.integers(1, 7), min_size=1, max_size=7, unique=True))
        bets = {s: {"bet": draw(amount)} for s in seats}
    else:
        table["collection"] = draw(st.sampled_from([0, 0, 1, 3]))
        seats = draw(st.lists(st.integers(1, 8), min_size=2, max_size=8, unique=True))
        banker = seats[0]
        if draw(st.booleans()):
            table["banker_spot"] = banker
        bets = {s: {"bet": draw(amount)} for s in seats[1:]}
        bets[banker] = {"bank": draw(st.integers(1, 400))}
        if table["collection"]:
            for b in bets.values():
                b["collection"] = table["collection"]
    return table, bets, draw(st.integers(0, 2**32)), draw(st.integers(0, 2**16))


@settings(max_examples=150, deadline=None)
@given(ds9_round())
def test_credits_conserved_every_wager_settled_and_records_replay(case):
    table, bets, seed, choice_seed = case
    game = get_game(GAME)
    options = make_options(GAME, table)
    rng = RngService.seeded(seed)
    chooser = random.Random(choice_seed)
    kernel = RoundKernel(game, options)
    source = RngShoe(rng, game.shoe(options))
    settlement = kernel.play(bets, source, dice=game.roll_dice(rng),
                             decider=lambda request: chooser.choice(request.actions))
    assert settlement.players_net + settlement.house_net == 0
    record = kernel.record()
    assert record["net"] + record["house_net"] == 0
    for spot in record["seats"]:
        assert set(spot["results"]) == set(spot["wagers"]) | ({"bank"} if spot["banker"] else set())
        assert sorted(spot["cards"]) == sorted(spot["front"] + spot["back"])
        if table["foul_setting"] == "refuse":
            assert spot["foul"] is False
    if table["banking"] == "player":
        # The club's result is the collections alone; the banker never loses more than its bank.
        assert record["house_net"] == table["collection"] * len(record["seats"])
        banker = seat(record, record["banker"])
        assert banker["results"]["bank"]["net"] >= -banker["wagers"]["bank"]
        assert sum(seat(record, s)["action"] for s in record["action_order"]) <= banker["wagers"]["bank"]
        assert record["bank"]["action"] == sum(seat(record, s)["action"] for s in record["action_order"])
    assert replay(record) == record


# --- exact math through the game's own functions -------------------------------------------------
def test_house_way_against_house_way_is_symmetric_and_the_commission_is_the_house_edge():
    """Every pair of value patterns of a spot's and the banker's four cards (12 decks, 8 cards drawn
    without replacement), both set the house way: a spot wins exactly as often as it loses
    (0.318304), so with ``banking = house`` the edge is the commission alone: P(win) x 5% = 1.59%
    for bets where 5% is a whole credit, and P(win) x 10% = 3.18% for a 10-credit bet."""
    def falling(n, k):
        return prod(range(n - k + 1, n + 1))

    per_value = 48                                       # 12 decks x 4 suits
    patterns = []
    for values in combinations_with_replacement(range(1, 7), 4):
        setting = house_way([Card.of(v, suit) for suit, v in enumerate(values)])
        count = Counter(values)
        orders = factorial(4) // prod(factorial(n) for n in count.values())
        patterns.append((setting.front_rank, setting.back_rank, count, orders))
    total = {o: 0 for o in Outcome}
    for pf, pb, pc, pm in patterns:
        for bf, bb, bc, bm in patterns:
            ways = pm * bm * prod(falling(per_value, pc[v] + bc[v]) for v in range(1, 7))
            total[hand_outcome(compare(pf, bf), compare(pb, bb))] += ways
    deals = falling(6 * per_value, 8)
    assert sum(total.values()) == deals
    win, lose = Fraction(total[Outcome.WIN], deals), Fraction(total[Outcome.LOSE], deals)
    assert win == lose
    assert round(float(win), 6) == 0.318304
    assert round(float(Fraction(total[Outcome.PUSH], deals)), 6) == 0.363393
    assert round(float(win * Fraction(5, 100)), 5) == 0.01592
    assert round(float(win * Fraction(1, 10)), 5) == 0.03183
