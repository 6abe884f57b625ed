"""The card module: notation (CONTRACTS.md), interning, pickling."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from firmware.cards.card import (
    BACCARAT_VALUE,
    BLACKJACK_VALUE,
    CARDS,
    Card,
    format_cards,
    parse_card,
    parse_cards,
)
from firmware.cards.errors import CardError


@pytest.mark.parametrize(
    ("text", "rank", "suit"),
    [("As", 14, 0), ("Td", 10, 2), ("10d", 10, 2), ("7c", 7, 3), ("2h", 2, 1), ("Kh", 13, 1),
     ("as", 14, 0), ("td", 10, 2), ("qS", 12, 0), ("JH", 11, 1), (" 9c ", 9, 3)],
)
def test_parse_one(text: str, rank: int, suit: int) -> None:
    card = parse_card(text)
    assert (card.rank, card.suit) == (rank, suit)
    assert card is CARDS[(rank - 2) * 4 + suit]
    assert Card.parse(text) is card


def test_ten_forms_are_the_same_card() -> None:
    assert parse_card("10d") is parse_card("Td") is parse_card("td")


@pytest.mark.parametrize("text", ["Xs", "A", "Ax", "11h", "", "   ", "Asd", "1s", "0s"])
def test_bad_card_strings(text: str) -> None:
    with pytest.raises(CardError) as info:
        parse_card(text)
    message = str(info.value)
    assert repr(text) in message  # names the offending text
    assert "\n" not in message


def test_bad_card_messages_say_what_is_wrong() -> None:
    with pytest.raises(CardError, match="unknown rank 'X'"):
        parse_card("Xs")
    with pytest.raises(CardError, match="unknown suit 'x'"):
        parse_card("Ax")
    with pytest.raises(CardError, match="expected a rank"):
        parse_card("A")
    with pytest.raises(CardError, match="must be a string"):
        parse_card(5)  # type: ignore[arg-type]


def test_card_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_card("Zz")


@pytest.mark.parametrize(
    "text", ["As Kd 10h 7c", "As,Kd,10h,7c", "As, Kd ,10h  7c", "  As Kd, 10h,7c  "],
)
def test_parse_list_spaces_and_commas(text: str) -> None:
    assert format_cards(parse_cards(text)) == ["As", "Kd", "Th", "7c"]


def test_parse_list_empty_and_iterable() -> None:
    assert parse_cards("") == []
    assert parse_cards(["As", "10c"]) == [CARDS[48], CARDS[35]]
    with pytest.raises(CardError):
        parse_cards("As Kd Xx")


def test_json_uses_two_character_form() -> None:
    cards = parse_cards("10d As 7c")
    assert json.dumps(format_cards(cards)) == '["Td", "As", "7c"]'
    assert [str(c) for c in cards] == ["Td", "As", "7c"]
    assert repr(cards[0]) == "Card('Td')"


def test_encoding_and_interning() -> None:
    assert len(CARDS) == 52
    for i, card in enumerate(CARDS):
        assert card == i and isinstance(card, int)
        assert Card(i) is card
        assert Card.of(card.rank, card.suit) is card
        assert parse_card(str(card)) is card
    assert Card.of(1, 3) is parse_card("Ac")  # rank 1 reads as ace
    for bad in (-1, 52, True, 1.0, "3"):
        with pytest.raises(CardError):
            Card(bad)  # type: ignore[arg-type]
    with pytest.raises(CardError):
        Card.of(15, 0)
    with pytest.raises(CardError):
        Card.of(2, 4)


def test_pickle_and_copy_keep_identity() -> None:
    for card in CARDS:
        assert pickle.loads(pickle.dumps(card)) is card
        assert copy.copy(card) is card
        assert copy.deepcopy(card) is card
    hand = parse_cards("As Kd")
    assert all(a is b for a, b in zip(pickle.loads(pickle.dumps(hand)), hand, strict=True))


def test_values() -> None:
    by_text = {str(c): c for c in CARDS}
    assert [BACCARAT_VALUE[by_text[t]] for t in ("As", "9h", "Td", "Jc", "Qs", "Ks")] == [1, 9, 0, 0, 0, 0]
    assert [BLACKJACK_VALUE[by_text[t]] for t in ("As", "9h", "Td", "Jc", "Qs", "Ks")] == [1, 9, 10, 10, 10, 10]
    assert by_text["Qh"].baccarat_value == 0 and by_text["Qh"].blackjack_value == 10
