"""Acceptance: a whole Double Super 9 session on a terminal with simulated devices, played only
through the touchscreen simulator (and a $20 note through the bill validator simulator).

Insert $20, touch a 25 chip onto BET, touch DEAL, set the four cards by touch (a foul first: FRONT
5 5 above BACK 6 3, refused on the spot and nothing sent), touch HOUSE WAY (shown: FRONT 6 3, BACK
5 5), SET HAND, watch the banker's hands and the comparisons, CASH OUT: the simulated printer's
voucher is exactly the credits left.

The terminal rolls its three dice from the session's seeded RNG: 5, 2, 6 (asserted): 13 counted
from the banker at position 8 as 1 gives position 4, so dealing goes 4, 5, 6, 7, 8, 1, 2, 3, and the
stacked shoe deals spot 1 6s 5d 3h 5c and the house 5s 5h 2d 6c (``setting.stack``).
"""

from __future__ import annotations

from firmware.games.double_super_9 import dealing_order, dice_position
from firmware.ui.games.ds9 import DEMO_FILLER
from firmware.ui.games.setting import stack
from tests.ui.session import Seen

GAMES = {"enabled": ["double-super-9"], "default": "double-super-9", "seats": 1}
DICE = [5, 2, 6]
SHOE = stack(dealing_order(dice_position(sum(DICE), 8)), {1: "6s 5d 3h 5c", 8: "5s 5h 2d 6c"}, DEMO_FILLER, 4).split()


def test_a_double_super_9_session_by_touch_only(session):
    s = session
    terminal, app = s.terminal, s.app
    s.bet(("chip.25", "spot.1.bet"), {1: {"bet": 25}}, frame="02-bet")

    s.stack_shoe(SHOE)
    s.touch("button.deal")
    s.until(lambda: (terminal.status().get("round") or {}).get("pending"), "the setting decision")
    s.step()
    assert terminal.status()["round"]["dice"] == DICE
    assert "5 + 2 + 6 = 13" in s.texts("dice.note") and "position 4 is dealt to first" in s.texts("dice.note")
    assert s.texts("spot.1.hand.front.score") == "1 point, 6 high" and s.texts("spot.1.hand.back.score") == \
        "8 points, 5 high"
    s.save("03-setting")

    # --- a foul: FRONT 5 5 (a pair) above BACK 6 3 (Super 9): refused, nothing sent ----------------
    s.touch("spot.1.card.0")                                   # 6s to BACK
    s.touch("spot.1.card.3")                                   # 5c to FRONT
    assert s.texts("spot.1.hand.front.score") == "Pair 5-5" and s.texts("spot.1.hand.back.score") == "SUPER 9, 6 high"
    s.touch("button.set_hand")
    s.step()
    assert "BACK hand must rank at least as high as the FRONT hand" in s.texts("spot.1.note")
    assert terminal.status()["round"]["pending"] and terminal.last_record is None
    s.save("04-foul-refused")

    # --- HOUSE WAY: shown first, then sent --------------------------------------------------------
    s.touch("button.house_way")
    assert s.texts("spot.1.hand.front.score") == "SUPER 9, 6 high" and s.texts("spot.1.hand.back.score") == "Pair 5-5"
    assert "The house way is shown" in s.texts("spot.1.note") and terminal.status()["round"]["pending"]
    s.save("05-house-way")
    s.touch("button.set_hand")
    s.until(lambda: app.playback is not None, "the round")
    record = terminal.last_record
    assert record["decisions"] == [{"seat": 1, "action": "house-way"}] and record["seats"][0]["house_way"]
    assert record["dice"] == DICE and record["cards_dealt"] == SHOE

    def banker():
        assert s.texts("dealer.hand.front.score") == "8 points, 6 high" and s.texts("dealer.hand.back.score") == \
            "Pair 5-5"
        assert "spot.1.bet.result" not in app.frame.regions

    def compared():
        assert "WIN" in s.texts("spot.1.hand.front.result") and "COPY" in s.texts("spot.1.hand.back.result")
        assert "WIN 48" in s.texts("spot.1.bet.result") and "2,023 credits" in s.texts("meter.credit")

    s.watch(Seen("dealer", "06-banker", banker), Seen("spot", "07-compared", compared))
    # 2,000 - 25 staked; FRONT Super 9 beats 8 points, BACK 5 5 copies 5 5: copy + win wins 1 to 1,
    # less 5% commission rounded up (1.25 -> 2): +23. 2,000 + 23 = 2,023.
    s.settle_and_cash_out(2023, "08-settled", "09-ticket", message="You win $0.48")
    assert sorted(p.name for p in s.frames.iterdir()) == [
        "01-credited.png", "02-bet.png", "03-setting.png", "04-foul-refused.png", "05-house-way.png",
        "06-banker.png", "07-compared.png", "08-settled.png", "09-ticket.png"]
