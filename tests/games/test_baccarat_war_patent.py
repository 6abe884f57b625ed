"""The patent's worked scenarios (rules/baccarat-war.md, end), stacked through ``egm round --cards``.

Dealing order: first card to each active seat ascending then the dealer, second card likewise; war
cards one per hand that needs one per step, seats ascending, dealer last.
"""

from __future__ import annotations

from tests.games.helpers import POOL_ON, egm_round, outcome, seat, wagers


def test_figs_4_7_8_spot_7_wins_the_war_on_the_second_war_card(capsys):
    # Spot 7 (Q,3) and the dealer (2,1) tie at 3; war cards 10/10 tie again at 3; then 6 and 9:
    # spot 7 scores Q+3+10+6 = 9 against 2+1+10+9 = 2 and wins BAC; its TIE bet wins.
    rec = egm_round(capsys, "baccarat-war", *wagers("7:bac=10", "7:war=10", "7:tie=5"),
                    "--cards", "Qs 2d 3h Ah Td Ts 6c 9s")
    s7 = seat(rec, 7)
    assert s7["cards"] == ["Qs", "3h"] and s7["score"] == 3
    assert rec["dealer"]["cards"] == ["2d", "Ah"] and rec["dealer"]["score"] == 3
    assert s7["war_cards"] == ["Td", "6c"]
    assert rec["dealer"]["war_cards"] == ["Ts", "9s"]
    assert outcome(rec, 7, "bac") == ("win", 10)
    assert outcome(rec, 7, "war") == ("push", 0)          # war_win_pays = push (default)
    assert outcome(rec, 7, "tie") == ("win", 40)          # 8:1 on 5
    assert rec["net"] == 50 and rec["house_net"] == -50
    assert rec["wars"]["steps"] == 2


def test_figs_4_7_8_with_war_win_paying_even_money(capsys):
    rec = egm_round(capsys, "baccarat-war", *wagers("7:bac=10", "7:war=10"),
                    "--option", "war_win_pays=even", "--cards", "Qs 2d 3h Ah Td Ts 6c 9s")
    assert outcome(rec, 7, "bac") == ("win", 10)
    assert outcome(rec, 7, "war") == ("win", 10)
    assert rec["net"] == 20


def test_fig_10_pool_contest_spot_3_wins_on_the_sixth_card(capsys):
    # Spot 3 (4,3) and spot 5 (7,Q) tie at 7 and contest the pot; the dealer's 9 is a higher single
    # hand and is out. War cards 2/2, 10/Q, 8/8, 9/8: spot 3 wins with 6 against 5.
    rec = egm_round(
        capsys, "baccarat-war",
        *POOL_ON,
        *wagers("3:bac=10", "3:war=10", "3:war_pool=5", "5:bac=10", "5:war=10", "5:war_pool=5"),
        "--cards", "4s 7d Kd 3h Qc 9c 2s 2d Th Qd 8c 8d 9h 8s",
    )
    pool = rec["war_pool"]
    assert pool["contestants"] == [3, 5]
    assert pool["winner"] == 3
    assert pool["steps"] == 4
    assert seat(rec, 3)["war_cards"] == ["2s", "Th", "8c", "9h"]
    assert seat(rec, 5)["war_cards"] == ["2d", "Qd", "8d", "8s"]
    assert rec["dealer"]["war_cards"] == []
    # Pot 10, 5% commission rounded in the house's favour: 9 paid, 1 kept.
    assert pool["pot"] == 10 and pool["paid"] == 9 and pool["commission"] == 1
    assert outcome(rec, 3, "war_pool") == ("win", 4)
    assert outcome(rec, 5, "war_pool") == ("lose", -5)
    # Both seats lose BAC to the dealer's 9; WAR pushes.
    assert outcome(rec, 3, "bac") == ("lose", -10) and outcome(rec, 3, "war") == ("push", 0)
    assert rec["net"] + rec["house_net"] == 0


def test_fig_11_three_tied_spots_contest_and_everyone_else_is_out(capsys):
    # Spots 3, 5 and 7 tie at 8; spot 1 holds a higher single 9 and the dealer 6: both are out.
    # Step 1: spot 7 drops to 3 and is eliminated; step 2: spot 3 keeps 9, spot 5 drops to 8.
    rec = egm_round(
        capsys, "baccarat-war",
        *POOL_ON,
        *wagers(*(f"{s}:{w}" for s in (1, 3, 5, 7) for w in ("bac=10", "war=10", "war_pool=5"))),
        "--cards", "9s 8s 3c 4h 6s Kc Kd 5d 4d Kh Ah As 5c Tc 9d",
    )
    pool = rec["war_pool"]
    assert [seat(rec, s)["score"] for s in (1, 3, 5, 7)] == [9, 8, 8, 8]
    assert pool["contestants"] == [3, 5, 7]
    assert pool["eliminated"] == [{"step": 1, "hand": 7}, {"step": 2, "hand": 5}]
    assert pool["winner"] == 3
    assert pool["pot"] == 20 and pool["paid"] == 19 and pool["commission"] == 1
    assert outcome(rec, 3, "war_pool") == ("win", 14)
    for s in (1, 5, 7):
        assert outcome(rec, s, "war_pool") == ("lose", -5)
    for s in (1, 3, 5, 7):
        assert outcome(rec, s, "bac") == ("win", 10)
    assert rec["dealer"]["war_cards"] == [] and seat(rec, 1)["war_cards"] == []
