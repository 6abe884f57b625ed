"""Every parser of outside input refuses bad input with its own clear error and nothing else:
card notation, configuration files, game options, and player decisions (which also change
nothing when refused). The default suite runs each property briefly; ``make fuzz`` runs it long."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware.cards.card import format_cards, parse_cards
from firmware.cards.errors import CardError
from firmware.cards.source import RngShoe
from firmware.config.errors import ConfigError
from firmware.config.loader import default_toml, load_config
from firmware.games.errors import DecisionError, OptionError
from firmware.games.options import parse_assignments
from firmware.games.registry import GAMES, get_game, make_options
from firmware.kernel.round import RoundKernel
from firmware.rng.service import RngService

QUICK = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LONG = settings(max_examples=5_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

card_text = st.text(alphabet="AKQJT1098765432shdcx ,\t\n-|", max_size=40) | st.text(max_size=40)


def check_cards(text: str) -> None:
    try:
        cards = parse_cards(text)
    except CardError as exc:
        assert str(exc)
        return
    assert parse_cards(" ".join(format_cards(cards))) == cards


def check_config(tmp_path, data: bytes) -> None:
    path = tmp_path / "egm.toml"
    path.write_bytes(data)
    try:
        load_config(path)
    except ConfigError as exc:
        assert str(exc).startswith(str(path))


def mutate_default(draw_lines: list[int], replacement: str) -> bytes:
    lines = default_toml().splitlines()
    for i in draw_lines:
        lines[i % len(lines)] = replacement
    return "\n".join(lines).encode()


option_keys = st.sampled_from([
    "decks", "banking", "commission", "commission.mode", "commission.amount", "pair_plus_pays",
    "dealer_cards", "foul_setting", "high_multiple", "jackpot.commission", "war_scoring",
    "pool.commission", "max_war_steps", "collection", "banker_spot", "banker_seat", "hints", "x",
])
option_values = st.sampled_from(["0", "1", "-1", "5%", "2.5", "player", "house", "true", "",
                                 "40,30,6,4,1", "1:1", "nan", "1e9", "lose", "refuse"]) | st.text(max_size=8)


def check_options(game_id: str, pairs: list[tuple[str, str]]) -> None:
    try:
        make_options(game_id, parse_assignments([f"{k}={v}" for k, v in pairs]))
    except OptionError as exc:
        assert str(exc)


def check_decision(game_id: str, seed: int, action: str) -> None:
    game = get_game(game_id)
    options = make_options(game_id)
    wagers = {"three-card-poker": {1: {"ante": 10}},
              "split21-stud": {1: {"ante": 5, "low": 5, "high": 10}},
              "double-super-9": {1: {"bet": 10}}}[game_id]
    kernel = RoundKernel(game, options)
    dice = game.roll_dice(RngService.seeded(seed)) if game.dice else None
    pending = kernel.begin(wagers, RngShoe(RngService.seeded(seed), game.shoe(options)), dice=dice)
    before = copy.deepcopy(kernel.round)
    try:
        kernel.decide(pending[0].seat, action)
    except DecisionError as exc:
        assert str(exc)
        assert repr(kernel.round) == repr(before)         # a refusal changes nothing
        assert kernel.pending() == pending
    else:
        assert action.strip().lower() in {a.lower() for a in pending[0].actions} or \
            action.strip().lower().startswith("set:")


decision_text = st.sampled_from(["play", "fold", "house-way", "set:", "set:|", "PLAY", " fold "]) | \
    st.text(alphabet="set:AKQJT98765432shdc |", max_size=30) | st.text(max_size=20)
decision_games = st.sampled_from(["three-card-poker", "split21-stud", "double-super-9"])


@QUICK
@given(card_text)
def test_card_notation(text):
    check_cards(text)


@QUICK
@given(st.binary(max_size=300) | st.lists(st.integers(0, 200), max_size=4).flatmap(
    lambda idx: st.sampled_from(["[", "x = ", "decks = -1", "[games]", "=", "a = [1,"]).map(
        lambda r: mutate_default(idx, r))))
def test_configuration_files(tmp_path_factory, data):
    check_config(tmp_path_factory.mktemp("cfg"), data)


@QUICK
@given(st.sampled_from(list(GAMES)), st.lists(st.tuples(option_keys, option_values), max_size=4))
def test_game_options(game_id, pairs):
    check_options(game_id, pairs)


@QUICK
@given(decision_games, st.integers(0, 10_000), decision_text)
def test_decisions(game_id, seed, action):
    check_decision(game_id, seed, action)


@pytest.mark.fuzz
@LONG
@given(card_text)
def test_fuzz_card_notation(text):
    check_cards(text)


@pytest.mark.fuzz
@LONG
@given(st.binary(max_size=2_000))
def test_fuzz_configuration_files(tmp_path_factory, data):
    check_config(tmp_path_factory.mktemp("cfg"), data)


@pytest.mark.fuzz
@LONG
@given(st.sampled_from(list(GAMES)), st.lists(st.tuples(option_keys, option_values), max_size=6))
def test_fuzz_game_options(game_id, pairs):
    check_options(game_id, pairs)


@pytest.mark.fuzz
@LONG
@given(decision_games, st.integers(0, 10**9), decision_text)
def test_fuzz_decisions(game_id, seed, action):
    check_decision(game_id, seed, action)
