"""Acceptance: a whole Three Card Poker session on a terminal with simulated devices, played only
through the touchscreen simulator (and a $20 note through the bill validator simulator): ANTE and
PAIR PLUS placed by touch, DEAL, the round waits for the player, PLAY touched, the dealer's cards
turn, the result, CASH OUT, and the printed voucher's exact amount. Frames are saved and checked."""

from __future__ import annotations

from tests.ui.session import Seen

GAMES = {"enabled": ["three-card-poker"], "default": "three-card-poker", "seats": 1,
         "options": {"three-card-poker": {}}}
#: Dealing order: spot 1, dealer, three times. Spot 1: Q Q 7 (a pair of queens); the dealer:
#: J 8 3 (jack-high: it does not qualify).
CARDS = ["Qs", "Jc", "Qh", "8s", "7d", "3d"]


def test_a_three_card_poker_session_by_touch_only(session):
    s = session
    terminal, app = s.terminal, s.app
    # --- $20 in; ANTE 10 and PAIR PLUS 5, by touch ----------------------------------------------------
    s.bet(("chip.10", "spot.1.ante", "chip.5", "spot.1.pair_plus"), {1: {"ante": 10, "pair_plus": 5}})
    assert "spot.1.play" not in {h.name for h in app.frame.hits}          # PLAY is the decision, not a bet

    # --- the dealer stacks the shoe; DEAL; the round waits for PLAY or FOLD -------------------------
    s.stack_shoe(CARDS)
    s.touch("button.deal")
    s.until(lambda: (terminal.status().get("round") or {}).get("pending"), "the decision")
    s.step()
    s.save("03-decision")
    assert "Q" in s.texts("spot.1.hand") and "7" in s.texts("spot.1.hand") and "Pair of Queens" in s.texts("spot.1.hand")
    assert "Your decision, please" in s.texts("message") and "s left" in s.texts("message")
    assert "button.deal" not in app.frame.regions
    assert {"button.play", "button.fold"} <= {h.name for h in app.frame.hits}
    assert "J" not in s.texts("dealer") and "High Card" not in s.texts("dealer")      # face down
    assert "10" in s.texts("spot.1.ante") and "5" in s.texts("spot.1.pair_plus")    # the dealt wagers
    assert "15 credits" in s.texts("meter.bet")

    # --- PLAY, by touch; the round is shown -----------------------------------------------------------
    s.touch("button.play")
    s.until(lambda: app.playback is not None and terminal.last_record is not None, "the round")
    record = terminal.last_record
    assert record["cards_dealt"] == CARDS and record["decisions"] == [{"seat": 1, "action": "play"}]

    def reveal():
        assert "High Card, Jack" in s.texts("dealer") and "DOES NOT QUALIFY" in s.texts("dealer")
        assert "spot.1.ante.result" not in app.frame.regions

    def compare():
        assert "WIN 20" in s.texts("spot.1.ante.result") and "PUSH 10" in s.texts("spot.1.play.result")
        assert "WIN 10" in s.texts("spot.1.pair_plus.result") and "40 credits" in s.texts("meter.win")
        assert "ANTE wins and PLAY pushes" in s.texts("message")

    s.watch(Seen("reveal", "04-reveal", reveal), Seen("compare", "05-compare", compare))
    # 2,000 - 25 staked (ANTE 10, PAIR PLUS 5, PLAY 10); back: ANTE 10 + 10 (1 to 1, the dealer does
    # not qualify), PLAY 10 (pushes), PAIR PLUS 5 + 5 (a pair, 1 to 1): 40. 2,015 credits, $20.15.
    s.settle_and_cash_out(2015, "06-settled", "07-ticket", message="You win $0.40")
    assert sorted(p.name for p in s.frames.iterdir()) == [
        "01-credited.png", "02-bets.png", "03-decision.png", "04-reveal.png", "05-compare.png", "06-settled.png",
        "07-ticket.png"]
