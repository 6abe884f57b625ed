"""Hostile TITO bodies: whatever the host sends, no error escapes the machine, and money moves only
through a verdict on the ticket in escrow (then at most once, for the amount the host gave)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.sas.bcd import to_bcd
from drivers.sas.codec import LongPoll, encode_poll
from drivers.sas.commands import LONG_POLLS, PollType
from drivers.sas.validation import validation_to_bcd
from tests.sas.helpers import ADDRESS
from tests.sas.tito_helpers import Site

OTHER = "123456789012345678"
TITO = (0x4C, 0x4D, 0x57, 0x58, 0x70, 0x71, 0x7B, 0x7C, 0x7D)


def _bcd(width: int) -> st.SearchStrategy[bytes]:
    return st.integers(0, 100**width - 1).map(lambda n: to_bcd(n, width))


def _text() -> st.SearchStrategy[bytes]:
    return st.binary(max_size=45).map(lambda b: bytes((len(b),)) + b)


#: Bodies close to valid ones, so that the handlers' checks past decoding are reached too.
SHAPED: dict[int, st.SearchStrategy[bytes]] = {
    0x71: st.tuples(st.sampled_from([0x00, 0x01, 0x02, 0x80, 0x84, 0xFF]), _bcd(5), st.sampled_from([0, 1]),
                    st.one_of(st.just(validation_to_bcd(OTHER)), st.binary(min_size=9, max_size=9)))
           .map(lambda t: bytes((t[0],)) + t[1] + bytes((t[2],)) + t[3]),
    0x58: st.tuples(_bcd(1), _bcd(8)).map(lambda t: t[0] + t[1]),
    0x7B: st.tuples(st.binary(min_size=4, max_size=4), _bcd(2), _bcd(2)).map(lambda t: b"".join(t)),
    0x7C: st.lists(st.tuples(st.integers(0, 3), _text()).map(lambda t: bytes((t[0],)) + t[1]), max_size=3)
           .map(b"".join),
    0x7D: st.tuples(st.binary(min_size=3, max_size=3), _text(), _text(), _text()).map(lambda t: b"".join(t)),
}


def body(command: int) -> st.SearchStrategy[bytes]:
    spec = LONG_POLLS[command]
    if spec.type is PollType.M:
        raw = st.binary(max_size=40)
    else:
        raw = st.binary(min_size=spec.request or 0, max_size=spec.request or 0)
    return st.one_of(raw, SHAPED[command]) if command in SHAPED else raw


@pytest.mark.parametrize("validation", ["secure-enhanced", "system"])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(polls=st.lists(st.sampled_from(TITO).flatmap(lambda c: st.tuples(st.just(c), body(c))), max_size=12))
def test_hostile_tito_bodies_never_raise_and_pay_at_most_the_ticket(tmp_path_factory, validation, polls):
    site = Site(tmp_path_factory.mktemp("state") / "state", validation=validation)
    try:
        site.ledger.bill_in(500)
        if validation == "system":
            site.polls.numbering.request(500)            # a cash-out waits for the host's number
        site.insert(OTHER)
        for command, data in polls:
            site.machine.receive(encode_poll(LongPoll(ADDRESS, command, data)))
            site.machine.receive(bytes([0x82]))
            if site.cabinet.to_stack is not None:
                site.stack()
        credited = site.ledger.meters.get("ticket_in", 0)
        assert site.ledger.credits_cents == 500 + credited                 # only a ticket paid
        ins = [r for r in site.ledger.records_for(OTHER) if r["kind"] == "ticket_in"]
        assert len(ins) <= 1
    finally:
        site.close()
