"""The machine's SAS line over time: link up or down, the chirp, the exception queue kept.

:class:`SasLink` wraps a :class:`~firmware.sas.responder.SasMachine` with what depends on the clock
rather than on one poll (docs/protocols/sas.md, "Port, chirp and link-down"):

- **Link up / down** (``drivers.sas.codec.LinkWatch``): the link is up while polls to this machine
  arrive, down after :data:`~drivers.sas.codec.LINK_DOWN_AFTER` (5 s) without one. Each change is a
  ledger event ``sas_link`` (``state`` "up" or "down"), so it is in the terminal's history; the
  status (:meth:`SasLink.status`) is what ``egm simctl status`` and the service menu show. The
  link starts down at power-up and a start is no change: the first poll records "up".
- **Chirp**: while the link is down the machine sends its address with the wakeup bit set every
  :data:`CHIRP_INTERVAL` seconds, so that a host (or a technician's tool) sees a machine that is
  there but not polled. SAS 6.02 as recalled (no public source found: check the standard).
- **Resynchronising after a silence**: on a pty (and with our port, also on a serial line) a
  message is framed by content, so the start of a long poll that never finishes (noise, a host that
  died mid-message, an M poll whose length byte is garbage: up to 260 bytes awaited) would swallow
  the polls after it until its length is reached and its CRC fails. A message's bytes come
  together; hosts pause between the pieces of one message only briefly (some reopen the port
  between the address and the command). So bytes arriving :data:`RESYNC_GAP_S` or more after the
  last ones begin a new message: what was buffered is dropped first (logged as garbage).
- **Keeping the queue**: the exception queue stores itself when the host takes an exception; while
  no host takes any, records pile up that opening would read again. :meth:`SasLink.tick` saves it
  after :data:`SAVE_AFTER_RECORDS` records, or every :data:`SAVE_INTERVAL_S` seconds when any came.

Everything here reads or writes critical memory, so it runs on the terminal's thread: the port's
reader thread hands bytes over (``firmware/cabinet/sas_port.py``) and writes what comes back.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from drivers.sas.codec import LinkWatch
from firmware.ledger.ledger import Ledger
from firmware.sas.responder import SasMachine

log = logging.getLogger(__name__)

#: How often the machine chirps while the link is down (seconds; SAS 6.02 as recalled).
CHIRP_INTERVAL: Final = 0.2
#: The exception queue is kept after this many ledger records read since it was last kept ...
SAVE_AFTER_RECORDS: Final = 500
#: ... or this often (seconds) while records come and no host takes exceptions.
SAVE_INTERVAL_S: Final = 60.0
#: A tick this early still counts as on time for the chirp (the clock's float rounding).
_EARLY: Final = 1e-6
#: A silence this long (seconds) ends an incomplete message: the next bytes start a new one. Far
#: longer than a host's pause between the pieces of one message (a port reopened between the
#: address and the command takes milliseconds), far shorter than a host's retry time-out.
RESYNC_GAP_S: Final = 0.5
#: The ledger event of a link change.
LINK_EVENT: Final = "sas_link"


class SasLink:
    """``machine`` on a line, watched over time; ``ledger`` records the link's changes."""

    def __init__(self, machine: SasMachine, ledger: Ledger, *, chirp_interval: float = CHIRP_INTERVAL,
                 save_after: int = SAVE_AFTER_RECORDS, save_interval: float = SAVE_INTERVAL_S,
                 watch: LinkWatch | None = None) -> None:
        self.machine = machine
        self._ledger = ledger
        self.watch = watch if watch is not None else LinkWatch()
        self.chirp_interval = chirp_interval
        self.save_after = save_after
        self.save_interval = save_interval
        self._up = False
        self._next_chirp: float | None = None
        self._saved_at: float | None = None
        self.chirps = 0                    #: chirps sent since the start
        self.resync_gap = RESYNC_GAP_S
        self._heard_at: float | None = None    #: when bytes last came
        self.resyncs = 0                   #: incomplete messages dropped after a silence

    @property
    def up(self) -> bool:
        return self._up

    def receive(self, data: bytes, now: float) -> bytes:
        """What the host sent at ``now`` (monotonic seconds); the reply to write."""
        if self._heard_at is not None and now - self._heard_at >= self.resync_gap:
            dropped = self.machine.resync(f"no byte for {now - self._heard_at:.2f} s")
            if dropped is not None:
                self.resyncs += 1
                log.info("sas: an unfinished message dropped after a silence: %s", dropped.data.hex(" "))
        self._heard_at = now
        before = self.machine.polls
        reply = self.machine.receive(data)
        if self.machine.polls != before:
            self.watch.polled(now)
            self._set(True)
        return reply

    def tick(self, now: float) -> bytes:
        """Called now and then (a few times a second): the link's state brought up to ``now``, the
        queue kept if due; the chirp to send now (empty: none)."""
        if self._up and not self.watch.up(now):
            self._set(False)
        self._keep_queue(now)
        if self._up:
            self._next_chirp = None
            return b""
        if self._next_chirp is not None and now < self._next_chirp - _EARLY:
            return b""
        # on the interval's grid while the ticks keep up with it; from now when they fell behind
        due = self._next_chirp if self._next_chirp is not None and now - self._next_chirp < self.chirp_interval else now
        self._next_chirp = due + self.chirp_interval
        self.chirps += 1
        return bytes((self.machine.address,))

    def _set(self, up: bool) -> None:
        if up == self._up:
            return
        self._ledger.event(LINK_EVENT, state="up" if up else "down", address=self.machine.address)
        self._up = up

    def _keep_queue(self, now: float) -> None:
        queue = self.machine.terminal.exceptions
        if self._saved_at is None:
            self._saved_at = now
        if queue.unsaved >= self.save_after or (queue.unsaved and now - self._saved_at >= self.save_interval):
            queue.save()
            self._saved_at = now

    def status(self) -> dict[str, Any]:
        """``address``, ``link`` ("up" / "down"), the polls answered, the exceptions waiting."""
        return {"address": self.machine.address, "link": "up" if self._up else "down",
                "polls": self.machine.polls, "exceptions_pending": len(self.machine.terminal.exceptions)}
