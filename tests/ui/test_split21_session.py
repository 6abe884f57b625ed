"""Acceptance: a whole Split 21 Stud session on a terminal with simulated devices, played only
through the touchscreen simulator (and a $20 note through the bill validator simulator).

Insert $20, touch chips onto ANTE, LOW (HIGH follows at 2 x LOW) and JACKPOT, touch DEAL, set the
five cards by touching them (a foul setting first: refused on the spot, nothing sent; then RESET
and the player's own setting), SET HAND, watch the dealer's hands and the results, CASH OUT: the
simulated printer's voucher is exactly the credits left.

The terminal rolls its die from the session's seeded RNG: it is 8 (asserted), so dealing starts at
position 1 and the stacked shoe deals spot 1 Kd 9s As 5h 6c and the house (position 8) Qh Qd 7c 4s 3h
(``split21.stack``).
"""

from __future__ import annotations

from firmware.ui.games.split21 import DEMO_FILLER, stack
from tests.ui.session import Seen

GAMES = {"enabled": ["split21-stud"], "default": "split21-stud", "seats": 1,
         "options": {"split21-stud": {"jackpot": {"enabled": True}}}}
DIE = 8
SHOE = stack(DIE, {1: "Kd 9s As 5h 6c", 8: "Qh Qd 7c 4s 3h"}, DEMO_FILLER).split()


def test_a_split21_stud_session_by_touch_only(session):
    s = session
    terminal, app = s.terminal, s.app
    # --- $20 in; wagers, by touch: ANTE 10, LOW 10 (HIGH 20 follows), JACKPOT 5 ------------------------
    s.bet(("chip.10", "spot.1.ante", "spot.1.low", "chip.5", "spot.1.jackpot"),
          {1: {"ante": 10, "low": 10, "high": 20, "jackpot": 5}})
    assert "20" in s.texts("spot.1.high")

    # --- the shoe is stacked; DEAL; the round waits for the setting ---------------------------------
    s.stack_shoe(SHOE)
    s.touch("button.deal")
    s.until(lambda: (terminal.status().get("round") or {}).get("pending"), "the setting decision")
    s.step()
    assert terminal.status()["round"]["dice"] == [DIE]
    assert "Die 8: dealing starts at position 1" in s.texts("dice.note")
    assert s.texts("spot.1.hand.high.score") == "19" and s.texts("spot.1.hand.low.score") == "12"
    assert "Poker: High card" in s.texts("spot.1.summary")
    s.save("03-setting")

    # --- a foul setting: HIGH 5 6 (11) below LOW K 9 A (20): refused, nothing sent -------------------
    for card in (0, 1, 3, 4):                                  # Kd, 9s to LOW; 5h, 6c to HIGH
        s.touch(f"spot.1.card.{card}")
    assert s.texts("spot.1.hand.high.score") == "11" and s.texts("spot.1.hand.low.score") == "20"
    s.touch("button.set_hand")
    s.step()
    assert "HIGH hand must rank at least as high as the LOW hand" in s.texts("spot.1.note")
    assert terminal.status()["round"]["pending"] and terminal.last_record is None
    s.save("04-foul-refused")

    # --- RESET, then A K HIGH (21 in two cards) and 9 5 6 LOW (20); SET HAND ------------------------
    s.touch("button.reset")
    s.touch("spot.1.card.2")                                   # As to HIGH
    s.touch("spot.1.card.1")                                   # 9s to LOW
    assert s.texts("spot.1.hand.high.score") == "21 in two cards" and s.texts("spot.1.hand.low.score") == "20"
    s.save("05-set")
    s.touch("button.set_hand")
    s.until(lambda: app.playback is not None, "the round")
    record = terminal.last_record
    assert record["decisions"] == [{"seat": 1, "action": "set:Kd As|9s 5h 6c"}]
    assert record["cards_dealt"] == SHOE

    # --- the round, shown: the dealer's hands, ANTE first, then HIGH and LOW -------------------------
    def dealer():
        assert s.texts("dealer.hand.high.score") == "21" and s.texts("dealer.hand.low.score") == "13"
        assert "spot.1.ante.result" not in app.frame.regions

    def hands():
        assert s.texts("spot.1.ante.result") == "LOSE" and "WIN 40" in s.texts("spot.1.high.result")
        assert "WIN 20" in s.texts("spot.1.low.result")
        assert "60 credits" in s.texts("meter.win") and "2,015 credits" in s.texts("meter.credit")

    s.watch(Seen("dealer", "06-dealer", dealer), Seen("hands", "07-hands", hands))
    # 2,000 - 45 staked; ANTE loses (ace high against the house's pair of queens), HIGH +20 (a
    # two-card 21 beats the house's three-card 21), LOW +10 (20 against 13), JACKPOT: the pot of 5
    # goes to the house's better poker hand (-5). 2,000 - 10 + 20 + 10 - 5 = 2,015.
    s.step()
    assert s.texts("spot.1.jackpot.result") == "LOSE"
    s.settle_and_cash_out(2015, "08-settled", "09-ticket", message="You win $0.60")
    assert sorted(p.name for p in s.frames.iterdir()) == [
        "01-credited.png", "02-bets.png", "03-setting.png", "04-foul-refused.png", "05-set.png", "06-dealer.png",
        "07-hands.png", "08-settled.png", "09-ticket.png"]
