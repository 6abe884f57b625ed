"""Acceptance (issue 10): a whole session on a terminal with simulated devices, played only through
the touchscreen simulator (and a note through the bill validator simulator).

Insert $20, touch chips onto BAC, WAR, TIE and WAR POOL, touch DEAL, watch the war resolve (the
shoe is stacked with seed 000's FIG. 4/7/8 hand: Q 3 against 2 A ties at 3, the war cards 10/10
tie again, 6/9 win it for the player), touch CASH OUT, and the simulated printer holds a voucher
for exactly the credits left. Every touch goes finger -> MicroTouch wire protocol -> the production
driver -> its calibration -> the terminal -> the screens' hit areas. Frames are saved and checked.
"""

from __future__ import annotations

from firmware.ledger.ledger import accounting_difference
from tests.ui.conftest import region_pixels
from tests.ui.session import Seen

FIG_8 = "Qs 2d 3h Ah Td Ts 6c 9s"          # dealing order: spot 1, dealer, spot 1, dealer, war cards



def test_a_player_session_by_touch_only(session):
    s = session
    terminal, app = s.terminal, s.app
    # --- $20 in ---------------------------------------------------------------------------------
    s.until(lambda: terminal.status()["accepting_notes"], "the validator to take notes")
    validator = s.rig.simulator("bill_validator")
    s.until(lambda: validator.insert_note(20), "the validator to take the note", dt=0)
    s.until(lambda: terminal.status()["credits_cents"] == 2000, "$20 credited")
    s.step()
    s.save("01-credited")
    assert "$20.00" in s.texts("meter.credit") and "2,000 credits" in s.texts("meter.credit")

    # --- wagers, by touch ------------------------------------------------------------------------
    for name in ("chip.10", "spot.1.bac", "spot.1.war", "chip.5", "spot.1.tie", "chip.10", "spot.1.war_pool"):
        s.touch(name)
    assert app.slip.wagers == {1: {"bac": 10, "war": 10, "tie": 5, "war_pool": 10}}
    s.save("02-bets")
    assert "35 credits" in s.texts("meter.bet")
    for wager in ("bac", "war", "tie", "war_pool"):
        assert "10" in s.texts(f"spot.1.{wager}") or "5" in s.texts(f"spot.1.{wager}")

    # --- the dealer stacks the shoe; DEAL ---------------------------------------------------------
    shoe_sim, shoe = s.rig.simulator("shoe"), s.rig.device("shoe")
    shoe_sim.load(FIG_8.split())
    drawn = []
    s.until(lambda: (drawn.append(c) if (c := shoe_sim.draw()) is not None else None) or len(drawn) == 8,
            "the dealer to draw the stacked cards")
    s.until(lambda: shoe.queued == 8, "the shoe to read the 8 cards")
    s.touch("button.deal")
    s.until(lambda: app.playback is not None, "the round")
    record = terminal.last_record
    assert record["cards_dealt"] == FIG_8.split()
    assert record["seats"][0]["wagers"] == {"bac": 10, "war": 10, "tie": 5, "war_pool": 10}

    # --- the round, shown step by step: the war resolves, then the pool ---------------------------
    def war():
        assert "WAR!" in s.texts("banner") and "AT WAR" in s.texts("spot.1.hand")
        assert "spot.1.bac.result" not in app.frame.regions              # not decided yet
        assert "WIN 45" in s.texts("spot.1.tie.result")                   # the tie bet: 5 at 8 to 1, 40 + 5

    def war_won():
        assert "Spot 1 wins the war" in s.texts("message")
        assert s.texts("spot.1.hand.score") == "WAR 9" and s.texts("dealer.score") == "WAR 2"
        assert "WIN 20" in s.texts("spot.1.bac.result") and "PUSH 10" in s.texts("spot.1.war.result")
        # WIN is the sum of the tags shown (20 + 10 + 45), on the credit meter too; the pool's is not yet.
        assert "75 credits" in s.texts("meter.win") and "2,040 credits" in s.texts("meter.credit")

    def pool():
        assert "wins the war pot" in s.texts("message")

    s.watch(Seen("war", "03-war", war),
            Seen("war_step", "04-war-won", war_won, when=lambda: "spot.1.bac.result" in app.frame.regions),
            Seen("pool_won", "05-pool", pool))
    s.step()
    s.save("06-settled")
    # 2,000 - 35 staked; paid: BAC 20, WAR 10 (pushes), TIE 45, the pot (10 + the house's 10) less 5%: 19.
    assert "2,059 credits" in s.texts("meter.credit") and "$20.59" in s.texts("meter.credit")
    assert "WIN 19" in s.texts("spot.1.war_pool.result") and "You win $0.94" in s.texts("message")
    assert "94 credits" in s.texts("meter.win")
    assert terminal.ledger.credits == 2059
    # The war cards are on the table, and the result tags are drawn (gold for a win).
    win_tag = region_pixels(app.surface, app.scaler, app.frame.regions["spot.1.bac.result"].inset(30, 6))
    assert (abs(win_tag.reshape(-1, 3).astype(int) - (255, 200, 40)).sum(axis=1) < 60).mean() > 0.5

    # --- cash out: a voucher for exactly the credits ----------------------------------------------
    printer = s.rig.simulator("printer")
    s.touch("button.cash_out")
    s.until(lambda: terminal.status()["last_ticket"] is not None and terminal.status()["state"] == "IDLE",
            "the ticket printed")
    s.step()
    s.save("07-ticket")
    voucher = printer.printed[-1].voucher()
    assert voucher.amount_cents == 2059 and voucher.validation == terminal.status()["last_ticket"]
    assert terminal.ledger.credits == 0 and terminal.ledger.meters["ticket_out"] == 2059
    assert "Please take your ticket $20.59" in s.texts("message")
    assert accounting_difference(terminal.ledger.meters) == 0
    assert sorted(p.name for p in s.frames.iterdir()) == [
        "01-credited.png", "02-bets.png", "03-war.png", "04-war-won.png", "05-pool.png", "06-settled.png",
        "07-ticket.png"]

