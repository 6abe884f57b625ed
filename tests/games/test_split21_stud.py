"""Split 21 Stud (rules/split21-stud.md; seed 002, US 6,179,293): stacked rounds through ``egm round``
for every outcome kind, the seed's "Additional Preferred Specific Rules of the Game" 2, 4, 5, 6 and 7,
the ``foul_setting`` option, player banking, clear errors, and properties over random rounds.

Unless a test says otherwise the die shows 8, so dealing runs positions 1..8 and the house's hand
(position 8) is the last of each lap; see :mod:`tests.games.split21_cards`.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.cards.card import parse_cards
from firmware.cards.source import RngShoe, StackedSource
from firmware.games.errors import DecisionError
from firmware.games.registry import get_game, make_options
from firmware.games.split21_stud_house_way import splits
from firmware.kernel.round import RoundKernel, replay
from firmware.rng.service import RngService
from tests.games.helpers import egm_fails, egm_round, outcome, seat, wagers
from tests.games.split21_cards import round_args, stack

GAME = "split21-stud"

#: Ten high; house way HIGH Ts 8d 2s (20, three cards), LOW 6c 4h (10).
DEALER_TEN = "Ts 8d 6c 4h 2s"
#: A pair of kings; house way HIGH Kc Kh (20), LOW 9s 5d 3c (17).
KINGS = "Kc Kh 9s 5d 3c"
#: The same pair of kings with the same kickers, in other suits (an equal poker hand).
KINGS_TOO = "Ks Kd 9c 5h 3d"
#: A pair of queens.
QUEENS = "Qs Qd 7c 6s 4s"
#: Four aces: the best hand of the table, if it is set properly.
ACES = "Ac Ad Ah As 5c"


def bets(*seats: int, ante: int = 10, low: int = 10, high: int = 20, jackpot: int = 0) -> list[str]:
    out: list[str] = []
    for s in seats:
        out += wagers(f"{s}:ante={ante}", f"{s}:low={low}", f"{s}:high={high}")
        if jackpot:
            out += wagers(f"{s}:jackpot={jackpot}")
    return out


def rules(args: tuple[str, ...]) -> list[str]:
    """``args`` with the rules' JACKPOT offered (the terminal's one-seat configuration, which
    ``egm round`` plays, switches it off) unless they say otherwise."""
    if any(a.startswith("jackpot.enabled") for a in args):
        return list(args)
    return ["--option", "jackpot.enabled=true", *args]


def play(capsys, hands: dict[int, str], *args: str, die: int = 8) -> dict:
    return egm_round(capsys, GAME, *round_args(die, hands), *rules(args))


def results(record: dict, number: int) -> dict[str, tuple[str, int]]:
    return {k: (v["outcome"], v["net"]) for k, v in seat(record, number)["results"].items()}


def egm_error(capsys, *args: str) -> str:
    """``egm round split21-stud`` that must fail: one stderr line, nothing on stdout."""
    return egm_fails(capsys, "round", GAME, "--json", *rules(args))


# --- dealing and the round record ---------------------------------------------------------------
def test_dealing_order_and_record_shape(capsys):
    cards = stack(8, {1: KINGS, 8: DEALER_TEN}).split()
    rec = egm_round(capsys, GAME, *bets(1), "--dice", "8", "--cards", " ".join(cards))
    # One card at a time to positions 1..8, five laps: seat 1 gets cards 0, 8, 16, 24, 32.
    assert seat(rec, 1)["cards"] == [cards[i] for i in (0, 8, 16, 24, 32)] == KINGS.split()
    assert rec["dealer"]["cards"] == [cards[i] for i in (7, 15, 23, 31, 39)] == DEALER_TEN.split()
    assert rec["cards_dealt"] == cards and len(cards) == 40
    assert rec["dice"] == [8] and rec["banker"] == "house" and rec["dealer"]["seat"] == "house"
    assert rec["dealer_position"] == 8 and rec["first_position"] == 1
    assert rec["dealing_order"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert rec["empty_positions"] == [2, 3, 4, 5, 6, 7]
    assert rec["options"]["foul_setting"] == "refuse"
    s1 = seat(rec, 1)
    assert s1["position"] == 1 and s1["banker"] is False
    assert (s1["high"], s1["low"], s1["high_total"], s1["low_total"]) == (
        ["Kc", "Kh"], ["9s", "5d", "3c"], 20, 17)
    assert s1["poker"] == "Pair of Kings" and s1["foul"] is False and s1["house_way"] is True
    assert s1["score"] == "HIGH 20 / LOW 17 / Pair of Kings"
    assert list(s1["results"]) == ["ante", "high", "low"]      # poker first ([0038])
    assert rec["decisions"] == [{"seat": 1, "action": "house-way"}]


def test_the_die_says_where_dealing_starts_with_the_house_at_position_8(capsys):
    # Die 3: dealing starts at position 4 and runs 4, 5, 6, 7, 8, 1, 2, 3; the house stays at 8.
    cards = stack(3, {1: KINGS, 8: DEALER_TEN}).split()
    rec = egm_round(capsys, GAME, *bets(1), "--dice", "3", "--cards", " ".join(cards))
    assert rec["dealing_order"] == [4, 5, 6, 7, 8, 1, 2, 3] and rec["first_position"] == 4
    assert rec["dealer_position"] == 8
    assert seat(rec, 1)["cards"] == [cards[i] for i in (5, 13, 21, 29, 37)] == KINGS.split()
    assert rec["dealer"]["cards"] == [cards[i] for i in (4, 12, 20, 28, 36)] == DEALER_TEN.split()


# --- ante, HIGH and LOW: win, lose, push ---------------------------------------------------------
def test_ante_high_and_low_win_lose_and_push(capsys):
    # Dealer: ten high, HIGH Ts 8d 2s = 20, LOW 6c 4h = 10.
    rec = play(capsys, {1: "Kc Kh As 5d 4c", 2: "9h 7h 5s 3d 2c", 3: "Td 8h 6d 4d 2h", 8: DEALER_TEN},
               *bets(1, 2, 3),
               "--decision", "1:set:Kc Kh As|5d 4c",      # HIGH 21 (3 cards), LOW 9
               "--decision", "2:set:7h 5s 3d|9h 2c",      # HIGH 15, LOW 11
               "--decision", "3:house-way")               # the dealer's ranks in other suits
    assert (rec["dealer"]["high"], rec["dealer"]["low"]) == (["Ts", "8d", "2s"], ["6c", "4h"])
    assert results(rec, 1) == {"ante": ("win", 10), "high": ("win", 20), "low": ("lose", -10)}
    assert results(rec, 2) == {"ante": ("lose", -10), "high": ("lose", -20), "low": ("win", 10)}
    assert results(rec, 3) == {"ante": ("push", 0), "high": ("push", 0), "low": ("push", 0)}
    assert (seat(rec, 3)["high"], seat(rec, 3)["low"]) == (["Td", "8h", "2h"], ["6d", "4d"])
    assert rec["net"] == 0 and rec["house_net"] == 0


def test_blackjack_pays_are_options_rounded_down(capsys):
    # HIGH 21 beats 20 paying 3:2 on 15 -> 22 (22.5 rounded down); LOW 17 beats 10 paying 6:5 on 7
    # -> 8 (8.4 rounded down).
    rec = play(capsys, {1: "Kc Kh As 5d 4c", 8: DEALER_TEN}, *bets(1, low=7, high=15),
               "--option", "high_multiple=0", "--option", "high_pays=3:2", "--option", "low_pays=6:5",
               "--decision", "1:set:Kc Kh As|5d 4c")
    assert outcome(rec, 1, "high") == ("win", 22)
    assert outcome(rec, 1, "low") == ("lose", -7)        # 9 against 10
    rec = play(capsys, {1: KINGS, 8: DEALER_TEN}, *bets(1, low=7, high=15),
               "--option", "high_multiple=0", "--option", "low_pays=6:5")
    assert outcome(rec, 1, "low") == ("win", 8) and outcome(rec, 1, "high") == ("push", 0)
    assert rec["net"] + rec["house_net"] == 0


# --- the seed's additional rules 5, 6 and 7 ------------------------------------------------------
def test_rule_5_a_bust_hand_loses_even_against_a_busted_dealer_hand(capsys):
    # Seed rule 5: "Any high blackjack hand or low blackjack hand over 21 is considered a 'busted'
    # hand and automatically is a losing hand." Dealer K Q J T 9: every split busts its 3-card
    # hand; the house way keeps HIGH Kd Qs (20) and busts LOW Jh Tc 9c. Seat 1 holds the same
    # ranks: its LOW busts too and loses (bust against bust). Seat 2's live LOW 5 beats the bust.
    rec = play(capsys, {1: "Ks Qh Jd Td 9d", 2: "2h 3h 4s 5s 7s", 8: "Kd Qs Jh Tc 9c"}, *bets(1, 2))
    assert (rec["dealer"]["high"], rec["dealer"]["low"]) == (["Kd", "Qs"], ["Jh", "Tc", "9c"])
    assert rec["dealer"]["score"] == "HIGH 20 / LOW bust / Straight, King high"
    assert seat(rec, 1)["low"] == ["Jd", "Td", "9d"] and seat(rec, 1)["score"].startswith("HIGH 20 / LOW bust")
    assert results(rec, 1) == {"ante": ("push", 0), "high": ("push", 0), "low": ("lose", -10)}
    assert (seat(rec, 2)["high"], seat(rec, 2)["low"]) == (["4s", "5s", "7s"], ["2h", "3h"])
    assert results(rec, 2) == {"ante": ("lose", -10), "high": ("lose", -20), "low": ("win", 10)}
    assert rec["net"] == -30 and rec["house_net"] == 30


def test_rule_6_a_two_card_21_beats_a_three_card_21(capsys):
    # Seed rule 6: "A two card blackjack ... is a higher value hand than a three card 21 hand."
    # Dealer HIGH 9c 5h 7s = 21 in three cards, LOW Tc 8c = 18.
    rec = play(capsys, {1: "As Kd 7c 7h 4d", 2: "6h 6d 9h Qs 8s", 8: "9c 5h 7s Tc 8c"}, *bets(1, 2))
    assert rec["dealer"]["high"] == ["9c", "5h", "7s"] and rec["dealer"]["high_total"] == 21
    assert seat(rec, 1)["high"] == ["As", "Kd"]                       # 21 in two cards
    assert outcome(rec, 1, "high") == ("win", 20) and outcome(rec, 1, "low") == ("push", 0)
    assert seat(rec, 2)["high"] == ["6h", "6d", "9h"]                 # 21 in three cards
    assert outcome(rec, 2, "high") == ("push", 0) and outcome(rec, 2, "low") == ("push", 0)


def test_rule_6_a_three_card_21_loses_to_the_dealers_two_card_21(capsys):
    # Dealer HIGH Ah Kh (two-card 21), LOW 5d 6d Tc (three-card 21).
    rec = play(capsys, {1: "7c 7h 7d 9s 2s", 2: "Ad Qc 4c 8h 9h", 8: "Ah Kh 5d 6d Tc"}, *bets(1, 2))
    assert (rec["dealer"]["high"], rec["dealer"]["low"]) == (["Ah", "Kh"], ["5d", "6d", "Tc"])
    assert seat(rec, 1)["high"] == ["7c", "7h", "7d"] and seat(rec, 1)["high_total"] == 21
    assert outcome(rec, 1, "high") == ("lose", -20) and outcome(rec, 1, "low") == ("lose", -10)
    # Two naturals push; two three-card 21s push.
    assert (seat(rec, 2)["high"], seat(rec, 2)["low"]) == (["Ad", "Qc"], ["4c", "8h", "9h"])
    assert outcome(rec, 2, "high") == ("push", 0) and outcome(rec, 2, "low") == ("push", 0)


def test_rule_7_card_values(capsys):
    # Seed rule 7: "Numbered cards have their associated number value, face cards count ten, and
    # aces are counted as one or eleven" (the best total not over 21).
    rec = play(capsys, {1: "As Ac 9d Kd Qc", 2: "Ah 5c Ks 2d 3d", 3: "Ad 7h 2h 2c 3s", 8: DEALER_TEN},
               *bets(1, 2, 3), "--option", "foul_setting=lose",
               "--decision", "1:set:As Ac 9d|Kd Qc",      # 11 + 1 + 9 = 21; 10 + 10 = 20
               "--decision", "2:set:Ah 5c Ks|2d 3d",      # 1 + 5 + 10 = 16; 5
               "--decision", "3:set:2h 2c 3s|Ad 7h")      # 7; 11 + 7 = 18 (foul: 7 below 18)
    totals = {n: (seat(rec, n)["high_total"], seat(rec, n)["low_total"]) for n in (1, 2, 3)}
    assert totals == {1: (21, 20), 2: (16, 5), 3: (7, 18)}
    assert [seat(rec, n)["foul"] for n in (1, 2, 3)] == [False, False, True]


# --- rule 2: a wrongly set hand ------------------------------------------------------------------
def test_rule_2_foul_with_lose_loses_every_wager_and_cannot_win_the_jackpot(capsys):
    # Seed rule 2: "Any player who sets their hand incorrectly (e.g., the ... low blackjack hand
    # ranks higher than the ... high blackjack hand ...) is an automatic losing hand."
    # Seat 1 holds four aces but sets HIGH Ac Ad (12) below LOW Ah As 5c (17): its ante loses to
    # the dealer's ten high and the jackpot goes to seat 2's pair of kings.
    rec = play(capsys, {1: ACES, 2: KINGS, 8: DEALER_TEN}, *bets(1, 2, jackpot=10),
               "--option", "foul_setting=lose", "--decision", "1:set:Ac Ad|Ah As 5c")
    s1 = seat(rec, 1)
    assert s1["foul"] is True and s1["house_way"] is False and s1["poker"] == "Four of a Kind, Aces"
    assert results(rec, 1) == {"ante": ("lose", -10), "jackpot": ("lose", -10),
                               "high": ("lose", -20), "low": ("lose", -10)}
    assert results(rec, 2) == {"ante": ("win", 10), "jackpot": ("win", 9),
                               "high": ("push", 0), "low": ("win", 10)}
    pool = rec["jackpot"]
    assert pool["pot"] == 20 and pool["stakes"] == {"1": 10, "2": 10, "dealer": 0}
    assert pool["contestants"] == [2, "dealer"] and pool["winners"] == [2]
    assert pool["shares"] == {"2": 19} and pool["commission"] == 1 and pool["remainder"] == 0
    assert rec["net"] == -50 + 29 and rec["house_net"] == 21


def test_rule_2_foul_with_refuse_is_a_clear_error(capsys):
    line = egm_error(capsys, *round_args(8, {1: ACES, 8: DEALER_TEN}), *bets(1),
                     "--decision", "1:set:Ac Ad|Ah As 5c")
    assert "seat 1: HIGH Ac Ad (12) ranks below LOW Ah As 5c (17)" in line
    assert "rules step 4, patent rule 2" in line


def test_foul_refusal_names_two_card_21_and_bust_ranks(capsys):
    # A three-card 21 ranks below a two-card 21, so HIGH 7 7 7 | LOW A K is foul too.
    line = egm_error(capsys, *round_args(8, {1: "7c 7h 7d As Kd", 8: DEALER_TEN}), *bets(1),
                     "--decision", "1:set:7c 7h 7d|As Kd")
    assert "HIGH 7c 7h 7d (21) ranks below LOW As Kd (21 in two cards)" in line


def test_a_bust_low_under_a_live_high_is_legal_not_foul(capsys):
    # HIGH Kc Kh (20) over LOW 9s 8h 7c (24, bust): a live HIGH ranks above a bust LOW, so the split
    # is legal under refuse; the bust LOW loses (rule 5).
    rec = play(capsys, {1: "Kc Kh 9s 8h 7c", 8: DEALER_TEN}, *bets(1), "--decision", "1:set:Kc Kh|9s 8h 7c")
    assert seat(rec, 1)["foul"] is False
    assert results(rec, 1) == {"ante": ("win", 10), "high": ("push", 0), "low": ("lose", -10)}


def _begin(hands: dict[int, str], option_table: dict | None = None, die: int = 8,
           bets_per_seat: dict | None = None) -> RoundKernel:
    game = get_game(GAME)
    options = make_options(GAME, option_table or {})
    kernel = RoundKernel(game, options)
    table = {s: dict(bets_per_seat or {"ante": 10, "low": 10, "high": 20}) for s in hands if s != 8}
    kernel.begin(table, StackedSource(parse_cards(stack(die, hands))), dice=(die,))
    return kernel


def _actions(kernel: RoundKernel, number: int) -> tuple[str, ...]:
    return next(r.actions for r in kernel.pending() if r.seat == number)


def test_with_refuse_the_request_lists_only_legal_splits():
    kernel = _begin({1: ACES, 8: DEALER_TEN})
    request = kernel.pending()[0]
    assert (request.seat, request.kind, request.default) == (1, "set_hand", "house-way")
    legal = [s for s in splits(parse_cards(ACES)) if not s.foul]
    assert len(request.actions) == len(legal) + 1 and request.actions[-1] == "house-way"
    assert "set:Ac Ad|Ah As 5c" not in request.actions
    assert "set:Ah As 5c|Ac Ad" in request.actions
    # With lose: all 20 splits (rule 4's shapes), foul ones included.
    kernel = _begin({1: ACES, 8: DEALER_TEN}, {"foul_setting": "lose"})
    actions = _actions(kernel, 1)
    assert len(actions) == 21 and "set:Ac Ad|Ah As 5c" in actions


@pytest.mark.parametrize("foul_setting", ["refuse", "lose"])
def test_every_listed_action_is_accepted_and_only_lose_lets_a_hand_be_foul(foul_setting):
    hands = {1: ACES, 8: DEALER_TEN}
    fouls = 0
    for action in _actions(_begin(hands, {"foul_setting": foul_setting}), 1):
        kernel = _begin(hands, {"foul_setting": foul_setting})
        assert kernel.decide(1, action) == []
        s1 = kernel.record()["seats"][0]
        if action != "house-way":
            assert action == f"set:{' '.join(s1['high'])}|{' '.join(s1['low'])}"
        fouls += s1["foul"]
    # Four aces and a five: 10 of the 20 splits rank HIGH below LOW: the six A A | A A 5 (12 | 17)
    # and the four A A A | A 5 (13 | 16).
    assert fouls == (10 if foul_setting == "lose" else 0)


# --- rule 4: all five cards, two or three in each hand -------------------------------------------
def test_rule_4_every_offered_split_uses_all_five_cards_two_or_three_a_hand():
    # Seed rule 4: "All five cards must be played in form the low and high blackjack hands with a
    # minimum of two cards and a maximum of three cards in both".
    kernel = _begin({1: KINGS, 8: DEALER_TEN}, {"foul_setting": "lose"})
    shapes = set()
    for action in _actions(kernel, 1)[:-1]:
        high, low = (parse_cards(part) for part in action.removeprefix("set:").split("|"))
        assert sorted(high + low) == sorted(parse_cards(KINGS))
        shapes.add((len(high), len(low)))
    assert shapes == {(2, 3), (3, 2)}


@pytest.mark.parametrize(
    ("decisions", "needle"),
    [
        # Rule 4 (and rule 2's "more than three cards"): a 4-card HIGH hand is refused.
        ("1:set:Kc Kh 9s 5d|3c", "seat 1: a HIGH hand of 4 and a LOW hand of 1 cards"),
        ("1:set:Kc|Kh 9s 5d 3c", "seat 1: a HIGH hand of 1 and a LOW hand of 4 cards"),
        ("1:set:Kc Kh|9s 5d", "a HIGH hand of 2 and a LOW hand of 2 cards"),       # a card left out
        ("1:set:Kc Kh|9s 5d 3d", "seat 1 does not hold 3d; its cards are Kc Kh 9s 5d 3c"),
        ("1:set:Kc Kc|9s 5d 3c", "seat 1: Kc is named twice"),
        ("1:set:Kc Kh 9s|5d 3c 9s", "seat 1: 9s is named twice"),
        ("1:set:9s 5d 3c|Kc Kh", "HIGH 9s 5d 3c (17) ranks below LOW Kc Kh (20)"),
        ("1:set:Kc Kh 9s 5d 3c", "a setting is set:HIGH|LOW with one '|'"),
        ("1:set:Kc Kh|9s|5d 3c", "a setting is set:HIGH|LOW with one '|'"),
        ("1:set:Kc Xh|9s 5d 3c", "bad card 'Xh'"),
        ("1:stand", "unknown action 'stand'"),
        (("1:house-way", "3:house-way"), "decision(s) not asked for: {3: ['house-way']}"),
        (("1:house-way", "1:set:Kc Kh|9s 5d 3c"), "decision(s) not asked for: {1: "),   # twice
    ],
)
def test_illegal_decisions_are_one_clear_line(capsys, decisions, needle):
    if isinstance(decisions, str):
        decisions = (decisions,)
    args = [arg for d in decisions for arg in ("--decision", d)]
    line = egm_error(capsys, *round_args(8, {1: KINGS, 8: DEALER_TEN}), *bets(1), *args)
    assert needle in line, line


def test_an_illegal_decision_changes_nothing():
    kernel = _begin({1: KINGS, 2: ACES, 8: DEALER_TEN})
    before = kernel.pending()
    for seat_no, action in [(1, "set:Kc Kh 9s 5d|3c"), (1, "set:Kc Kh|9s 5d 3d"),
                            (1, "set:Kc Kc|9s 5d 3c"), (1, "set:9s 5d 3c|Kc Kh"),
                            (2, "set:Ac Ad|Ah As 5c"), (1, "stand")]:
        with pytest.raises(DecisionError):
            kernel.decide(seat_no, action)
        assert kernel.pending() == before and kernel.decisions == []
        assert all(s.hand.split is None for s in kernel.round.seats)
    # The seat still has its decision and a legal answer completes the round.
    kernel.decide(2, "set:Ah As 5c|Ac Ad")
    kernel.decide(1, "set:Kc Kh|9s 5d 3c")
    rec = kernel.record()
    assert rec["decisions"] == [{"seat": 2, "action": "set:Ah As 5c|Ac Ad"},
                                {"seat": 1, "action": "set:Kc Kh|9s 5d 3c"}]
    assert seat(rec, 2)["high"] == ["Ah", "As", "5c"] and seat(rec, 2)["foul"] is False


def test_deciding_twice_and_deciding_for_a_seat_without_a_decision_are_refused():
    kernel = _begin({1: KINGS, 2: ACES, 8: DEALER_TEN})
    kernel.decide(1, "house-way")
    with pytest.raises(DecisionError, match="seat 1 has no decision to make"):
        kernel.decide(1, "set:Kc Kh|9s 5d 3c")
    with pytest.raises(DecisionError, match="seat 3 has no decision to make"):
        kernel.decide(3, "house-way")
    assert [r.seat for r in kernel.pending()] == [2] and kernel.decisions == [(1, "house-way")]
    # The game itself refuses a second setting, should anything call it directly.
    game, state = kernel.game, kernel.round
    with pytest.raises(DecisionError, match="seat 1 has already set its hand"):
        game.decide(state, 1, "set:Kc Kh|9s 5d 3c")
    with pytest.raises(DecisionError, match="seat 5 has no hand to set"):
        game.decide(state, 5, "house-way")
    assert seat(_complete(kernel), 1)["house_way"] is True


def _complete(kernel: RoundKernel) -> dict:
    kernel.time_out()
    return kernel.record()


def test_the_player_banker_has_no_decision_to_make():
    kernel = _begin({1: DEALER_TEN, 2: KINGS}, {"banking": "player"})      # die 8: seat 1 banks
    assert [r.seat for r in kernel.pending()] == [2]
    with pytest.raises(DecisionError, match="seat 1 has no decision to make"):
        kernel.decide(1, "house-way")
    with pytest.raises(DecisionError, match="seat 1 has no hand to set"):
        kernel.game.decide(kernel.round, 1, "house-way")


def test_time_out_sets_the_hand_by_the_house_way_and_the_record_marks_it():
    kernel = _begin({1: KINGS, 2: ACES, 8: DEALER_TEN})
    kernel.decide(1, "set:Kc 9s|Kh 5d 3c")
    assert kernel.time_out() == [(2, "house-way")]
    rec = kernel.record()
    assert rec["decisions"] == [{"seat": 1, "action": "set:Kc 9s|Kh 5d 3c"},
                                {"seat": 2, "action": "house-way", "timed_out": True}]
    assert seat(rec, 1)["house_way"] is False and seat(rec, 1)["high"] == ["Kc", "9s"]
    # House way for Ac Ad Ah As 5c: nothing busts; the best legal HIGH is A A 5 (17, over LOW A A
    # = 12), the lowest positions of the six equal ones being Ac Ad 5c.
    assert seat(rec, 2)["house_way"] is True
    assert (seat(rec, 2)["high"], seat(rec, 2)["low"]) == (["Ac", "Ad", "5c"], ["Ah", "As"])
    assert replay(rec) == rec


# --- bad wagers and options ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (wagers("1:ante=10", "1:low=10", "1:high=15"), "seat 1: high must be 2 x low (20), not 15"),
        (wagers("1:ante=10", "1:low=10", "1:high=10") + ["--option", "high_multiple=3"],
         "high must be 3 x low (30), not 10"),
        (wagers("1:ante=10", "1:low=10"), "ante, low and high are mandatory; missing high"),
        (wagers("1:low=10", "1:high=20", "1:jackpot=5"), "mandatory; missing ante"),
        (wagers("1:jackpot=5"), "missing ante, high, low"),
        (wagers("1:ante=10", "1:low=10", "1:high=20", "1:bank=10"), "bank is not a wager to place"),
        (wagers("1:ante=10", "1:low=10", "1:high=20", "1:tie=5"), "unknown wager 'tie'"),
        (wagers("1:ante=10", "1:low=10", "1:high=20", "1:jackpot=5")
         + ["--option", "jackpot.enabled=false"], "offers no wager 'jackpot'"),
        (wagers("1:ante=10", "1:low=10", "1:high=20") + ["--option", "banking=player"],
         "banking = player needs at least two seats"),
        (wagers("1:ante=10", "1:low=10", "1:high=20") + ["--option", "foul_setting=warn"],
         "foul_setting"),
        (wagers("1:ante=10", "1:low=10", "1:high=20") + ["--option", "betting_rounds=true"],
         "live multi-player tables only"),
        (wagers("1:ante=10", "1:low=10", "1:high=20") + ["--option", "high_pays=0:1"],
         "a win pays more than 0:1"),
    ],
)
def test_bad_wagers_and_options_are_one_clear_line(capsys, args, needle):
    line = egm_error(capsys, *args, "--seed", "1")
    assert needle in line, line


def test_high_multiple_zero_lets_high_be_any_amount(capsys):
    rec = play(capsys, {1: KINGS, 8: DEALER_TEN}, *bets(1, low=10, high=15),
               "--option", "high_multiple=0")
    assert seat(rec, 1)["wagers"] == {"ante": 10, "low": 10, "high": 15}
    assert results(rec, 1) == {"ante": ("win", 10), "high": ("push", 0), "low": ("win", 10)}


# --- the jackpot ---------------------------------------------------------------------------------
def test_jackpot_single_winner_less_commission(capsys):
    rec = play(capsys, {1: KINGS, 2: QUEENS, 8: DEALER_TEN}, *bets(1, 2, jackpot=20))
    pool = rec["jackpot"]
    assert pool["pot"] == 40 and pool["contestants"] == [1, 2, "dealer"]
    assert pool["best"] == "Pair of Kings" and pool["winners"] == [1]
    assert pool["commission"] == 2 and pool["shares"] == {"1": 38} and pool["remainder"] == 0
    assert outcome(rec, 1, "jackpot") == ("win", 18) and outcome(rec, 2, "jackpot") == ("lose", -20)
    assert rec["net"] + rec["house_net"] == 0


def test_jackpot_equal_best_hands_share_pro_rata_after_commission_with_floors(capsys):
    # Pot 7 + 3 + 5 = 15; commission 15 - floor(14.25) = 1; 14 shared 7:3 between the two equal
    # pairs of kings: floor(9.8) = 9 and floor(4.2) = 4; the 1 credit the floors leave is the house's.
    rec = play(capsys, {1: KINGS, 2: KINGS_TOO, 3: QUEENS, 8: DEALER_TEN},
               *bets(1, 2, 3), *wagers("1:jackpot=7", "2:jackpot=3", "3:jackpot=5"))
    pool = rec["jackpot"]
    assert pool["pot"] == 15 and pool["winners"] == [1, 2]
    assert pool["commission"] == 1 and pool["shares"] == {"1": 9, "2": 4} and pool["remainder"] == 1
    assert outcome(rec, 1, "jackpot") == ("win", 2)
    assert outcome(rec, 2, "jackpot") == ("win", 1)
    assert outcome(rec, 3, "jackpot") == ("lose", -5)
    # The bank: both pairs of kings win ante and LOW and push HIGH (+20 each); the queens set
    # HIGH Qs 7c 4s (21) and LOW Qd 6s (16) and win all three (+40). The pool gives the house 1 + 1.
    assert results(rec, 3) == {"ante": ("win", 10), "jackpot": ("lose", -5), "high": ("win", 20),
                               "low": ("win", 10)}
    assert rec["house_net"] == -80 + 2 and rec["net"] == 80 + 2 + 1 - 5


def test_jackpot_the_house_hand_best_keeps_the_pot_and_its_ante(capsys):
    rec = play(capsys, {1: KINGS, 8: "Ah Ad 9h 5c 2d"}, *bets(1, jackpot=10),
               "--option", "jackpot.house_ante=5")
    pool = rec["jackpot"]
    assert pool["pot"] == 15 and pool["house_ante"] == 5 and pool["stakes"] == {"1": 10, "dealer": 5}
    assert pool["best"] == "Pair of Aces" and pool["winners"] == ["dealer"]
    assert pool["shares"] == {"dealer": 15} and pool["commission"] == 0 and pool["remainder"] == 0
    assert outcome(rec, 1, "jackpot") == ("lose", -10)
    assert rec["net"] + rec["house_net"] == 0


@pytest.mark.parametrize(
    ("house_ante", "shares", "commission", "remainder", "seat_net"),
    [
        # No house ante: the house's hand ties but staked nothing, so its share is 0.
        (0, {"1": 9, "dealer": 0}, 1, 0, -1),
        # House ante 10: pot 20, 19 payable, shared 10:10 -> 9 and 9, 1 left by the floors.
        (10, {"1": 9, "dealer": 9}, 1, 1, -1),
    ],
)
def test_jackpot_a_seat_tying_the_house_hand_shares_by_stakes(capsys, house_ante, shares, commission,
                                                              remainder, seat_net):
    rec = play(capsys, {1: KINGS, 8: KINGS_TOO}, *bets(1, jackpot=10),
               "--option", f"jackpot.house_ante={house_ante}")
    pool = rec["jackpot"]
    assert pool["winners"] == [1, "dealer"]
    assert (pool["shares"], pool["commission"], pool["remainder"]) == (shares, commission, remainder)
    assert outcome(rec, 1, "jackpot") == ("win", seat_net)
    assert results(rec, 1)["ante"] == ("push", 0)
    assert rec["net"] + rec["house_net"] == 0


def test_jackpot_nobody_contests_the_house_keeps_the_pot(capsys):
    # Player banking: the house has no hand. Seat 2, the only JACKPOT bettor, fouls (lose): nobody
    # may win the pot of 10 + house ante 4, so the house keeps it (+10 for the house).
    rec = play(capsys, {1: DEALER_TEN, 2: ACES}, *bets(1, 2), *wagers("2:jackpot=10"),
               "--option", "banking=player", "--option", "foul_setting=lose",
               "--option", "jackpot.house_ante=4", "--decision", "2:set:Ac Ad|Ah As 5c")
    pool = rec["jackpot"]
    assert rec["banker"] == 1
    assert pool["pot"] == 14 and pool["stakes"] == {"2": 10} and pool["contestants"] == []
    assert pool["winners"] == [] and pool["best"] is None and pool["shares"] == {}
    assert pool["remainder"] == 14 and pool["commission"] == 0
    assert results(rec, 2) == {"ante": ("lose", -10), "jackpot": ("lose", -10),
                               "high": ("lose", -20), "low": ("lose", -10)}
    assert results(rec, 1) == {"ante": ("void", 0), "high": ("void", 0), "low": ("void", 0),
                               "bank": ("win", 40)}
    assert rec["house_net"] == 10 and rec["net"] == -10


def test_jackpot_disabled_offers_no_pool(capsys):
    rec = play(capsys, {1: KINGS, 8: DEALER_TEN}, *bets(1), "--option", "jackpot.enabled=false")
    assert rec["jackpot"] == {"pot": 0, "house_ante": 0, "stakes": {}, "contestants": [], "best": None,
                              "winners": [], "shares": {}, "commission": 0, "remainder": 0}


# --- player banking ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("die", "banker"),
    [(2, 2), (5, 5), (3, 5), (4, 5), (6, 2), (7, 2), (8, 2), (1, 2)],
)
def test_player_banker_is_the_die_position_or_the_next_playing_seat_clockwise(capsys, die, banker):
    rec = egm_round(capsys, GAME, *bets(2, 5), "--option", "banking=player", "--seed", "7",
                    "--dice", str(die))
    other = 5 if banker == 2 else 2
    assert rec["banker"] == banker and rec["dealer"]["seat"] == banker
    assert rec["dealer_position"] == banker and rec["first_position"] == die % 8 + 1
    assert 8 in rec["empty_positions"]
    assert seat(rec, banker)["banker"] is True and seat(rec, other)["banker"] is False
    assert rec["dealer"]["cards"] == seat(rec, banker)["cards"]
    assert rec["decisions"] == [{"seat": other, "action": "house-way"}]
    r_bank, r_other = results(rec, banker), results(rec, other)
    assert [r_bank[k] for k in ("ante", "high", "low")] == [("void", 0)] * 3
    assert list(r_bank) == ["ante", "high", "low", "bank"]
    assert r_bank["bank"][1] == -sum(net for _, net in r_other.values())
    assert rec["house_net"] == 0 and rec["net"] == 0


def test_player_banking_stacked_round(capsys):
    # Die 3: seat 5 banks (positions 3 and 4 are free); dealing runs 4, 5, 6, 7, 8, 1, 2, 3.
    rec = play(capsys, {2: KINGS, 5: DEALER_TEN}, *bets(2, 5), *wagers("5:jackpot=10", "2:jackpot=10"),
               "--option", "banking=player", die=3)
    assert rec["banker"] == 5 and rec["dealing_order"] == [4, 5, 6, 7, 8, 1, 2, 3]
    assert rec["dealer"]["high"] == ["Ts", "8d", "2s"] and seat(rec, 5)["house_way"] is True
    assert results(rec, 2) == {"ante": ("win", 10), "jackpot": ("win", 9), "high": ("push", 0),
                               "low": ("win", 10)}
    # The banker's own jackpot wager contests like any seat's; the house has no hand in the pool.
    assert results(rec, 5) == {"ante": ("void", 0), "jackpot": ("lose", -10), "high": ("void", 0),
                               "low": ("void", 0), "bank": ("lose", -20)}
    assert rec["jackpot"]["contestants"] == [2, 5] and rec["jackpot"]["winners"] == [2]
    assert rec["house_net"] == 1 and rec["net"] == -1


# --- properties ----------------------------------------------------------------------------------
@st.composite
def split21_round(draw):
    banking = draw(st.sampled_from(["house", "player"]))
    multiple = draw(st.sampled_from([0, 2, 3]))
    options = {
        "banking": banking,
        "foul_setting": draw(st.sampled_from(["refuse", "lose"])),
        "high_multiple": multiple,
        "high_pays": draw(st.sampled_from(["1:1", "3:2", "6:5"])),
        "low_pays": draw(st.sampled_from(["1:1", "2:1", "7:5"])),
        "jackpot": {"commission": draw(st.sampled_from(["0", "5", "2.5", "33"])),
                    "house_ante": draw(st.integers(0, 9))},
    }
    seats = draw(st.lists(st.integers(1, 7), min_size=2 if banking == "player" else 1, max_size=7,
                          unique=True))
    amount = st.integers(1, 40)
    table = {}
    for s in seats:
        low = draw(amount)
        bets_ = {"ante": draw(amount), "low": low, "high": multiple * low if multiple else draw(amount)}
        if draw(st.booleans()):
            bets_["jackpot"] = draw(amount)
        table[s] = bets_
    return options, table, draw(st.integers(0, 2**32)), draw(st.integers(1, 8))


@settings(max_examples=120, deadline=None)
@given(split21_round(), st.randoms(use_true_random=False))
def test_credits_conserved_and_every_record_replays(case, chooser):
    option_table, table, seed, die = case
    game = get_game(GAME)
    options = make_options(GAME, option_table)
    kernel = RoundKernel(game, options)
    source = RngShoe(RngService.seeded(seed), game.shoe(options))
    settlement = kernel.play(table, source, dice=(die,),
                             decider=lambda request: chooser.choice(request.actions))
    assert settlement.players_net + settlement.house_net == 0
    rec = kernel.record()
    assert rec["net"] + rec["house_net"] == 0
    pool = rec["jackpot"]
    pool_gain = pool["commission"] + pool["remainder"] + pool["shares"].get("dealer", 0) - pool["house_ante"]
    jackpot_nets = sum(s["results"]["jackpot"]["net"] for s in rec["seats"] if "jackpot" in s["results"])
    assert pool_gain == -jackpot_nets
    banked = sum(r["net"] for s in rec["seats"] for k, r in s["results"].items() if k in ("ante", "high", "low"))
    if options.banking == "player":
        # The banker's result balances the others' ante, high and low; the house only runs the pool.
        bank = seat(rec, rec["banker"])["results"]["bank"]["net"]
        assert bank == -banked and rec["house_net"] == pool_gain
        assert set(seat(rec, rec["banker"])["results"]) == set(table[rec["banker"]]) | {"bank"}
    else:
        assert rec["house_net"] == -banked + pool_gain
    for s in rec["seats"]:
        if s["seat"] != rec["banker"]:
            assert set(s["results"]) == set(s["wagers"])
        if options.foul_setting == "refuse":
            assert s["foul"] is False
        if s["foul"]:
            assert all(s["results"][k]["outcome"] == "lose" for k in ("ante", "high", "low"))
            assert s["seat"] not in pool["winners"]
    assert replay(rec) == rec
    assert json.loads(json.dumps(rec)) == rec
