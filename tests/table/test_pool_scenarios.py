"""The rules' worked pool scenarios (rules/baccarat-war.md, FIGS. 10, 11, 13, 14) at the live table:
station processes at the scenario's spots, the table's stacked source dealing the scenario's cards
(one round), every step of the contest asserted on the controller's record, which must be the
kernel's own record of the same cards and wagers (``egm round``); each station's result and meters
are that record's, and the pot's commission is on the controller's meters.

Dealing order: first card to each seat ascending then the dealer, second card likewise; then one
war card per live contestant per step, seats ascending. Autoplay stakes every offered wager at 10
(bac, war, tie, four_card, war_pool)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from firmware.ledger.ledger import Ledger
from tests.games.helpers import POOL_ON, egm_round, wagers
from tests.table.faults import FaultyDemo, reconcile

WAGERS = ("bac", "war", "tie", "four_card", "war_pool")
UNIT = 10
#: The record's parts that are the game's (not the time, the round id or the credits around it).
GAME_PARTS = ("seats", "dealer", "wars", "war_pool", "net", "house_net")


def _at_the_table(tmp_path: Path, seats: list[int], cards: str) -> tuple[dict[str, Any], FaultyDemo]:
    """One round at the table of stations at ``seats`` dealt ``cards``: the controller's record."""
    demo = FaultyDemo(tmp_path, stations=7, seats=seats, betting_window_s=5.0, source="stacked",
                      stack=cards.split())
    demo.run_with_faults(1, seed=0, kill_p=0.0, drop_p=0.0)
    found = reconcile(tmp_path / "table", {n: demo.station_dir(n) for n in demo.names})
    assert found.problems == [] and found.rounds == 1
    with Ledger.open(tmp_path / "table", read_only=True) as ledger:
        (round_id,) = {ref for _, kind, ref in ledger.log_index() if kind == "round.complete"}
        record = ledger.round_record(round_id)
        meters = dict(ledger.meters)
        shown = ledger.meters_report()["meters"]          # what `egm meters --state-dir DIR/table` prints
    assert meters.get("pool_commission", 0) == record["war_pool"]["commission"] * ledger.denom_cents
    assert shown["pool_commission"] == meters["pool_commission"]
    for k in seats:                                   # each station's result and meters are the record's
        with Ledger.open(demo.station_dir(f"station-{k}"), read_only=True) as ledger:
            (result,) = [ledger.log_record(seq)["body"] for seq, kind, _ in ledger.log_index()
                         if kind == "table.result"]
            m = dict(ledger.meters)
        seat = next(s for s in record["seats"] if s["seat"] == k)
        assert result["results"] == seat["results"], k
        assert m["coin_in"] == sum(result["stakes"].values()) * ledger.denom_cents, k
        assert m["coin_out"] == sum(UNIT + r["net"] for r in seat["results"].values()) * ledger.denom_cents, k
    return record, demo


def _kernel(capsys, seats: list[int], cards: str) -> dict[str, Any]:
    return egm_round(capsys, "baccarat-war", *POOL_ON,
                     *wagers(*(f"{s}:{w}={UNIT}" for s in seats for w in WAGERS)), "--cards", cards)


def _same_game(table: dict[str, Any], kernel: dict[str, Any]) -> None:
    assert {k: table[k] for k in GAME_PARTS} == {k: kernel[k] for k in GAME_PARTS}


def _seat(record: dict[str, Any], k: int) -> dict[str, Any]:
    return next(s for s in record["seats"] if s["seat"] == k)


def test_fig_10_spot_3_wins_the_pot_on_the_sixth_card(tmp_path, capsys) -> None:
    seats, cards = [3, 5], "4s 7d Kd 3h Qc 9c 2s 2d Th Qd 8c 8d 9h 8s"
    record, _ = _at_the_table(tmp_path, seats, cards)
    pool = record["war_pool"]
    assert pool["contestants"] == [3, 5] and pool["steps"] == 4 and pool["winner"] == 3
    assert _seat(record, 3)["war_cards"] == ["2s", "Th", "8c", "9h"]          # 7, 7, 5, 4 -> 6 (sixth card)
    assert _seat(record, 5)["war_cards"] == ["2d", "Qd", "8d", "8s"]          # 7, 9, 7, 5 -> 5
    assert (pool["pot"], pool["paid"], pool["commission"]) == (20, 19, 1)
    assert _seat(record, 3)["results"]["war_pool"] == {"outcome": "win", "net": 9}
    _same_game(record, _kernel(capsys, seats, cards))


def test_fig_11_spots_3_5_7_tied_contest_and_everyone_else_is_out(tmp_path, capsys) -> None:
    seats, cards = [1, 3, 5, 7], "9s 8s 3c 4h 6s Kc Kd 5d 4d Kh Ah As 5c Tc 9d"
    record, _ = _at_the_table(tmp_path, seats, cards)
    pool = record["war_pool"]
    assert [_seat(record, s)["score"] for s in seats] == [9, 8, 8, 8] and record["dealer"]["score"] == 6
    assert pool["contestants"] == [3, 5, 7]                          # the higher single 9 and the dealer are out
    assert pool["eliminated"] == [{"step": 1, "hand": 7}, {"step": 2, "hand": 5}] and pool["winner"] == 3
    assert (pool["pot"], pool["paid"], pool["commission"]) == (40, 38, 2)
    _same_game(record, _kernel(capsys, seats, cards))


#: FIGS. 11-14 with seven stations: spots 3, 5, 7 tied at 8, the others 9, 7, 6, 5 and the dealer 4
#: (no other tie, no war with the dealer). Step 1 (third card): spot 3 falls to 6, spots 5 and 7 tie
#: at 7 (FIG. 12); step 2 (fourth card): they tie again at 7 (FIG. 13); steps 3 and 4 tie at 9 and 4;
#: step 5 (the seventh card): spot 7 wins with 7 against 5 (FIG. 14).
FIG_14 = ("9s 7h 4s 6d 5c 5h 7c 2d "          # first cards: seats 1-7, dealer
          "Kd Qc 4h Kh 3c Kc As 2h "          # second cards
          "8d 9d 9h "                         # step 1: seats 3, 5, 7
          "Ks Qs 2c 2s 5d 5s Ad 3d")          # steps 2-5: seats 5, 7


def test_figs_12_to_14_spot_3_out_then_5_and_7_tie_again_and_7_wins_after_seven_cards(tmp_path, capsys) -> None:
    seats = list(range(1, 8))
    record, _ = _at_the_table(tmp_path, seats, FIG_14)
    pool = record["war_pool"]
    assert [_seat(record, s)["score"] for s in seats] == [9, 7, 8, 6, 8, 5, 8] and record["dealer"]["score"] == 4
    assert pool["contestants"] == [3, 5, 7]
    assert pool["eliminated"] == [{"step": 1, "hand": 3}, {"step": 5, "hand": 5}]
    assert pool["steps"] == 5 and pool["winner"] == 7
    assert _seat(record, 5)["war_cards"] == ["9d", "Ks", "2c", "5d", "Ad"]
    assert _seat(record, 7)["war_cards"] == ["9h", "Qs", "2s", "5s", "3d"]
    assert len(_seat(record, 7)["cards"]) + len(_seat(record, 7)["war_cards"]) == 7
    assert (pool["pot"], pool["paid"], pool["commission"]) == (70, 66, 4)
    assert _seat(record, 7)["results"]["war_pool"] == {"outcome": "win", "net": 56}
    for s in (1, 2, 3, 4, 5, 6):
        assert _seat(record, s)["results"]["war_pool"] == {"outcome": "lose", "net": -10}
    _same_game(record, _kernel(capsys, seats, FIG_14))
