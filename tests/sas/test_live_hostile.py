"""Hostile bytes on the running terminal's SAS pty change nothing, and the machine answers the
next host: noise, long polls to us with junk and bad CRCs, and M polls whose length byte announces
255 data bytes that never come (docs/protocols/sas.md, "Resynchronising after a silence")."""

from __future__ import annotations

import os
import random
import time

from drivers.sas.messages import Meters
from tests.sas.helpers import wait_for
from tests.sas.live import host_on, running

SEED = 13
#: Long polls whose request changes money or state if it were taken (with a valid CRC).
TARGETS = (0x72, 0x71, 0x74, 0x4C, 0x7F, 0x01, 0x2F, 0x6F, 0x75, 0x7B, 0x94)


def _noise(rng: random.Random) -> bytes:
    kind = rng.random()
    if kind < 0.4:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
    if kind < 0.7:                          # a long poll to us: a real command, junk, no valid CRC
        return bytes([0x01, rng.choice(TARGETS)]) + bytes(rng.randrange(256) for _ in range(rng.randrange(30)))
    return bytes([0x01, rng.choice((0x72, 0x71, 0x2F, 0x75, 0x7B)), 0xFF]) + bytes(rng.randrange(256)
                                                                              for _ in range(rng.randrange(10)))


def test_noise_on_the_sas_line_changes_nothing_and_the_next_host_is_answered(tmp_path):
    rng = random.Random(SEED)
    with running(tmp_path) as terminal:
        terminal.sim_until("note", "20")
        wait_for(lambda: terminal.control("status")["credits_cents"] == 2000, timeout=30)
        with host_on(terminal) as host:
            before = host.read(0x1C)
        status = terminal.control("status")
        fd = os.open(terminal.sas, os.O_RDWR | os.O_NOCTTY)
        try:
            sent = 0
            for _ in range(300):
                sent += os.write(fd, _noise(rng))
                time.sleep(0.002)
        finally:
            os.close(fd)
        time.sleep(0.6)                     # a silence: an unfinished message is dropped
        with host_on(terminal) as host:
            after = host.read(0x1C)
            assert host.general_poll() is not None
        now = terminal.control("status")
    assert sent > 3000
    assert isinstance(after, Meters) and after == before
    assert now["credits_cents"] == status["credits_cents"] == 2000
    assert now["state"] == "IDLE" and not now["disabled_by"] and now["accepting_notes"]
