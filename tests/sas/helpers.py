"""A terminal's SAS machine over a real ledger, and a host that polls it through the codec."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from drivers.sas.codec import ExceptionReply, GeneralPoll, HostDecoder, LongPoll, Reply, encode_poll
from drivers.sas.messages import parse_reply
from firmware.ledger.ledger import Ledger
from firmware.sas.responder import SasMachine
from firmware.sas.view import Identity, LedgerView

ADDRESS = 1
IDENTITY = Identity(game_id="BW", additional_id="001", paytable_id="BW0001", base_percent="9650",
                    max_bet=50, serial="EGM-0042", accounting_denom_cents=5)
NOW = dt.datetime(2026, 11, 27, 21, 5, 9)


def machine_on(ledger: Ledger, identity: Identity = IDENTITY) -> SasMachine:
    return SasMachine(ADDRESS, LedgerView(ledger, identity, clock=lambda: NOW))


def ask(machine: SasMachine, poll: GeneralPoll | LongPoll) -> Any:
    """Send ``poll`` and decode the reply as a host would: the exception code, the typed body of a
    long poll's reply, or None when the machine did not answer."""
    wire = machine.receive(encode_poll(poll))
    if not wire:
        return None
    host = HostDecoder(ADDRESS)
    host.expect(poll)
    host.receive_data(wire)
    [event] = host.events()
    if isinstance(event, ExceptionReply):
        return event.code
    assert isinstance(event, Reply), event
    return parse_reply(event.command, event.data)


def general(machine: SasMachine) -> Any:
    return ask(machine, GeneralPoll(ADDRESS))



def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Until ``condition()`` holds (an AssertionError after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold in time"
        time.sleep(0.01)
