"""The round kernel: one table-driven machine, write-ahead journal entries, wager validation first."""

from __future__ import annotations

import pytest
from transitions import MachineError

from firmware.cards.card import parse_cards
from firmware.cards.source import StackedSource
from firmware.cli import main
from firmware.games.errors import WagerError
from firmware.games.registry import get_game, make_options
from firmware.kernel.journal import MemoryJournal
from firmware.kernel.limits import BetLimits
from firmware.kernel.round import RoundKernel
from firmware.kernel.states import TRANSITIONS, RoundState

FIG8 = parse_cards("Qs 2d 3h Ah Td Ts 6c 9s")


DEFAULT_LIMITS = BetLimits()


def kernel(journal=None, limits=DEFAULT_LIMITS):
    game = get_game("baccarat-war")
    return RoundKernel(game, make_options(game.id), limits=limits, journal=journal)


def test_journal_gets_every_transition_before_it_takes_effect_with_the_cards_consumed():
    journal = MemoryJournal()
    k = kernel(journal)
    k.play({7: {"bac": 10, "war": 10, "tie": 5}}, StackedSource(FIG8), round_id="r1")
    steps = [(e.trigger, e.source, e.dest) for e in journal.entries]
    assert steps == [
        ("deal", "BETTING", "DEALING"),
        ("showdown", "DEALING", "SHOWDOWN"),
        ("settle", "SHOWDOWN", "SETTLEMENT"),
        ("complete", "SETTLEMENT", "COMPLETE"),
    ]
    assert [e.seq for e in journal.entries] == [0, 1, 2, 3]
    assert all(e.round_id == "r1" for e in journal.entries)
    # The wagers are journaled before any card is dealt; the initial cards before the wars;
    # the war cards before settlement; the results before the round completes (and is paid).
    assert journal.entries[0].data["wagers"] == {"7": {"bac": 10, "war": 10, "tie": 5}}
    assert journal.entries[0].data["game"] == "baccarat-war"
    assert journal.entries[0].data["options"]["decks"] == 8
    assert journal.entries[0].cards == ()
    assert journal.entries[1].cards == ("Qs", "2d", "3h", "Ah")
    assert journal.entries[2].cards == ("Td", "Ts", "6c", "9s")
    assert journal.entries[3].data["net"] == 50
    assert journal.entries[3].data["results"]["7"]["tie"] == {"outcome": "win", "net": 40}


def test_a_refused_wager_deals_no_card_and_journals_nothing():
    journal = MemoryJournal()
    k = kernel(journal)
    source = StackedSource(FIG8)
    with pytest.raises(WagerError):
        k.play({1: {"bac": 10, "war": 5}}, source)
    assert source.dealt == [] and journal.entries == []
    with pytest.raises(WagerError, match="more than the 15 credits"):
        k.play({1: {"bac": 10, "war": 10}}, source, credits=15)
    assert source.dealt == [] and journal.entries == []


def test_limits_are_checked_per_wager_and_per_round():
    k = kernel(limits=BetLimits(min_bet=5, max_bet=100, max_total_bet=150))
    with pytest.raises(WagerError, match="below the table minimum 5"):
        k.play({1: {"bac": 2, "war": 2}}, StackedSource(FIG8))
    with pytest.raises(WagerError, match="above the round maximum 150"):
        k.play({1: {"bac": 100, "war": 100}}, StackedSource(FIG8))


def test_no_transition_outside_the_table():
    k = kernel()
    assert k.phase is RoundState.BETTING
    with pytest.raises(MachineError):
        k.settle()
    with pytest.raises(AttributeError):
        k.to_COMPLETE()  # auto_transitions=False: no "jump anywhere" triggers exist


def test_the_machine_is_reused_round_after_round():
    k = kernel()
    for _ in range(3):
        k.play({7: {"bac": 10, "war": 10}}, StackedSource(FIG8))
        assert k.phase is RoundState.COMPLETE
        assert k.record()["net"] == 10


def test_every_kernel_shares_the_one_round_machine_and_keeps_its_own_state():
    # the machine is built once per process (a replay builds a kernel for every round it replays)
    a_journal, b_journal = MemoryJournal(), MemoryJournal()
    a, b = kernel(a_journal), kernel(b_journal)
    assert a.machine is b.machine is kernel(MemoryJournal()).machine
    assert kernel().machine is kernel().machine is not a.machine      # no journal: no write-ahead
    # interleaved rounds: each kernel moves only its own phase and journals only into its own journal
    a.begin({7: {"bac": 10, "war": 10}}, StackedSource(FIG8), round_id="ra")
    assert (a.phase, b.phase) == (RoundState.COMPLETE, RoundState.BETTING)
    b.begin({7: {"bac": 10, "war": 10}}, StackedSource(FIG8), round_id="rb")
    assert {e.round_id for e in a_journal.entries} == {"ra"} and {e.round_id for e in b_journal.entries} == {"rb"}
    assert len(a_journal.entries) == len(b_journal.entries) == 4
    with pytest.raises(MachineError):
        b.settle()                                # COMPLETE takes no settle, whatever another kernel is in
    assert [t for t, _s, _d in TRANSITIONS] == [t for t in a.machine.events]


def test_table_has_every_state_reachable_from_betting():
    reached = {RoundState.BETTING}
    changed = True
    while changed:
        changed = False
        for _trigger, sources, dest in TRANSITIONS:
            if dest not in reached and any(s in reached for s in sources):
                reached.add(dest)
                changed = True
    assert reached == set(RoundState)


def test_egm_diagram_writes_the_round_machine(capsys, tmp_path):
    assert main(["diagram", "baccarat-war"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith('digraph "baccarat-war round"')
    assert 'BETTING -> DEALING [label="deal"]' in dot
    assert "DECISIONS" not in dot            # war games never wait for players
    out = tmp_path / "round.mmd"
    assert main(["diagram", "baccarat-war", "--format", "mermaid", "--out", str(out)]) == 0
    text = out.read_text()
    assert "stateDiagram-v2" in text and "SETTLEMENT --> COMPLETE: settle" not in text
    assert "SETTLEMENT --> COMPLETE: complete" in text


def test_replay_applies_decisions_in_the_recorded_order_with_time_outs():
    """Players answer in any order; a replay must follow the record, not the request order."""
    from firmware.cards.source import RngShoe
    from firmware.kernel.round import replay
    from firmware.rng.service import RngService

    game = get_game("split21-stud")
    options = make_options(game.id, {"jackpot": {"enabled": False}})
    kernel = RoundKernel(game, options)
    source = RngShoe(RngService.seeded("order"), game.shoe(options))
    wagers = {s: {"ante": 5, "low": 5, "high": 10} for s in (1, 2, 3)}
    pending = kernel.begin(wagers, source, dice=(4,))
    assert [r.seat for r in pending] == [1, 2, 3]
    kernel.decide(3, "house-way")
    kernel.decide(1, pending[0].actions[0])
    kernel.time_out()                                   # seat 2 runs out of time
    record = kernel.record()
    assert [(d["seat"], d.get("timed_out", False)) for d in record["decisions"]] == [
        (3, False), (1, False), (2, True)]
    assert replay(record) == record


def test_limits_spare_the_uncapped_bank_and_fixed_fees_but_credits_cover_them():
    from firmware.kernel.limits import validate_wagers

    game = get_game("double-super-9")
    options = make_options(game.id, {"banking": "player", "collection": 1})
    limits = BetLimits(min_bet=5, max_bet=100, max_total_bet=200)
    wagers = {1: {"bank": 1000, "collection": 1}, 2: {"bet": 50, "collection": 1}}
    assert validate_wagers(game, options, wagers, limits, credits=1052) == wagers
    with pytest.raises(WagerError, match="total stake 1052 is more than the 1051 credits"):
        validate_wagers(game, options, wagers, limits, credits=1051)
    with pytest.raises(WagerError, match="bet 150 is above the table maximum 100"):
        validate_wagers(game, options, {1: {"bank": 1000, "collection": 1},
                                        2: {"bet": 150, "collection": 1}}, limits)


def test_credits_reserve_what_decisions_and_fees_may_stake_later():
    """A Three Card Poker ante needs credits for its PLAY too, and a player-banked round for the
    commission: otherwise a round could deal and then be unable to complete."""
    from firmware.kernel.limits import validate_wagers

    game = get_game("three-card-poker")
    house = make_options(game.id)
    with pytest.raises(WagerError, match="total stake 20 with the 10 its decisions and fees may add "
                                         "is more than the 19 credits"):
        validate_wagers(game, house, {1: {"ante": 10}}, BetLimits(), credits=19)
    assert validate_wagers(game, house, {1: {"ante": 10}}, BetLimits(), credits=20)
    with pytest.raises(WagerError, match="above the round maximum 15"):
        validate_wagers(game, house, {1: {"ante": 10}}, BetLimits(max_total_bet=15))
    banked = make_options(game.id, {"banking": "player", "banker_seat": 1,
                                    "commission": {"mode": "flat", "amount": 2}})
    assert game.reserved_stake(banked, {2: {"ante": 10}, 3: {"ante": 5}}) == 15 + 2 + 2


def test_a_play_decision_completes_with_exactly_the_reserved_credits(tmp_path):
    from firmware.ledger.ledger import Ledger, accounting_difference

    game = get_game("three-card-poker")
    options = make_options(game.id)
    cards = parse_cards("As Ah Ad 2c 7d 9h")          # seat 1 trips, dealer 2-7-9: no qualifier
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(10)                             # 10 credits at 1 cent: no room for PLAY
        kernel = RoundKernel(game, options, journal=ledger)
        with pytest.raises(WagerError, match="more than the 10 credits"):
            kernel.begin({1: {"ante": 10}}, StackedSource(cards), credits=ledger.credits)
        assert ledger.open_round is None and ledger.credits == 10
        ledger.bill_in(10)
        pending = kernel.begin({1: {"ante": 10}}, StackedSource(cards), credits=ledger.credits)
        kernel.decide(pending[0].seat, "play")
        assert kernel.phase is RoundState.COMPLETE
        assert accounting_difference(ledger.meters) == 0 and ledger.open_round is None


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_decisions_time_out_at_the_configured_limit_with_the_documented_default():
    game = get_game("three-card-poker")
    clock = FakeClock()
    kernel = RoundKernel(game, make_options(game.id), decision_timeout_s=30, clock=clock)
    cards = parse_cards("As Ah Ad 2c 7d 9h")
    pending = kernel.begin({1: {"ante": 10}}, StackedSource(cards))
    assert [r.default for r in pending] == ["fold"] and kernel.decisions_deadline == 1030.0
    clock.now = 1029.9
    assert kernel.expire() == [] and kernel.phase is RoundState.DECISIONS
    clock.now = 1030.0
    assert kernel.expire() == [(1, "fold")]
    record = kernel.record()
    assert record["decisions"] == [{"seat": 1, "action": "fold", "timed_out": True}]
    assert record["seats"][0]["results"]["ante"] == {"outcome": "fold", "net": -10}
    assert kernel.expire() == []                       # nothing left to time out


def test_a_games_own_time_limit_wins_and_no_limit_never_expires():
    game = get_game("split21-stud")
    clock = FakeClock()
    options = make_options(game.id, {"setting_time_limit_s": 20})
    kernel = RoundKernel(game, options, decision_timeout_s=60, clock=clock)
    assert kernel.decision_timeout_s == 20
    unlimited = RoundKernel(get_game("three-card-poker"), make_options("three-card-poker"),
                            clock=clock)
    unlimited.begin({1: {"ante": 10}}, StackedSource(parse_cards("As Ah Ad 2c 7d 9h")))
    clock.now += 1e9
    assert unlimited.expire() == [] and unlimited.decisions_deadline is None
    with pytest.raises(Exception, match="must be positive"):
        RoundKernel(get_game("three-card-poker"), make_options("three-card-poker"),
                    decision_timeout_s=0)


def test_the_decision_view_shows_the_deciding_player_their_own_cards_only():
    from firmware.cards.source import RngShoe
    from firmware.rng.service import RngService

    game = get_game("three-card-poker")
    kernel = RoundKernel(game, make_options(game.id))
    cards = parse_cards("As Ah Ad 2c 7d 9h")
    kernel.begin({1: {"ante": 10}}, StackedSource(cards))
    view = kernel.decision_view(1)
    assert kernel.decision_view(2) == {}
    kernel.decide(1, "play")
    assert kernel.decision_view(1) == {}                                   # no decision awaited
    record = kernel.record()
    assert sorted(view["cards"]) == sorted(seat_cards(record["seats"][0]))
    assert not set(view["cards"]) & set(seat_cards(record["dealer"]))     # the dealer's stay hidden
    for game_id, options, wagers, dice, size in (
            ("split21-stud", {"jackpot": {"enabled": False}}, {"ante": 5, "low": 5, "high": 10}, (4,), 5),
            ("double-super-9", {}, {"bet": 10}, (1, 2, 3), 4)):
        game = get_game(game_id)
        opts = make_options(game.id, options)
        kernel = RoundKernel(game, opts)
        source = RngShoe(RngService.seeded("view"), game.shoe(opts))
        pending = kernel.begin({1: wagers}, source, dice=dice)
        assert pending, game_id
        view = kernel.decision_view(1)
        assert len(view["cards"]) == size and set(view["cards"]) <= set(source_cards(source)), game_id
        record_before = kernel.decide(1, "house-way")
        assert record_before == [] and kernel.decision_view(1) == {}
        seat = next(s for s in kernel.record()["seats"] if s["seat"] == 1)
        assert sorted(view["cards"]) == sorted(seat_cards(seat)), (game_id, seat)


def source_cards(source) -> list[str]:
    from firmware.cards.card import format_cards

    return format_cards(source.dealt)


def seat_cards(seat: dict) -> list[str]:
    """The five (or four) cards of a seat in a round record, whatever the game calls them."""
    for key in ("cards", "hand"):
        value = seat.get(key)
        if isinstance(value, list):
            return value
        if isinstance(value, dict) and isinstance(value.get("cards"), list):
            return value["cards"]
    raise AssertionError(f"no cards in {seat}")
