"""Acceptance: a whole Hold'em War session on a terminal with simulated devices, played only through
the touchscreen simulator (and a $20 note through the bill validator simulator): BAC (WAR follows
it) and TIE placed by touch, DEAL, the community cards dealt, the split that starts a war, the war
won, CASH OUT, and the printed voucher's exact amount. Frames are saved and checked."""

from __future__ import annotations

from tests.ui.session import Seen

GAMES = {"enabled": ["holdem-war"], "default": "holdem-war", "seats": 1}
#: Dealing order: spot 1, dealer, spot 1, dealer, the five community cards, then the war cards (spot
#: 1, dealer). Spot 1's 9 2 and the dealer's 9 3 both play the board's 5 6 7 8 for a nine-high
#: straight: an exact split. The war cards K and 4: spot 1 wins the war (high card).
CARDS = ["9h", "9d", "2c", "3c", "5s", "6h", "7d", "8c", "Kd", "Kh", "4s"]


def test_a_holdem_war_session_by_touch_only(session):
    s = session
    terminal, app = s.terminal, s.app
    # --- $20 in; BAC 10 (WAR follows it: war_wager = required) and TIE 5, by touch --------------------
    s.bet(("chip.10", "spot.1.bac", "chip.5", "spot.1.tie"), {1: {"bac": 10, "war": 10, "tie": 5}})

    # --- the dealer stacks the shoe; DEAL -------------------------------------------------------------
    s.stack_shoe(CARDS)
    s.touch("button.deal")
    s.until(lambda: app.playback is not None, "the round")
    record = terminal.last_record
    assert record["cards_dealt"] == CARDS and record["community"] == CARDS[4:9]

    def board():
        assert s.texts("spot.1.hand.score") == "Straight, Nine high" == s.texts("dealer.score")
        for rank in ("5", "6", "7", "8", "K"):
            assert rank in s.texts("community")

    def war():
        assert "WAR!" in s.texts("banner") and "AT WAR" in s.texts("spot.1.hand")
        assert "WIN 95" in s.texts("spot.1.tie.result")                 # TIE 5 at 18 to 1, 90 + 5

    def war_won():
        assert s.texts("spot.1.hand.score") == "Straight, Nine high - WAR K"
        assert "WIN 20" in s.texts("spot.1.bac.result") and "PUSH 10" in s.texts("spot.1.war.result")

    s.watch(Seen("scores", "03-board", board), Seen("war", "04-war", war), Seen("war_step", "05-war-won", war_won))
    # 2,000 - 25 staked; back: BAC 10 + 10, WAR 10 (pushes: war_win_pays = push), TIE 5 + 90 (18 to
    # 1): 125. 2,100 credits, $21.00.
    s.settle_and_cash_out(2100, "06-settled", "07-ticket", message="You win $1.25")
    assert sorted(p.name for p in s.frames.iterdir()) == [
        "01-credited.png", "02-bets.png", "03-board.png", "04-war.png", "05-war-won.png", "06-settled.png",
        "07-ticket.png"]
