"""Hypothesis strategies for valid SAS messages of both directions (shared by the SAS tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from drivers.sas.codec import (
    Ack,
    ExceptionReply,
    GeneralPoll,
    LongPoll,
    Nack,
    Reply,
)
from drivers.sas.commands import LONG_POLLS, PollType, ReplyKind

ADDRESS = 1
COMMANDS = sorted(LONG_POLLS)


@st.composite
def long_polls(draw: st.DrawFn, address: st.SearchStrategy[int]) -> LongPoll:
    spec = LONG_POLLS[draw(st.sampled_from(COMMANDS))]
    if spec.type is PollType.R:
        data = b""
    elif spec.type is PollType.S:
        data = draw(st.binary(min_size=spec.request or 0, max_size=spec.request or 0))
    else:
        data = draw(st.binary(max_size=40))
    return LongPoll(draw(address), spec.code, data)


#: What a host sends on a shared line: polls to us, to the broadcast address, to other machines.
polls = st.one_of(
    st.builds(GeneralPoll, st.integers(1, 127)),
    long_polls(st.sampled_from([ADDRESS, 0, 2, 0x41, 0x7F])),
)


@st.composite
def exchanges(draw: st.DrawFn) -> tuple[GeneralPoll | LongPoll, object]:
    """A poll to machine ADDRESS and a valid answer to it."""
    if draw(st.booleans()):
        return GeneralPoll(ADDRESS), ExceptionReply(draw(st.integers(0, 255)))
    poll = draw(long_polls(st.just(ADDRESS)))
    spec = LONG_POLLS[poll.command]
    if draw(st.integers(0, 9)) == 0:
        return poll, Nack(ADDRESS)
    if spec.reply_kind is ReplyKind.ACK:
        return poll, Ack(ADDRESS)
    size = spec.reply if spec.reply_kind is ReplyKind.FIXED else draw(st.integers(0, 40))
    return poll, Reply(ADDRESS, poll.command, draw(st.binary(min_size=size, max_size=size)))
