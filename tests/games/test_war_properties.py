"""Properties over random shoes, wagers and options: credits are conserved, every round ends,
and every record replays to an identical record."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.cards.source import RngShoe
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel, replay
from firmware.rng.service import RngService

WAR_GAMES = ("baccarat-war", "blackjack-war", "holdem-war")


@st.composite
def war_round(draw):
    game_id = draw(st.sampled_from(WAR_GAMES))
    modes = ["baccarat", "high_card", "aggregate"] if game_id == "baccarat-war" else ["high_card", "aggregate"]
    options = {
        "decks": draw(st.sampled_from([1, 2, 8])),
        "war_scoring": draw(st.sampled_from(modes)),
        "war_win_pays": draw(st.sampled_from(["push", "even"])),
        "war_wager": draw(st.sampled_from(["required", "optional"])),
        "max_war_steps": draw(st.integers(1, 6)),
        "pool": {"commission": draw(st.sampled_from(["0", "5", "2.5", "33"])),
                 "dealer_ante": draw(st.integers(0, 9))},
    }
    if options["decks"] == 1:
        options["four_card_pays"] = "0,100,50,22,16,13,11"
    if game_id == "holdem-war":
        options["four_card"] = draw(st.booleans())
    seats = draw(st.lists(st.integers(1, 7), min_size=1, max_size=7, unique=True))
    amount = st.integers(1, 50)
    wagers = {}
    for s in seats:
        bac = draw(amount)
        bets = {"bac": bac}
        if options["war_wager"] == "required":
            bets["war"] = bac
        elif draw(st.booleans()):
            bets["war"] = draw(amount)
        for name in ("tie", "four_card", "war_pool"):
            if draw(st.booleans()):
                bets[name] = draw(amount)
        wagers[s] = bets
    seed = draw(st.integers(0, 2**32))
    return game_id, options, wagers, seed


@settings(max_examples=150, deadline=None)
@given(war_round())
def test_credits_conserved_rounds_end_and_records_replay(case):
    game_id, option_table, wagers, seed = case
    game = get_game(game_id)
    options = make_options(game_id, option_table)
    if not options.four_card:
        wagers = {s: {k: v for k, v in b.items() if k != "four_card"} for s, b in wagers.items()}
    kernel = RoundKernel(game, options)
    source = RngShoe(RngService.seeded(seed), game.shoe(options))
    settlement = kernel.play(wagers, source)
    # Conservation: the nets of all wagers plus the house's own result sum to zero.
    assert settlement.players_net + settlement.house_net == 0
    record = kernel.record()
    assert record["net"] + record["house_net"] == 0
    # Every wager placed has exactly one result.
    for seat in record["seats"]:
        assert set(seat["results"]) == set(seat["wagers"])
    # Replay from the record's own cards gives the identical record.
    assert replay(record) == record
