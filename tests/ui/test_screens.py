"""Each built screen, rendered headless at 1920x1080 and 1280x720 from its demonstration state:
the expected elements are where the layout says (named regions, their texts, their pixels), the
touchable areas carry the right actions, and a few screens match their golden images."""

from __future__ import annotations

import numpy as np
import pytest

from firmware.ui import theme
from firmware.ui.layout import Scaler
from firmware.ui.render import SERVICE, render
from tests.ui.conftest import SIZES, colour_at, region_pixels
from tests.ui.golden import compare


def game_shots(game: str = "baccarat-war", screens=("table", "war", "paytable", "help")) -> dict:
    """(screen, size) -> (surface, frame): each screen of ``game`` rendered once at both sizes."""
    return {(screen, size): render(screen, size, game) for size in SIZES for screen in screens}


@pytest.fixture(scope="module")
def shots():
    return game_shots(screens=("table", "war", "paytable", "help", "attract", "games"))


def texts(frame, region):
    return " | ".join(frame.texts_in(region))


@pytest.mark.parametrize("size", SIZES)
def test_the_table_of_fig_2(shots, size):
    surface, frame = shots["table", size]
    assert surface.get_size() == size
    scaler = Scaler(*size)
    for name in ("dealer", "shoe", "pot", "pot.map", "pot.dealer", "spot.1", "spot.1.hand", "meter.credit",
                 "meter.bet", "meter.win", "chips", "button.deal", "button.repeat", "button.clear",
                 "button.cash_out", "button.help", "button.paytable", "message"):
        assert name in frame.regions, name
    for spot in range(1, 8):                                # the map of spots 1-7 in the war pot
        assert f"pot.spot.{spot}" in frame.regions
        assert str(spot) in texts(frame, f"pot.spot.{spot}")
    for wager, label in (("bac", "BAC"), ("war", "WAR"), ("tie", "TIE"), ("four_card", "FOUR CARD"),
                         ("war_pool", "WAR POOL")):
        assert label in texts(frame, f"spot.1.{wager}")
    # The demonstration bets: BAC 25 (WAR follows it), TIE 5, FOUR CARD 5, WAR POOL 10 = 70 credits.
    assert "25" in texts(frame, "spot.1.bac") and "25" in texts(frame, "spot.1.war")
    assert "$20.00" in texts(frame, "meter.credit") and "2,000 credits" in texts(frame, "meter.credit")
    assert "$0.70" in texts(frame, "meter.bet") and "70 credits" in texts(frame, "meter.bet")
    assert "$0.20" in texts(frame, "pot") and "20 credits" in texts(frame, "pot")     # the ante + the house's 10
    assert "DEAL" in texts(frame, "button.deal")
    # The DEAL button is lit (amber), the felt is the felt.
    deal = region_pixels(surface, scaler, frame.regions["button.deal"].inset(20))
    assert np.abs(deal.reshape(-1, 3).mean(0) - np.array(theme.BUTTON_DEAL)).max() < 60
    assert colour_at(surface, scaler, 100, 300) == theme.FELT
    # Touching BAC bets, WAR follows BAC (war_wager = required) and cannot be touched by itself.
    actions = {h.name: h.action for h in frame.hits}
    assert actions["spot.1.bac"].name == "bet" and actions["spot.1.bac"].arg == (1, "bac")
    assert "spot.1.war" not in actions
    assert actions["button.deal"].name == "deal" and actions["chip.25"].arg == 25
    # Every text drawn is at least 18 px at 1080p.
    assert min(t.size for t in frame.texts) >= theme.MIN_TEXT


@pytest.mark.parametrize("size", SIZES)
def test_a_war_shown_as_it_resolves(shots, size):
    surface, frame = shots["war", size]
    scaler = Scaler(*size)
    # FIG. 8: spot 1's Q 3 + 10 6 scores 9, the dealer's 2 A + 10 9 scores 2; spot 1 wins the war.
    assert texts(frame, "dealer.score") == "WAR 2"                 # the war scores are labelled
    assert texts(frame, "spot.1.hand.score") == "WAR 9"
    assert "10" in texts(frame, "spot.1.hand") and "6" in texts(frame, "spot.1.hand")
    assert "WIN 20" in texts(frame, "spot.1.bac.result")           # each tag: what the wager paid
    assert "PUSH 10" in texts(frame, "spot.1.war.result")
    assert "WIN 45" in texts(frame, "spot.1.tie.result")           # TIE 5 at 8 to 1: 40 and its 5
    assert texts(frame, "spot.1.four_card.result") == "LOSE"
    assert "spot.1.war_pool.result" not in frame.regions             # the pool contest comes next
    assert "Spot 1 wins the war" in texts(frame, "message")
    # WIN is the sum of the tags shown (20 + 10 + 45); the pool's 19 is not on the meters yet.
    assert "75 credits" in texts(frame, "meter.win") and "2,035 credits" in texts(frame, "meter.credit")
    # Cards are white faces in the dealer area; a touch anywhere skips the rest of the round.
    card = region_pixels(surface, scaler, frame.regions["dealer"].inset(120, 60))
    assert (card.reshape(-1, 3) > 240).all(axis=1).mean() > 0.2
    assert frame.action_at(100, 300).name == "skip"
    assert "button.deal" not in {h.name for h in frame.hits}    # no dealing while a round is shown


@pytest.mark.parametrize("size", SIZES)
def test_the_pay_table_comes_from_the_options_and_the_par_sheet(shots, size):
    _, frame = shots["paytable", size]
    body = texts(frame, "body")
    assert "8 to 1" in body                                    # tie_pays
    assert "1,000 to 1" in body and "11 to 1" in body          # four_card_pays
    assert "the pot, less 5%" in body                          # pool.commission
    assert "91.86%" in body and "95.55%" in body and "100.00%" in body   # the exact PAR sheet
    assert "95.00%" in body                                    # WAR POOL with the house's 10-credit ante
    assert "exact" in texts(frame, "footer")
    assert frame.hit("button.back").action.name == "back"


@pytest.mark.parametrize("size", SIZES)
def test_help_pages(shots, size):
    _, frame = shots["help", size]
    body = texts(frame, "body")
    assert "baccarat" in body and "30 war cards" in body       # max_war_steps
    assert {h.name for h in frame.hits} == {"button.next", "button.back"}
    surface, frame2 = render("help", size, page=1)
    body2 = texts(frame2, "body")
    assert "TIE wins 8 to 1" in body2 and "5% commission" in body2 and "Malfunction voids" in body2


@pytest.mark.parametrize("size", SIZES)
def test_attract_and_game_selection(shots, size):
    _, frame = shots["attract", size]
    assert "BACCARAT WAR" in texts(frame, "title") and "INSERT MONEY" in texts(frame, "prompt")
    assert frame.action_at(960, 540).name == "wake"
    _, frame = shots["games", size]
    assert frame.hit("game.blackjack-war").action.arg == "blackjack-war"
    assert "Baccarat War" in texts(frame, "game.baccarat-war")


def test_blackjack_war_uses_the_same_table():
    _, frame = render("war", (1280, 720), "blackjack-war")
    assert "Blackjack War" in texts(frame, "title")
    assert texts(frame, "spot.1.hand.score") == "WAR 9"             # high_card: the war card 9 against 4


def test_the_service_screens_are_drawn_by_the_same_command():
    for screen in SERVICE:
        surface, frame = render(screen, (1280, 720))
        assert surface.get_size() == (1280, 720) and frame.regions, screen
        assert frame.hits or screen == "calibration", screen           # calibration takes raw touches


@pytest.mark.parametrize("screen", ["table", "war", "paytable"])
def test_golden_images(shots, screen, tmp_path):
    surface, _ = shots[screen, (1280, 720)]
    compare(surface, f"{screen}-1280x720", tmp_path / "golden")


def test_the_golden_comparison_notices_a_different_screen(shots, tmp_path):
    surface, _ = shots["war", (1280, 720)]
    with pytest.raises(AssertionError, match="differs from its golden image"):
        compare(surface, "table-1280x720", tmp_path)
    assert (tmp_path / "table-1280x720.diff.png").exists()


# --- Three Card Poker -------------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
def test_three_card_poker_table_and_round(size):
    surface, frame = render("table", size, "three-card-poker")
    assert "Three Card Poker" in texts(frame, "title")
    for wager, label in (("ante", "ANTE"), ("play", "PLAY"), ("ante_bonus", "ANTE BONUS"), ("pair_plus", "PAIR PLUS"),
                         ("six_card", "6-CARD BONUS")):
        assert label in texts(frame, f"spot.1.{wager}")
    assert "Queen high or better" in texts(frame, "rule")
    actions = {h.name: h.action for h in frame.hits}
    assert actions["spot.1.ante"].arg == (1, "ante") and "spot.1.play" not in actions
    assert "40 credits" in texts(frame, "meter.bet")                   # ANTE 25, PAIR PLUS 10, 6-CARD 5
    assert min(t.size for t in frame.texts) >= theme.MIN_TEXT
    surface, frame = render("war", size, "three-card-poker")          # the showdown of the demonstration
    assert "High Card, Queen" in texts(frame, "dealer") and "QUALIFIES" in texts(frame, "dealer")
    assert "Straight, Jack high" in texts(frame, "spot.1.hand")
    assert "WIN 30" in texts(frame, "spot.1.ante.result") and "WIN 20" in texts(frame, "spot.1.play.result")
    assert texts(frame, "spot.1.ante_bonus.result") == "1 TO 1"     # its 10 is in what ANTE paid
    assert "WIN 35" in texts(frame, "spot.1.pair_plus.result") and "WIN 55" in texts(frame, "spot.1.six_card.result")
    assert "140 credits" in texts(frame, "meter.win")                # 30 + 20 + 35 + 55
    assert "beats the dealer" in texts(frame, "message")
    assert min(t.size for t in frame.texts) >= theme.MIN_TEXT
    _, frame = render("paytable", size, "three-card-poker")
    body = texts(frame, "body")
    assert "40 to 1" in body and "1,000 to 1" in body and "96.63%" in body and "97.68%" in body
    _, frame = render("help", size, "three-card-poker", page=1)
    assert "PAIR PLUS pays on your three cards alone" in texts(frame, "body")


def test_three_card_poker_golden(tmp_path):
    surface, _ = render("war", (1280, 720), "three-card-poker")
    compare(surface, "three-card-poker-war-1280x720", tmp_path / "golden")


# --- Hold'em War --------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
def test_holdem_war_table_and_war(size):
    surface, frame = render("table", size, "holdem-war")
    assert "Hold'em War" in texts(frame, "title") and "COMMUNITY CARDS" in texts(frame, "community")
    for wager, label in (("bac", "BAC"), ("war", "WAR"), ("tie", "TIE"), ("war_pool", "WAR POOL")):
        assert label in texts(frame, f"spot.1.{wager}")
    assert "spot.1.four_card" not in frame.regions                    # no FOUR CARD unless configured
    assert frame.regions["dealer"].right <= frame.regions["community"].x
    surface, frame = render("war", size, "holdem-war")                # the war won by a K against a 4
    board = texts(frame, "community")
    assert all(rank in board for rank in ("5", "6", "7", "8", "K"))
    assert texts(frame, "spot.1.hand.score") == "Straight, Nine high - WAR K"
    assert texts(frame, "dealer.score") == "Straight, Nine high - WAR 4"
    assert "WIN 95" in texts(frame, "spot.1.tie.result") and "WIN 20" in texts(frame, "spot.1.bac.result")
    assert "Spot 1 wins the war" in texts(frame, "message")
    scaler = Scaler(*size)                                            # the community cards are white faces
    board_px = region_pixels(surface, scaler, frame.regions["community"].inset(60, 50))
    assert (board_px.reshape(-1, 3) > 240).all(axis=1).mean() > 0.3
    assert min(t.size for t in frame.texts) >= theme.MIN_TEXT
    _, frame = render("paytable", size, "holdem-war")
    assert "18 to 1" in texts(frame, "body") and "96.28%" in texts(frame, "body")


def test_holdem_war_golden(tmp_path):
    surface, _ = render("war", (1280, 720), "holdem-war")
    compare(surface, "holdem-war-war-1280x720", tmp_path / "golden")

# --- Split 21 Stud -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def split21_shots():
    return game_shots("split21-stud")


@pytest.mark.parametrize("size", SIZES)
def test_split21_stud_table_and_round(split21_shots, size):
    surface, frame = split21_shots["table", size]
    assert surface.get_size() == size
    for name in ("dice", "dealer", "dealer.hand.high", "dealer.hand.low", "reminders", "spot.1", "spot.1.hand.high",
                 "spot.1.hand.low", "spot.1.ante", "spot.1.low", "spot.1.high", "button.deal", "message"):
        assert name in frame.regions, name
    assert "ANTE" in texts(frame, "spot.1.ante") and "HIGH (x2)" in texts(frame, "spot.1.high")
    assert "20" in texts(frame, "spot.1.high") and "$0.40" in texts(frame, "meter.bet")
    assert frame.hit("spot.1.low").action.arg == (1, "low") and "spot.1.high" not in {h.name for h in frame.hits}
    assert "The die is rolled when you deal" in texts(frame, "dice.note")
    assert min(t.size for t in frame.texts) >= theme.MIN_TEXT
    surface, frame = split21_shots["war", size]
    assert texts(frame, "spot.1.hand.high.score") == "21 in two cards" and texts(frame, "dealer.hand.low.score") == "13"
    assert texts(frame, "spot.1.ante.result") == "LOSE" and "WIN 40" in texts(frame, "spot.1.high.result")
    assert texts(frame, "spot.1.hand.low.result") == "WIN" and "WIN 20" in texts(frame, "spot.1.low.result")
    assert "You win $0.60" in texts(frame, "message") and "$0.60" in texts(frame, "meter.win")
    assert "Die 3: dealing starts at position 4" in texts(frame, "dice.note")
    assert texts(frame, "dice.position.8") == "D" and "$20.20" in texts(frame, "meter.credit")
    for name in ("spot.1.hand.high", "spot.1.hand.low", "dealer.hand.high", "dealer.hand.low", "dice", "spot.1"):
        r = frame.regions[name]                                   # what is drawn in a box stays in it
        inside = [t.rect for t in frame.texts if r.contains(*t.rect.center)]
        assert inside and all(r.contains(t.x, t.y) and r.contains(t.right - 1, t.bottom - 1) for t in inside), name
    spot, dealer, dice = frame.regions["spot.1"], frame.regions["dealer"], frame.regions["dice"]
    assert dice.right <= dealer.x and dealer.bottom <= spot.y
    assert min(t.size for t in frame.texts) >= theme.MIN_TEXT
    _, frame = split21_shots["paytable", size]
    assert "99.29%" in texts(frame, "body") and "exact" in texts(frame, "footer")
    _, frame = split21_shots["help", size]
    assert "HIGH is placed with LOW at 2 times" in texts(frame, "body") and "K 9 A 5 6" in texts(frame, "body")


def test_split21_stud_golden(split21_shots, tmp_path):
    compare(split21_shots["war", (1280, 720)][0], "split21-stud-war-1280x720", tmp_path / "golden")


# --- Double Super 9 ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ds9_shots():
    return game_shots("double-super-9")


@pytest.mark.parametrize("size", SIZES)
def test_double_super_9_table_and_round(ds9_shots, size):
    surface, frame = ds9_shots["table", size]
    assert surface.get_size() == size
    for name in ("dice", "dealer", "dealer.hand.front", "dealer.hand.back", "spot.1", "spot.1.hand.front",
                 "spot.1.hand.back", "spot.1.bet", "button.deal"):
        assert name in frame.regions, name
    assert frame.hit("spot.1.bet").action.arg == (1, "bet") and "10" in texts(frame, "spot.1.bet")
    assert "Three dice are rolled when you deal" in texts(frame, "dice.note")
    assert min(t.size for t in frame.texts) >= theme.MIN_TEXT
    surface, frame = ds9_shots["war", size]
    assert texts(frame, "spot.1.hand.front.score") == "SUPER 9, 6 high" and texts(frame, "dealer.hand.back.score") == \
        "Pair 5-5"
    assert "WIN" in texts(frame, "spot.1.hand.front.result") and "COPY" in texts(frame, "spot.1.hand.back.result")
    assert "WIN 19" in texts(frame, "spot.1.bet.result") and "You win $0.19" in texts(frame, "message")
    assert "$0.19" in texts(frame, "meter.win")
    assert "BANKER (THE HOUSE)" in texts(frame, "dealer") and texts(frame, "dice.position.8") == "B"
    for name in ("spot.1.hand.front", "spot.1.hand.back", "dealer.hand.front", "dealer.hand.back", "dice", "spot.1"):
        r = frame.regions[name]                                   # what is drawn in a box stays in it
        inside = [t.rect for t in frame.texts if r.contains(*t.rect.center)]
        assert inside and all(r.contains(t.x, t.y) and r.contains(t.right - 1, t.bottom - 1) for t in inside), name
    assert min(t.size for t in frame.texts) >= theme.MIN_TEXT
    _, frame = ds9_shots["paytable", size]
    assert "96.82%" in texts(frame, "body") and "exact" in texts(frame, "footer")
    _, frame = ds9_shots["help", size]
    assert "6 5 3 5" in texts(frame, "body")


def test_double_super_9_golden(ds9_shots, tmp_path):
    compare(ds9_shots["war", (1280, 720)][0], "double-super-9-war-1280x720", tmp_path / "golden")
