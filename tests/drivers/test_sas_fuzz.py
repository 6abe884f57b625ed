"""SAS codec fuzz: garbage never raises, valid messages survive the wire in both roles.

The quick variants run in the default suite; the ``fuzz``-marked ones run long (``make fuzz``).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codec import Garbage
from drivers.sas.codec import (
    Ack,
    Chirp,
    EgmDecoder,
    ExceptionReply,
    GeneralPoll,
    HostDecoder,
    LongPoll,
    Nack,
    OtherAddress,
    Reply,
    encode_poll,
    encode_reply,
)
from tests.drivers.sas_strategies import ADDRESS, exchanges, polls
from tests.drivers.streams import cut, feed

EGM_EVENTS = (GeneralPoll, LongPoll, OtherAddress, Garbage)
HOST_EVENTS = (ExceptionReply, Reply, Ack, Nack, Chirp, Garbage)


def _seen_by_machine(poll: GeneralPoll | LongPoll) -> object:
    if isinstance(poll, GeneralPoll):
        return poll if poll.address == ADDRESS else OtherAddress(poll.address)
    return poll if poll.address in (ADDRESS, 0) else OtherAddress(poll.address, poll.command)


def check_garbage(data: bytes, expects: list) -> None:
    egm = EgmDecoder(ADDRESS)
    egm.receive_data(data)
    assert all(isinstance(e, EGM_EVENTS) for e in egm.events())
    assert egm.buffered <= egm.max_buffer
    host = HostDecoder(ADDRESS)
    shares = [len(data) * k // (len(expects) + 1) for k in range(1, len(expects) + 1)]
    for i, chunk in enumerate(cut(data, shares)):
        if i < len(expects):
            host.expect(expects[i])
        host.receive_data(chunk)
        assert all(isinstance(e, HOST_EVENTS) for e in host.events())
    assert host.buffered <= host.max_buffer


def check_polls(sent: list, cuts: list[int]) -> None:
    stream = b"".join(encode_poll(p) for p in sent)
    got = feed(EgmDecoder(ADDRESS), cut(stream, cuts))
    assert got == [_seen_by_machine(p) for p in sent]


def check_replies(pairs: list, cuts: list[int]) -> None:
    host = HostDecoder(ADDRESS)
    got = []
    for poll, reply in pairs:
        host.expect(poll)
        got += feed(host, cut(encode_reply(reply), cuts))
    assert got == [reply for _, reply in pairs]


cut_points = st.lists(st.integers(0, 10_000), max_size=6)


@settings(max_examples=80, deadline=None)
@given(st.binary(max_size=400), st.lists(st.sampled_from(
    [GeneralPoll(ADDRESS), LongPoll(ADDRESS, 0x10), LongPoll(ADDRESS, 0x01),
     LongPoll(ADDRESS, 0x54), LongPoll(ADDRESS, 0x21, b"\x00\x00")]), max_size=4))
def test_random_bytes_give_only_the_codecs_own_events(data, expects):
    check_garbage(data, expects)


@settings(max_examples=80, deadline=None)
@given(st.lists(polls, max_size=10), cut_points)
def test_polls_survive_the_wire_however_they_are_cut(sent, cuts):
    check_polls(sent, cuts)


@settings(max_examples=80, deadline=None)
@given(st.lists(exchanges(), max_size=8), cut_points)
def test_replies_survive_the_wire_however_they_are_cut(pairs, cuts):
    check_replies(pairs, cuts)


@pytest.mark.fuzz
@settings(max_examples=20_000, deadline=None)
@given(st.binary(max_size=2000), st.lists(st.sampled_from(
    [GeneralPoll(ADDRESS), LongPoll(ADDRESS, 0x10), LongPoll(ADDRESS, 0x6F, b""),
     LongPoll(ADDRESS, 0x1F), LongPoll(ADDRESS, 0x74, bytes(4))]), max_size=8))
def test_fuzz_sas_garbage(data, expects):
    check_garbage(data, expects)


@pytest.mark.fuzz
@settings(max_examples=20_000, deadline=None)
@given(st.lists(polls, max_size=30), cut_points, st.lists(exchanges(), max_size=20))
def test_fuzz_sas_round_trips(sent, cut_at, pairs):
    check_polls(sent, cut_at)
    check_replies(pairs, cut_at)
