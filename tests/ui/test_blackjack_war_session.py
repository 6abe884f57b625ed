"""Acceptance: a whole Blackjack War session on a terminal with simulated devices, played only
through the touchscreen simulator (and a $20 note through the bill validator simulator): BAC (WAR
follows it) and TIE placed by touch, DEAL, two blackjack totals that tie, the war won on the war
cards (high card), CASH OUT, and the printed voucher's exact amount. Frames are saved and checked."""

from __future__ import annotations

from tests.ui.session import Seen

GAMES = {"enabled": ["blackjack-war"], "default": "blackjack-war", "seats": 1}
#: Dealing order: spot 1, dealer, spot 1, dealer, then the war cards (spot 1, dealer). Spot 1's
#: K 7 and the dealer's Q 7 are both 17: a tie, so a war. The war cards A and 9: the ace is the
#: higher card (high-card war scoring, Blackjack War's default), so spot 1 wins the war.
CARDS = ["Kh", "Qd", "7s", "7c", "Ac", "9d"]


def test_a_blackjack_war_session_by_touch_only(session):
    s = session
    terminal, app = s.terminal, s.app
    # --- $20 in; BAC 10 (WAR follows it: war_wager = required) and TIE 5, by touch --------------------
    s.bet(("chip.10", "spot.1.bac", "chip.5", "spot.1.tie"), {1: {"bac": 10, "war": 10, "tie": 5}})

    # --- the dealer stacks the shoe; DEAL; the round shown beat by beat -----------------------------
    s.stack_shoe(CARDS)
    s.touch("button.deal")
    s.until(lambda: app.playback is not None, "the round")
    record = terminal.last_record
    assert record["cards_dealt"] == CARDS

    def tie_and_war():
        assert "WAR!" in s.texts("banner") and "AT WAR" in s.texts("spot.1.hand")
        assert "17" in s.texts("spot.1.hand.score") and "17" in s.texts("dealer.score")
        assert "WIN 65" in s.texts("spot.1.tie.result")                 # TIE 5 at 12 to 1, 60 + 5

    def war_won():
        assert s.texts("spot.1.hand.score") == "WAR A" and s.texts("dealer.score") == "WAR 9"
        assert "WIN 20" in s.texts("spot.1.bac.result") and "PUSH 10" in s.texts("spot.1.war.result")

    s.watch(Seen("war", "03-war", tie_and_war), Seen("war_step", "04-war-won", war_won))
    # 2,000 - 25 staked; back: BAC 10 + 10, WAR 10 (pushes: war_win_pays = push), TIE 5 + 60 (12 to
    # 1): 95. 2,070 credits, $20.70.
    s.settle_and_cash_out(2070, "05-settled", "06-ticket", message="You win $0.95")
    assert sorted(p.name for p in s.frames.iterdir()) == [
        "01-credited.png", "02-bets.png", "03-war.png", "04-war-won.png", "05-settled.png", "06-ticket.png"]
