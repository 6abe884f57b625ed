"""Three Card Poker through ``egm round --cards``: every outcome kind, the 4-card dealer, the SIX
CARD bonus, player banking with commission, hints, time-out, and clear errors.

Dealing order (rules/three-card-poker.md): one card to each seat that placed a wager (ascending)
then the dealer, three times; with ``dealer_cards = 4`` the dealer's fourth card comes last. The
banker seat of ``banking = player`` gets no cards. :func:`deal` stacks hands in that order.
"""

from __future__ import annotations

import json

import pytest

from firmware.cards.card import parse_cards
from firmware.cards.source import StackedSource
from firmware.cli import main
from firmware.games.errors import DecisionError
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel, replay
from tests.games.helpers import egm_fails, egm_round, outcome, seat, wagers

GAME = "three-card-poker"


def deal(*hands: str, dealer: str) -> list[str]:
    """``--cards`` for the seats' hands (ascending seat order) and the dealer's 3 or 4 cards."""
    seats = [h.split() for h in hands]
    d = dealer.split()
    order = []
    for i in range(3):
        order += [h[i] for h in seats] + [d[i]]
    return ["--cards", " ".join(order + d[3:])]


def opt(*pairs: str) -> list[str]:
    out: list[str] = []
    for p in pairs:
        out += ["--option", p]
    return out


def play_round(capsys, *args: str) -> dict:
    rec = egm_round(capsys, GAME, *args)
    assert rec["net"] + rec["house_net"] == 0
    assert replay(rec) == rec
    return rec


def fails(capsys, *args: str) -> str:
    """``egm round`` must exit non-zero with one clear line on stderr; return it."""
    return egm_fails(capsys, "round", GAME, "--json", *args)


# --- fold, the Q-6-4 strategy and the decision record ----------------------------------------------
def test_fold_loses_the_ante_and_places_no_play(capsys):
    rec = play_round(capsys, *wagers("1:ante=10", "1:pair_plus=5"),
                     *deal("Js Td 8c", dealer="2c 5d 9h"))
    s1 = seat(rec, 1)
    assert s1["decision"] == "fold" and s1["showdown"] == "fold"     # J-T-8 is below Q-6-4
    assert outcome(rec, 1, "ante") == ("fold", -10)
    assert outcome(rec, 1, "pair_plus") == ("lose", -5)
    assert "play" not in s1["results"] and s1["stakes"] == {"ante": 10, "pair_plus": 5}
    assert s1["wagers"] == {"ante": 10, "pair_plus": 5}
    assert rec["decisions"] == [{"seat": 1, "action": "fold"}]
    assert rec["net"] == -15 and rec["house_net"] == 15


@pytest.mark.parametrize(
    ("hand", "decision", "ante", "play"),
    [
        ("Qs 6d 4c", "play", ("lose", -10), ("lose", -10)),   # Q-6-4 exactly: plays
        ("Qs 6d 3c", "fold", ("fold", -10), None),            # just below: folds
        ("Qs 7d 2c", "play", ("lose", -10), ("lose", -10)),
    ],
)
def test_automatic_play_is_the_q64_strategy(capsys, hand, decision, ante, play):
    rec = play_round(capsys, *wagers("1:ante=10"), *deal(hand, dealer="Kh 8d 2s"))
    assert seat(rec, 1)["decision"] == decision
    assert outcome(rec, 1, "ante") == ante
    if play is None:
        assert "play" not in seat(rec, 1)["results"]
    else:
        assert outcome(rec, 1, "play") == play
        assert seat(rec, 1)["stakes"]["play"] == 10                   # PLAY = ANTE


def test_a_seat_may_fold_a_hand_the_strategy_would_play_and_play_one_it_would_fold(capsys):
    rec = play_round(capsys, *wagers("1:ante=10", "2:ante=10"), "--decision", "1:fold",
                     "--decision", "2:play", *deal("Ks Kd 4c", "Js Td 8c", dealer="2c 5d 9h"))
    assert outcome(rec, 1, "ante") == ("fold", -10)
    # Seat 2 plays J-T-8 against the unqualified 9-5-2: ANTE 1:1, PLAY pushes.
    assert outcome(rec, 2, "ante") == ("win", 10) and outcome(rec, 2, "play") == ("push", 0)


# --- against the dealer -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hand", "dealer", "showdown", "ante", "play"),
    [
        ("Ks Kd 4c", "4h 4s 9d", "win", ("win", 10), ("win", 10)),
        ("Qs 9d 2c", "Ks 7h 3c", "lose", ("lose", -10), ("lose", -10)),
        ("As Kd 7c", "Ah Ks 7d", "push", ("push", 0), ("push", 0)),     # equal hands push both
    ],
)
def test_qualified_dealer_win_lose_push(capsys, hand, dealer, showdown, ante, play):
    rec = play_round(capsys, *wagers("1:ante=10"), *deal(hand, dealer=dealer))
    assert rec["dealer"]["qualified"] is True
    assert seat(rec, 1)["showdown"] == showdown
    assert outcome(rec, 1, "ante") == ante and outcome(rec, 1, "play") == play


@pytest.mark.parametrize(
    ("mode", "ante", "play"),
    [("ante_wins", ("win", 10), ("push", 0)), ("both_push", ("push", 0), ("push", 0))],
)
def test_dealer_not_qualified_in_both_modes(capsys, mode, ante, play):
    """Seed col. 4 / col. 6: "the second bet pays 1:1 and the third bet is returned when the dealer
    does not qualify"; alternatively "all bets made against the dealer are a push"."""
    rec = play_round(capsys, *wagers("1:ante=10"), *opt(f"not_qualified={mode}"),
                     *deal("Ah 7c 3d", dealer="Jc 9d 4h"))
    assert rec["dealer"] == {"cards": ["Jc", "9d", "4h"], "hand": "High Card, Jack",
                             "score": "High Card, Jack", "qualified": False}
    assert seat(rec, 1)["showdown"] == "not_qualified"
    assert outcome(rec, 1, "ante") == ante and outcome(rec, 1, "play") == play


@pytest.mark.parametrize(
    ("rule", "qualified"),
    [("Q", True), ("Q-5-2", True), ("Q-6-4", False), ("K", False), ("pair", False), ("none", True)],
)
def test_dealer_qualifies_option(capsys, rule, qualified):
    rec = play_round(capsys, *wagers("1:ante=10"), *opt(f"dealer_qualifies={rule}"),
                     *deal("Ah 7c 3d", dealer="Qh 5c 2d"))
    assert rec["dealer"]["qualified"] is qualified
    assert outcome(rec, 1, "ante") == ("win", 10)
    assert outcome(rec, 1, "play") == (("win", 10) if qualified else ("push", 0))


# --- ante bonus ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hand", "dealer", "options", "ante", "play", "bonus"),
    [
        # straight flush beats a pair: 1:1 + 5:1 on the ante
        ("9h Th Jh", "Ks Kd 2c", (), ("win", 60), ("win", 10), 5),
        ("7s 7d 7c", "Ks Kd 2c", (), ("win", 50), ("win", 10), 4),
        # a straight loses to trips: the ante's loss and its 1:1 bonus cancel
        ("4s 5d 6c", "8s 8d 8c", (), ("push", 0), ("lose", -10), 1),
        # the bonus is paid whatever the dealer holds, also when every bet against it pushes
        ("4s 5d 6c", "Js 9d 3h", ("not_qualified=both_push",), ("win", 10), ("push", 0), 1),
        # the seed's col. 4 example table 5/3/1 as configuration
        ("7s 7d 7c", "Ks Kd 2c", ("ante_bonus_pays=5,3,1",), ("win", 40), ("win", 10), 3),
        ("Ks Kd 4c", "4h 4s 9d", (), ("win", 10), ("win", 10), 0),
    ],
)
def test_ante_bonus(capsys, hand, dealer, options, ante, play, bonus):
    rec = play_round(capsys, *wagers("1:ante=10"), *opt(*options), *deal(hand, dealer=dealer))
    assert outcome(rec, 1, "ante") == ante and outcome(rec, 1, "play") == play
    assert seat(rec, 1)["ante_bonus"] == {"pays": bonus, "net": 10 * bonus}


def test_no_ante_bonus_on_a_folded_straight(capsys):
    rec = play_round(capsys, *wagers("1:ante=10"), "--decision", "1:fold",
                     *deal("4s 5d 6c", dealer="Js 9d 3h"))
    assert outcome(rec, 1, "ante") == ("fold", -10) and "ante_bonus" not in seat(rec, 1)


# --- pair plus ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hand", "name", "net", "net_63"),
    [
        ("2h 3h 4h", "Straight Flush, Four high", 400, 400),
        ("5s 5d 5h", "Three of a Kind, Fives", 300, 300),
        ("Ts Jd Qc", "Straight, Queen high", 60, 60),
        ("2d 7d Kd", "Flush, King high", 40, 30),
        ("8s 8c 3d", "Pair of Eights", 10, 10),
        ("As Jd 9c", "High Card, Ace", -10, -10),
    ],
)
def test_pair_plus_each_line_of_the_pay_table(capsys, hand, name, net, net_63):
    """Default 40/30/6/4/1 (seed col. 3 table and col. 7 scale); 40/30/6/3/1 as configuration."""
    cards = deal(hand, dealer="9h 6c Kc")
    rec = play_round(capsys, *wagers("1:pair_plus=10"), "--option", "mandatory=none", *cards)
    s1 = seat(rec, 1)
    assert s1["hand"] == name and s1["decision"] is None and rec["decisions"] == []
    assert outcome(rec, 1, "pair_plus") == (("win", net) if net > 0 else ("lose", net))
    alt = play_round(capsys, *wagers("1:pair_plus=10"), *opt("mandatory=none", "pair_plus_pays=40,30,6,3,1"),
                     *cards)
    assert outcome(alt, 1, "pair_plus")[1] == net_63


def test_pair_plus_is_paid_even_when_the_seat_folds(capsys):
    rec = play_round(capsys, *wagers("1:ante=10", "1:pair_plus=10"), "--decision", "1:fold",
                     *deal("2d 7d Kd", dealer="Ah Ad 3c"))
    assert outcome(rec, 1, "ante") == ("fold", -10)
    assert outcome(rec, 1, "pair_plus") == ("win", 40)
    assert rec["net"] == 30


# --- six card bonus -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hand", "dealer", "five", "name", "net"),
    [
        ("As Ks Qs", "Js Ts 2d", "As Ks Qs Js Ts", "Royal Flush", 5000),
        ("5h 6h 7h", "8h 9h Kc", "5h 6h 7h 8h 9h", "Straight Flush, Nine high", 1000),
        ("9h 9d 9s", "9c 4d 7h", "9h 9d 9s 9c 7h", "Four of a Kind, Nines", 500),
        ("9h 9d 4s", "9c 4d 7h", "9h 9d 4s 9c 4d", "Full House, Nines over Fours", 100),
        ("2c 7c Jc", "Qc 3c Kd", "2c 7c Jc Qc 3c", "Flush, Queen high", 75),
        ("2c 3d 4h", "5s 6d Kd", "2c 3d 4h 5s 6d", "Straight, Six high", 50),
        ("Jc Jd 4h", "Js 6d Kd", "Jc Jd Js 6d Kd", "Three of a Kind, Jacks", 35),
        ("Jc Jd 4h", "2s 6d Kd", "Jc Jd 4h 6d Kd", "Pair of Jacks", -5),
    ],
)
def test_six_card_bonus(capsys, hand, dealer, five, name, net):
    rec = play_round(capsys, *wagers("1:ante=10", "1:six_card=5"), *opt("six_card=true"),
                     *deal(hand, dealer=dealer))
    s1 = seat(rec, 1)
    assert s1["six_card_hand"]["hand"] == name
    assert sorted(s1["six_card_hand"]["cards"]) == sorted(five.split())
    assert outcome(rec, 1, "six_card") == (("win", net) if net > 0 else ("lose", net))


def test_six_card_uses_the_dealers_first_three_cards_and_settles_after_a_fold(capsys):
    # With a fourth dealer card Th the seven cards would hold a royal flush; the SIX CARD hand is
    # the seat's three and the dealer's first three only: A-K-Q-J-3, no pay. The seat folds A-K-Q
    # by choice and its six_card is settled all the same.
    rec = play_round(capsys, *wagers("1:ante=10", "1:six_card=5"), "--decision", "1:fold",
                     *opt("six_card=true", "dealer_cards=4"), *deal("Ah Kh Qh", dealer="Jh 2c 3d Th"))
    assert seat(rec, 1)["six_card_hand"]["hand"] == "High Card, Ace"
    assert outcome(rec, 1, "six_card") == ("lose", -5)
    assert outcome(rec, 1, "ante") == ("fold", -10)
    assert rec["dealer"]["cards"] == ["Jh", "2c", "3d", "Th"]
    assert rec["dealer"]["best3"] == ["Jh", "3d", "Th"] and rec["dealer"]["qualified"] is False


def test_six_card_custom_table(capsys):
    rec = play_round(capsys, *wagers("1:ante=10", "1:six_card=5"),
                     *opt("six_card=true", "six_card_pays=500,100,50,20,15,10,5"),
                     *deal("Jc Jd 4h", dealer="Js 6d Kd"))
    assert outcome(rec, 1, "six_card") == ("win", 25)


# --- four dealer cards --------------------------------------------------------------------------
def test_four_dealer_cards_best_three_and_the_dealing_order(capsys):
    """Seed col. 3-4: "dealing one or more extra cards to the dealer, and allowing the dealer to
    use his or her best three card combination". The fourth card comes after the third round."""
    rec = play_round(capsys, *wagers("1:ante=10", "2:ante=10"), *opt("dealer_cards=4"),
                     *deal("Ks Jd 4c", "As Ad 2h", dealer="Qc 2d 3h Qs"))
    assert rec["cards_dealt"] == ["Ks", "As", "Qc", "Jd", "Ad", "2d", "4c", "2h", "3h", "Qs"]
    assert rec["dealer"]["cards"] == ["Qc", "2d", "3h", "Qs"]
    assert rec["dealer"]["best3"] == ["Qc", "3h", "Qs"] and rec["dealer"]["hand"] == "Pair of Queens"
    assert outcome(rec, 1, "ante") == ("lose", -10) and outcome(rec, 1, "play") == ("lose", -10)
    assert outcome(rec, 2, "ante") == ("win", 10) and outcome(rec, 2, "play") == ("win", 10)
    # The same three cards without the fourth: Q-3-2 qualifies and K-J-4 beats it.
    three = play_round(capsys, *wagers("1:ante=10"), *deal("Ks Jd 4c", dealer="Qc 2d 3h"))
    assert "best3" not in three["dealer"]
    assert outcome(three, 1, "ante") == ("win", 10)


# --- player banking -----------------------------------------------------------------------------
def test_player_banking_with_a_flat_commission(capsys):
    """Seed col. 4: "The player who agrees to bank a hand takes all wagers lost by each player, and
    must pay all winning payouts"; col. 6: "the house takes a flat fee from each player"."""
    rec = play_round(capsys, *wagers("1:ante=10", "1:pair_plus=5", "3:ante=10"),
                     *opt("banking=player", "banker_seat=2", "commission.mode=flat", "commission.amount=1"),
                     *deal("Ks Kd 4c", "Js Td 8c", dealer="4h 4s 9d"))
    assert rec["banker"] == 2
    assert [s["seat"] for s in rec["seats"]] == [1, 2, 3]
    assert outcome(rec, 1, "ante") == ("win", 10) and outcome(rec, 1, "play") == ("win", 10)
    assert outcome(rec, 1, "pair_plus") == ("win", 5)
    assert outcome(rec, 1, "commission") == ("lose", -1)
    assert outcome(rec, 3, "ante") == ("fold", -10) and outcome(rec, 3, "commission") == ("lose", -1)
    assert seat(rec, 1)["stakes"] == {"ante": 10, "play": 10, "pair_plus": 5, "commission": 1}
    banker = seat(rec, 2)
    assert banker["banker"] is True and banker["cards"] == [] and banker["wagers"] == {}
    assert banker["results"] == {"bank": {"outcome": "lose", "net": -15}}   # pays 25, collects 10
    assert rec["house_net"] == 2 and rec["net"] == -2                      # only the commissions


def test_player_banking_with_a_percent_commission_rounded_up(capsys):
    rec = play_round(capsys, *wagers("1:ante=10", "1:pair_plus=5", "3:ante=10"),
                     *opt("banking=player", "banker_seat=2", "commission.mode=percent",
                          "commission.amount=10"),
                     *deal("Ks Kd 4c", "Js Td 8c", dealer="4h 4s 9d"))
    assert outcome(rec, 1, "commission") == ("lose", -2)     # 10% of 15 = 1.5 -> 2
    assert outcome(rec, 3, "commission") == ("lose", -1)
    assert rec["house_net"] == 3
    assert seat(rec, 2)["results"]["bank"] == {"outcome": "lose", "net": -15}


def test_player_banker_wins_and_no_commission_entry_when_the_fee_is_zero(capsys):
    rec = play_round(capsys, *wagers("4:ante=10", "4:pair_plus=10"),
                     *opt("banking=player", "banker_seat=7"),
                     *deal("Qs 9d 2c", dealer="Ks 7h 3c"))
    assert seat(rec, 4)["results"] == {"ante": {"outcome": "lose", "net": -10},
                                      "play": {"outcome": "lose", "net": -10},
                                      "pair_plus": {"outcome": "lose", "net": -10}}
    assert seat(rec, 7)["results"]["bank"] == {"outcome": "win", "net": 30}
    assert rec["house_net"] == 0


def test_player_banking_automatic_wagers_skip_the_banker(capsys):
    rec = play_round(capsys, "--seats", "2", "--seed", "7", *opt("banking=player", "banker_seat=1"))
    assert [s["seat"] for s in rec["seats"]] == [1, 2, 3]
    assert seat(rec, 1)["banker"] and seat(rec, 2)["wagers"] == {"ante": 10, "pair_plus": 10}


# --- hints, time-out ----------------------------------------------------------------------------
def _kernel(*pairs: str) -> tuple:
    game = get_game(GAME)
    options = make_options(GAME, {"mandatory": "none", **dict(p.split("=", 1) for p in pairs)})
    return game, RoundKernel(game, options)


@pytest.mark.parametrize("hints", [True, False])
def test_hints_only_where_allowed(capsys, hints):
    game, k = _kernel(f"hints={str(hints).lower()}")
    pending = k.begin({1: {"ante": 10}, 2: {"ante": 10}, 3: {"pair_plus": 10}},
                      StackedSource(parse_cards("Ks Js 2c 4h Kd Td 3c 4s 4c 8c 2h 9d")))
    assert [(r.seat, r.kind, r.actions, r.default) for r in pending] == [
        (1, "play_or_fold", ("play", "fold"), "fold"), (2, "play_or_fold", ("play", "fold"), "fold")]
    assert [r.hint for r in pending] == (["play", "fold"] if hints else [None, None])
    k.decide(1, "play")
    k.decide(2, "fold")
    rec = k.record()
    assert ("hint" in seat(rec, 1)) is hints and "hint" not in seat(rec, 3)
    if hints:
        assert seat(rec, 1)["hint"] == "play" and seat(rec, 2)["hint"] == "fold"


def test_time_out_folds_and_the_record_marks_it():
    _game, k = _kernel()
    pending = k.begin({1: {"ante": 10, "pair_plus": 5}, 2: {"ante": 10}},
                      StackedSource(parse_cards("Ks Js 4h Kd Td 4s 4c 8c 9d")))
    assert len(pending) == 2
    k.decide(1, "play")
    assert k.time_out() == [(2, "fold")]
    rec = k.record()
    assert rec["decisions"] == [{"seat": 1, "action": "play"},
                                {"seat": 2, "action": "fold", "timed_out": True}]
    assert outcome(rec, 2, "ante") == ("fold", -10)
    assert outcome(rec, 1, "ante") == ("win", 10) and outcome(rec, 1, "pair_plus") == ("win", 5)
    # All open requests time out at once: K-K-4, which the strategy plays, folds too.
    _game, k = _kernel()
    k.begin({1: {"ante": 10}}, StackedSource(parse_cards("Ks 4h Kd 4s 4c 9d")))
    assert k.time_out() == [(1, "fold")]
    rec = k.record()
    assert rec["decisions"] == [{"seat": 1, "action": "fold", "timed_out": True}]
    assert outcome(rec, 1, "ante") == ("fold", -10)
    assert replay(rec) == rec


# --- errors -------------------------------------------------------------------------------------
def test_the_credits_a_decision_may_still_stake():
    game = get_game(GAME)
    assert game.max_decision_stake({1: {"ante": 10}, 2: {"ante": 7, "pair_plus": 5},
                                    3: {"pair_plus": 3}}) == 17


def test_illegal_decisions_raise_and_change_nothing():
    game, k = _kernel()
    k.begin({1: {"ante": 10}, 2: {"ante": 10}, 3: {"pair_plus": 10}},
            StackedSource(parse_cards("Ks Js 2c 4h Kd Td 3c 4s 4c 8c 2h 9d")))
    state = k.round
    with pytest.raises(DecisionError, match="seat 3 has no decision to make"):
        game.decide(state, 3, "play")                      # PAIR PLUS only
    with pytest.raises(DecisionError, match="seat 5 has no decision to make"):
        game.decide(state, 5, "play")                      # nobody there
    with pytest.raises(DecisionError, match="unknown action 'raise'; answer play or fold"):
        k.decide(1, "raise")
    with pytest.raises(DecisionError, match="unknown action 'PLAY'"):
        k.decide(1, "PLAY")                                # the record keeps exact action names
    assert [r.seat for r in k.pending()] == [1, 2] and k.decisions == []
    k.decide(1, "play")
    with pytest.raises(DecisionError, match=r"seat 1 has already decided \(play\)"):
        game.decide(state, 1, "fold")
    with pytest.raises(DecisionError, match="seat 1 has no decision to make"):
        k.decide(1, "fold")                                # the kernel refuses it first
    assert k.decisions == [(1, "play")] and [r.seat for r in k.pending()] == [2]
    k.decide(2, "fold")
    assert outcome(k.record(), 1, "play") == ("win", 10)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--wager", "1:ante=10", "--decision", "1:raise"], "seat 1: unknown action 'raise'"),
        (["--wager", "1:ante=10", "--decision", "1:play", "--decision", "1:fold"],
         "decision(s) not asked for: {1: ['fold']}"),
        (["--wager", "1:ante=10", "--wager", "2:pair_plus=5", "--option", "mandatory=none",
          "--decision", "2:play"], "decision(s) not asked for: {2: ['play']}"),
    ],
)
def test_bad_decisions_on_the_command_line(capsys, args, needle):
    assert needle in fails(capsys, *args, "--seed", "1")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--wager", "1:play=10"], "play is not placed before the deal"),
        (["--wager", "1:ante=10", "--wager", "1:play=10"], "play is not placed before the deal"),
        (["--wager", "1:pair_plus=10"], "ante is mandatory"),
        (["--wager", "1:ante=10", "--wager", "1:six_card=5"], "offers no wager 'six_card'"),
        (["--wager", "1:ante=10", "--option", "mandatory=ante,pair_plus"], "pair_plus is mandatory"),
        (["--wager", "1:commission=1"], "commission is not a wager"),
        (["--wager", "1:bank=1"], "bank is not a wager"),
        (["--wager", "2:ante=10", "--option", "banking=player", "--option", "banker_seat=2"],
         "seat 2 banks the round"),
        (["--wager", "1:ante=10", "--cards", "As Ks Qs As Jd 2c"], "As is given 2 times, but the game's shoe of 52 cards holds 1"),
        (["--wager", "1:ante=10", "--cards", "As Ks Qs"], "ran out"),
    ],
)
def test_bad_wagers_and_cards(capsys, args, needle):
    if "--cards" not in args:
        args = [*args, "--seed", "1"]
    assert needle in fails(capsys, *args)


@pytest.mark.parametrize(
    ("option", "needle"),
    [
        ("banking=player", "banking = player needs the seat that banks the round"),
        ("banker_seat=2", "banker_seat: only with banking = player"),
        ("banker_seat=8", "banker_seat"),
        ("commission.amount=3", "commission only with banking = player"),
        ("dealer_qualifies=Q-J-T", "Q-J-T is a straight"),
        ("dealer_qualifies=4", "no hand is 4-high"),
        ("dealer_qualifies=Q-Q-4", "three different ranks"),
        ("dealer_qualifies=queen", "expected none, pair, a rank"),
        ("six_card_pays=1,2,3,4,5,6,7", "the SIX CARD bonus is off"),
        ("mandatory=ante,play", "play is the PLAY decision"),
        ("mandatory=ante,ante", "named twice"),
        ("mandatory=six_card", "six_card cannot be required"),
        ("mandatory=war", "mandatory"),
        ("pair_plus_pays=40,30,6,4", "give 5 pays"),
        ("pair_plus_pays=40,30,6,-4,1", "pair_plus_pays.flush"),
        ("ante_bonus_pays=5,4", "give 3 pays"),
        ("dealer_cards=5", "dealer_cards: Input should be 3 or 4"),
        ("not_qualified=ante", "not_qualified"),
        ("hints=maybe", "hints"),
        ("colour=red", "unknown key"),
    ],
)
def test_bad_options_are_one_clear_line(capsys, option, needle):
    assert needle in fails(capsys, "--option", option, "--seed", "1")


@pytest.mark.parametrize(
    "options",
    [
        ("banking=player", "banker_seat=1", "commission.amount=2.5"),
        ("banking=player", "banker_seat=1", "commission.mode=percent", "commission.amount=100"),
    ],
)
def test_impossible_commissions(capsys, options):
    assert "commission" in fails(capsys, *opt(*options), "--seed", "1")


# --- simulate -----------------------------------------------------------------------------------
def test_simulate_reports_play_and_the_commission(capsys):
    code = main(["simulate", GAME, "--rounds", "300", "--seed", "1", "--seats", "2", "--json",
                 *opt("banking=player", "banker_seat=3", "commission.amount=1", "six_card=true")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["rounds"] == 300
    w = doc["wagers"]
    assert set(w) == {"ante", "play", "pair_plus", "six_card", "commission"}
    assert w["ante"]["wagered"] == w["pair_plus"]["wagered"] == 300 * 2 * 10
    assert 0 < w["play"]["wagered"] < w["ante"]["wagered"]
    assert w["commission"] == {"wagered": 600, "net": -600, "rtp": 0.0, "ci95": [0.0, 0.0]}
