"""The host link after power cuts: however many, and wherever they fall, the host ends up storing
every report exactly once and answers the terminal again (campaign item 1).

A power cut here is what it is to the link: the terminal's process is gone at an arbitrary point
(its MQTT connection, its in-memory state, its boot key and any acknowledgement not yet written
back to critical memory), and the terminal starts again on the same critical memory, with a backlog
larger than its window.
"""

from __future__ import annotations

import random

import pytest

from firmware.hostlink.link import HostLink

from .conftest import Floor
from .test_link import _pumping

WINDOW = 4


def _power_cut(floor: Floor, terminal: str) -> None:
    """The process dies: nothing is flushed, nothing is said to the broker."""
    link = floor.links.pop(terminal)
    link.client.stop()
    link.outbox.close()
    floor.ledgers.pop(terminal).close()


def _boot(floor: Floor, terminal: str = "T1", **kw) -> HostLink:
    return floor.terminal(terminal, window=WINDOW, ack_timeout_s=1.0, **kw)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_many_power_cuts_every_report_is_stored_once_and_vouchers_are_answered(floor: Floor, seed: int) -> None:
    rng = random.Random(seed)
    _boot(floor)
    for _cut in range(8):
        # a backlog larger than the window, partly delivered, then the power goes
        for _ in range(rng.randint(WINDOW + 1, 4 * WINDOW)):
            floor.ledgers["T1"].bill_in(100)
        floor.bus.drop = lambda topic, payload: rng.random() < 0.5
        floor.settle(rounds=rng.randint(0, 3))
        floor.now[0] += rng.uniform(0, 3)
        floor.settle(rounds=rng.randint(0, 2))
        floor.bus.drop = lambda topic, payload: False
        floor.bus.queue.clear()                        # what was in flight dies with the connection
        _power_cut(floor, "T1")
        _boot(floor)
    link = floor.links["T1"]
    for _ in range(40):                                # the link settles on its own (timeouts pass)
        floor.settle()
        if not len(link.outbox):
            break
        floor.now[0] += 2.0
    assert len(link.outbox) == 0
    assert floor.store.sequence("T1") == {"count": link.outbox.last_number, "first": 1,
                                          "last": link.outbox.last_number, "gaps": []}
    assert not [e for e in floor.ledgers["T1"].events(500) if e["event"] == "host.rejected"]
    # and a redemption is answered
    floor.terminal("T2")
    validation = floor.cash_out("T2", 1000)
    floor.settle()
    link.redeem_timeout_s = 1.0
    link.poll = _pumping(link.poll, floor)
    assert link.validate(validation) == 1000


def test_the_hello_goes_first_whatever_the_backlog(floor: Floor) -> None:
    link = _boot(floor)
    floor.bus.set_up(False)
    for _ in range(10 * WINDOW):
        floor.ledgers["T1"].bill_in(100)
    _power_cut(floor, "T1")
    floor.bus.set_up(True)
    link = _boot(floor)
    floor.bus.drop = lambda topic, payload: True       # look at what goes out first, deliver nothing
    link.poll()
    first = floor.bus.queue[0][1]
    floor.bus.pump()
    from .test_replay import _opened
    opened = _opened(floor, first)
    assert opened.type == "hello" and opened.body["kem_public"] == link.status()["session"]["key"]
