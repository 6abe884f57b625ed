"""Three Card Poker properties over random options, wagers, decisions, time-outs and shoes: credits
are conserved, every wager has exactly one result, PLAY equals ANTE, a player-banker balances the
other seats, and every record replays to an identical record."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.cards.source import RngShoe
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel, replay
from firmware.rng.service import RngService

GAME = "three-card-poker"


@st.composite
def tcp_round(draw):
    options = {
        "dealer_cards": draw(st.sampled_from([3, 4])),
        "dealer_qualifies": draw(st.sampled_from(["Q", "none", "pair", "Q-6-4", "K", "5"])),
        "not_qualified": draw(st.sampled_from(["ante_wins", "both_push"])),
        "six_card": draw(st.booleans()),
        "hints": draw(st.booleans()),
        "mandatory": draw(st.sampled_from(["ante", "none", "pair_plus", "ante,pair_plus"])),
        "ante_bonus_pays": draw(st.sampled_from(["5,4,1", "5,3,1", "0,0,0"])),
        "pair_plus_pays": draw(st.sampled_from(["40,30,6,4,1", "40,30,6,3,1", "100,50,12,12,3"])),
    }
    banker = None
    if draw(st.booleans()):
        banker = draw(st.integers(1, 7))
        mode = draw(st.sampled_from(["flat", "percent"]))
        amount = draw(st.sampled_from(["0", "1", "3"] if mode == "flat" else ["0", "2.5", "5", "33"]))
        options |= {"banking": "player", "banker_seat": banker,
                    "commission": {"mode": mode, "amount": amount}}
    required = set() if options["mandatory"] == "none" else set(options["mandatory"].split(","))
    offered = ["ante", "pair_plus"] + (["six_card"] if options["six_card"] else [])
    seats = draw(st.lists(st.integers(1, 7).filter(lambda s: s != banker), min_size=1, max_size=6,
                          unique=True))
    wagers = {}
    choices = {}
    for s in seats:
        names = set(draw(st.lists(st.sampled_from(offered), min_size=1, unique=True))) | required
        wagers[s] = {n: draw(st.integers(1, 50)) for n in sorted(names)}
        choices[s] = draw(st.sampled_from(["play", "fold", "auto", "timeout"]))
    seed = draw(st.integers(0, 2**32))
    return options, wagers, choices, seed


@settings(max_examples=150, deadline=None)
@given(tcp_round())
def test_credits_conserved_results_complete_and_records_replay(case):
    option_table, wagers, choices, seed = case
    game = get_game(GAME)
    options = make_options(GAME, option_table)
    kernel = RoundKernel(game, options)
    pending = kernel.begin(wagers, RngShoe(RngService.seeded(seed), game.shoe(options)))
    assert {r.seat for r in pending} == {s for s, b in wagers.items() if "ante" in b}
    timed_out: list[tuple[int, str]] = []
    while pending:
        request = pending[0]
        choice = choices[request.seat]
        if choice == "timeout":
            timed_out = kernel.time_out()
            break
        action = game.automatic_decision(kernel.round, request) if choice == "auto" else choice
        pending = kernel.decide(request.seat, action)
    assert all(action == "fold" for _, action in timed_out)
    settlement = kernel.settlement
    assert settlement is not None
    # Conservation: every wager's net plus the house's own result sum to zero.
    assert settlement.players_net + settlement.house_net == 0
    record = kernel.record()
    assert record["net"] + record["house_net"] == 0
    decided = {d["seat"]: d["action"] for d in record["decisions"]}
    fees = 0
    others = 0
    for entry in record["seats"]:
        results = entry["results"]
        if entry["banker"]:
            assert entry["seat"] == option_table.get("banker_seat") and entry["wagers"] == {}
            assert set(results) == {"bank"}
            continue
        w = entry["wagers"]
        played = decided.get(entry["seat"]) == "play"
        # Every wager placed has exactly one result; PLAY exists exactly when the seat played.
        assert set(results) - {"play", "commission"} == set(w)
        assert ("play" in results) is played
        if played:
            assert entry["stakes"]["play"] == w["ante"]
        elif "ante" in w:
            assert results["ante"] == {"outcome": "fold", "net": -w["ante"]}
        for name, r in results.items():
            assert isinstance(r["net"], int)
            if name != "commission":
                others += r["net"]
        fees -= results.get("commission", {"net": 0})["net"]
    if "banker_seat" in option_table:
        bank = next(e for e in record["seats"] if e["banker"])["results"]["bank"]["net"]
        assert bank == -others                       # the banker is every other seat's counterparty
        assert record["house_net"] == fees            # the house only collects its commission
    else:
        assert record["house_net"] == -others and fees == 0
    # Replay from the record's own cards gives the identical record.
    assert replay(record) == record
