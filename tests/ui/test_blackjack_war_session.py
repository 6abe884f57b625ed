"""Acceptance: a whole Blackjack War session on a terminal with simulated devices, played only
through the touchscreen simulator (and a $20 note through the bill validator simulator): BAC (WAR
follows it) and TIE placed by touch, DEAL, two blackjack totals that tie, the war won on the war
cards (high card), CASH OUT, and the printed voucher's exact amount. Frames are saved and checked."""

from __future__ import annotations

from firmware.ledger.ledger import accounting_difference

GAMES = {"enabled": ["blackjack-war"], "default": "blackjack-war", "seats": 1}
#: Dealing order: spot 1, dealer, spot 1, dealer, then the war cards (spot 1, dealer). Spot 1's
#: K 7 and the dealer's Q 7 are both 17: a tie, so a war. The war cards A and 9: the ace is the
#: higher card (high-card war scoring, Blackjack War's default), so spot 1 wins the war.
CARDS = ["Kh", "Qd", "7s", "7c", "Ac", "9d"]


def test_a_blackjack_war_session_by_touch_only(session):
    s = session
    terminal, app = s.terminal, s.app
    s.insert(20)
    s.save("01-credited")
    assert "$20.00" in s.texts("meter.credit") and "Blackjack War" in s.texts("title")

    # --- BAC 10 (WAR follows it: war_wager = required) and TIE 5, by touch ---------------------------
    for name in ("chip.10", "spot.1.bac", "chip.5", "spot.1.tie"):
        s.touch(name)
    assert app.slip.wagers == {1: {"bac": 10, "war": 10, "tie": 5}}
    s.save("02-bets")
    assert "25 credits" in s.texts("meter.bet")

    # --- the dealer stacks the shoe; DEAL; the round shown beat by beat -----------------------------
    s.stack_shoe(CARDS)
    s.touch("button.deal")
    s.until(lambda: app.playback is not None, "the round")
    record = terminal.last_record
    assert record["cards_dealt"] == CARDS
    saw = {}
    while not app.playback.done:
        s.step(0.05)
        kind = app.playback.beat.kind
        if kind == "war" and "war" not in saw:
            saw["war"] = s.save("03-war")
            assert "WAR!" in s.texts("banner") and "AT WAR" in s.texts("spot.1.hand")
            assert "17" in s.texts("spot.1.hand.score") and "17" in s.texts("dealer.score")
            assert "WIN +60" in s.texts("spot.1.tie.result")            # TIE 5 at 12 to 1
        if kind == "war_step" and "war_won" not in saw:
            saw["war_won"] = s.save("04-war-won")
            assert "A" in s.texts("spot.1.hand.score") and "9" in s.texts("dealer.score")
            assert "WIN +10" in s.texts("spot.1.bac.result") and "PUSH" in s.texts("spot.1.war.result")
    assert set(saw) == {"war", "war_won"}
    s.step()
    s.save("05-settled")
    # 2,000 - 25 staked; back: BAC 10 + 10, WAR 10 (pushes: war_win_pays = push), TIE 5 + 60 (12 to
    # 1): 95. 2,070 credits, $20.70.
    assert "2,070 credits" in s.texts("meter.credit") and "You win $0.70" in s.texts("message")
    assert terminal.ledger.credits == 2070

    voucher = s.cash_out()
    s.save("06-ticket")
    assert voucher.amount_cents == 2070
    assert terminal.ledger.credits == 0 and accounting_difference(terminal.ledger.meters) == 0
    assert "Please take your ticket $20.70" in s.texts("message")
    assert sorted(p.name for p in s.frames.iterdir()) == [
        "01-credited.png", "02-bets.png", "03-war.png", "04-war-won.png", "05-settled.png", "06-ticket.png"]
