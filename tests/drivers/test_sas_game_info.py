"""The identity, handpay and game information bodies (drivers/sas/game_info.py): what is encoded
decodes to the same value, and a body of the wrong shape is a ValueError."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.sas import game_info as g

games = st.integers(0, 9999)
byte = st.integers(0, 255)
names = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)
ascii_n = lambda n: st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=n, max_size=n)  # noqa: E731

machine_info = st.builds(g.MachineInfo, ascii_n(2), ascii_n(3), byte, byte, byte, st.integers(0, 0xFFFF),
                         ascii_n(6), ascii_n(4))
bodies = st.one_of(
    st.builds(g.RealTimeEvents, st.integers(0, 1)),
    st.builds(g.HandpayInfo, byte, byte, st.integers(0, 10**10 - 1), st.integers(0, 9999), byte),
    st.builds(g.GameNumber, games),
    st.builds(g.GameConfiguration, games, machine_info),
    st.builds(g.EnabledGames, st.lists(games, max_size=100).map(tuple)),
    st.builds(g.EnabledFeatures, games, byte, byte, byte, byte),
    st.builds(g.GameInformation, games, games, byte, st.integers(0, 2**32 - 1), names, names, games),
)


@given(bodies)
def test_every_body_decodes_to_what_was_encoded(body):
    assert type(body).decode(body.encode()) == body


@pytest.mark.parametrize(("cls", "data"), [
    (g.HandpayInfo, bytes(19)), (g.GameConfiguration, bytes(21)), (g.EnabledGames, b"\x02\x00\x01"),
    (g.EnabledFeatures, bytes(7)), (g.GameInformation, bytes.fromhex("00 01 00 05 00 00 00 00 00 05 41")),
    (g.GameNumber, b"\x1a\x00"),
])
def test_a_body_of_the_wrong_shape_is_a_value_error(cls, data):
    with pytest.raises(ValueError):
        cls.decode(data)


def test_a_game_name_longer_than_sas_allows_is_refused():
    with pytest.raises(ValueError, match="at most 20"):
        g.GameInformation(1, 10, 0, 0, "x" * 21, "", 1).encode()
