"""Card-reading shoe driver: the host side of the product link over pyserial (``docs/protocols/shoe.md``).

The shoe speaks first (a card drawn, the door), so the driver is a read loop: one thread decodes
frames (:class:`LinkCodec`), gives every sequenced one to a :class:`Receiver` (acknowledged,
duplicates dropped, a gap answered RESEND_FROM: exactly once, in order) and turns what is delivered
into device events and into the card queue that :meth:`ShoeDriver.read_card` serves to
:class:`~firmware.cards.source.PhysicalShoeSource` (seed 000, claim 4).

* CARD: queued for ``read_card`` and emitted as :class:`CardDrawn`.
* BURN: logged and emitted as :class:`CardBurned`; never dealt.
* MISREAD, a malformed frame (acknowledged all the same: a re-send would repeat the fault): queued
  as :class:`ShoeMisread` and reported as ``DeviceFault(MISREAD)`` (cleared by the next good card
  or a new shoe). EMPTY: queued as :class:`ShoeEmpty`, reported as ``ShoeStatus(empty=True)``. Both
  errors derive from ``ShoeExhausted``, so a war that meets one ends as a misdeal (rules step 5);
  in the initial deal they leave ``RoundKernel.begin`` and the cabinet voids the round.
* CUT_CARD: ``ShoeStatus(cut_card=True)`` (the round is the shoe's last). DOOR: :class:`ShoeDoor`.
  LOADED: a new shoe: cards queued and not taken are dropped (logged), the statuses clear.
* HELLO (reconnect) from a shoe that kept its state: RESEND_FROM(expected). HELLO after a power-up
  (or a reconnect whose next SEQ is behind what was delivered): the shoe lost its state. Sequences
  restart, queued cards are dropped, ``read_card`` raises :class:`ShoeStateLost` (a misdeal), and
  ``DeviceFault(STATE_LOST)`` is emitted, cleared when a shoe is loaded again: the cabinet must
  void the round in progress and keep the table closed until the shoe is reloaded.

Open: the first open RESETs the shoe (a new session: both sides start at SEQ 1); every later open
(after an unplug, :meth:`~hal.base.Device.reopen`) keeps the delivery state and sends
RESEND_FROM(expected), so a card drawn while the cable was out arrives once, in order. A line quiet
for ``timeout`` seconds is probed with STATUS_REQUEST; ``MAX_MISSED`` probes in a row unanswered,
or a port error, and the device is :meth:`lost`. ``read_card`` keeps waiting while the device is
gone (the hot-plug monitor reopens it), up to its own timeout.
"""

from __future__ import annotations

import collections
import logging
import time
from typing import ClassVar

from drivers.codec import LocalProtocolError
from drivers.link.codec import LinkFrame
from drivers.link.endpoint import LinkEndpoint
from drivers.link.hello import Hello
from drivers.link.reliable import Receiver, Sender
from drivers.serial_loop import stop_and_close
from drivers.shoe.control import SHOE_KIND, ShoeState
from drivers.shoe.messages import MisreadReason, ShoeType, decode
from firmware.cards.card import Card
from firmware.cards.errors import ShoeExhausted
from hal.base import Lifecycle
from hal.devices.shoe import CardShoe
from hal.errors import (
    DeviceClosedError,
    DeviceGoneError,
    DeviceOperationError,
    DeviceTimeoutError,
)
from hal.events import (
    CardBurned,
    CardDrawn,
    DeviceFault,
    FaultKind,
    ShoeDoor,
    ShoeStatus,
)

log = logging.getLogger(__name__)

MISREAD_TEXT = {
    MisreadReason.NO_CARD_FACE: "no card face",
    MisreadReason.TWO_CARDS: "two cards at once",
    MisreadReason.UNREADABLE: "unreadable",
}


class ShoeReadError(ShoeExhausted, DeviceOperationError):
    """The shoe cannot give the round its next card: the round ends as a misdeal."""


class ShoeMisread(ShoeReadError):
    """A card went past the reader unread (or its frame was malformed)."""


class ShoeEmpty(ShoeReadError):
    """The shoe has no card left."""


class ShoeStateLost(ShoeReadError):
    """The shoe powered up again (or was reset): a new shoe; the round in progress is void."""


Item = Card | ShoeReadError


class ShoeDriver(LinkEndpoint[ShoeState], CardShoe):
    """A card-reading shoe on a serial port (or a simulator's pty)."""

    device_class: ClassVar[str] = "shoe"
    PEER: ClassVar[str] = "the shoe"
    PEER_KIND: ClassVar[int] = SHOE_KIND
    PEER_KIND_NAME: ClassVar[str] = "a shoe"
    PORT_EXAMPLE: ClassVar[str] = "/dev/ttyACM0"

    def __init__(self, name: str, *, port: str, timeout: float = 1.0) -> None:
        super().__init__(name, port=port, timeout=timeout)
        #: ``_cond`` also guards the card queue.
        self._items: collections.deque[Item] = collections.deque()
        self._was_lost = False             #: lost and not closed by the owner since: readers wait
        self._reopening = False
        self._misread_fault = False
        self._state_lost = False
        #: Cards in the last LOADED, cards drawn since then (``last_status``, ``last_hello``:
        #: the last STATUS and HELLO). ``counters``, link health for diagnostics: garbage,
        #: bad_crc, malformed, nak, reconnects, state_lost, dropped (queued cards a new shoe or a
        #: lost state threw away).
        self.loaded: int | None = None
        self.drawn = 0
        self.empty = False
        self.cut_card = False

    # --- lifecycle hooks ----------------------------------------------------------------------
    def lost(self, reason: str) -> None:
        self._was_lost = True
        super().lost(reason)

    def close(self) -> None:
        if not self._reopening:
            self._was_lost = False         # the owner closed it: a waiting reader gives up
        super().close()

    def reopen(self) -> ShoeDriver:
        """Close and open again (the hot-plug monitor, after an unplug): a round waiting in
        ``read_card`` keeps waiting, and gets the cards drawn meanwhile, in order."""
        with self._lock:
            self._reopening = True
            try:
                super().reopen()
                self._was_lost = False
            finally:
                self._reopening = False
                with self._cond:
                    self._cond.notify_all()
        return self

    def _close(self) -> None:
        stop_and_close(self, join_timeout=max(2 * self.timeout, 1.0), thread_kind="read",
                       logger=log)
        with self._cond:
            self._cond.notify_all()          # a read_card waiting sees the new lifecycle

    # --- the card layer's request (PhysicalShoe) ----------------------------------------------
    def read_card(self, timeout: float | None = None) -> Card:
        """The next card drawn, in the order drawn; waits up to ``timeout`` s (None: forever).

        Raises :class:`ShoeMisread`, :class:`ShoeEmpty` or :class:`ShoeStateLost` (all
        ``ShoeExhausted``: a misdeal) in their place in the sequence; ``DeviceTimeoutError`` if
        no card came, ``DeviceGoneError`` if the shoe was gone all along, ``DeviceClosedError``.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._items:
                if self._lifecycle is Lifecycle.CLOSED and not (self._reopening
                                                                  or self._was_lost):
                    raise DeviceClosedError(f"{self.name}: the shoe is not open")
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    if self._lifecycle is Lifecycle.GONE or self._was_lost:
                        raise DeviceGoneError(f"{self.name}: the shoe is gone (unplugged or "
                                              f"not answering); no card within {timeout} s")
                    raise DeviceTimeoutError(f"{self.name}: no card drawn within {timeout} s")
                self._cond.wait(remaining)
            item = self._items.popleft()
        if isinstance(item, ShoeReadError):
            raise item
        return item

    @property
    def queued(self) -> int:
        """Cards (and errors) delivered and not yet taken by ``read_card``."""
        with self._cond:
            return len(self._items)

    def flush(self) -> list[Item]:
        """Drop what is queued and not taken (the cabinet, before a round after a fault)."""
        with self._cond:
            out = list(self._items)
            self._items.clear()
        return out

    # --- the cabinet's requests ---------------------------------------------------------------
    def expect(self, cards: int) -> None:
        """Tell the shoe how many cards the round will draw next (for its display); reliable."""
        if not 0 <= cards <= 0xFFFF:
            raise ValueError(f"{self.name}: EXPECT is 0..65535 cards, not {cards}")
        self.require_open()
        with self._cond:
            try:
                frame = self._tx.send(ShoeType.EXPECT, cards.to_bytes(2, "big"), time.monotonic())
            except LocalProtocolError as exc:
                raise DeviceOperationError(f"{self.name}: {exc}") from exc
        self._write(frame)

    def reset(self) -> None:
        """Start a new session with the shoe (RESET): queued cards and its unacknowledged frames
        are dropped; the state-lost fault, if any, stays until a shoe is loaded."""
        self.require_open()
        self._handshake()

    # --- link hooks (called with the condition held) -----------------------------------------
    def _new_session(self) -> None:
        self._drop("a new session (RESET)")

    def _peer_restarted(self, hello: Hello) -> list[LinkFrame]:
        self._lost_state(hello)
        return []

    def _lost_state(self, hello: Hello) -> None:
        self.counters["state_lost"] += 1
        why = (f"the shoe lost its state ({hello.cause.name.lower().replace('_', '-')}, "
               f"next SEQ {hello.next_seq}, expected {self._rx.expected})")
        log.error("%s: %s: a new shoe; the round in progress is a misdeal", self.name, why)
        self._rx, self._tx = Receiver(expected=hello.next_seq), Sender()
        self._drop("the shoe lost its state")
        self._items.append(ShoeStateLost(f"{self.name}: {why}"))
        self._cond.notify_all()
        if not self._state_lost:
            self._state_lost = True
            self._emit(DeviceFault(self.name, FaultKind.STATE_LOST, why))

    def _drop(self, why: str) -> None:
        if self._items:
            self.counters["dropped"] += len(self._items)
            log.warning("%s: %d queued cards dropped: %s (%s)", self.name, len(self._items), why,
                        " ".join(str(i) if isinstance(i, Card) else type(i).__name__
                                 for i in self._items))
            self._items.clear()

    def _decode_status(self, payload: bytes) -> ShoeState:
        return ShoeState.decode(payload)

    def _message(self, frame: LinkFrame) -> None:
        """One delivered shoe message (called with the condition held)."""
        try:
            message = decode(frame.type, frame.payload)
            if message.type is ShoeType.EXPECT:
                raise ValueError("EXPECT is a host command, not a shoe event")
        except ValueError as exc:
            self.counters["malformed"] += 1
            log.error("%s: malformed frame %d: %s: a misread", self.name, frame.seq, exc)
            self._misread(f"malformed frame: {exc}")
            return
        kind = message.type
        if kind is ShoeType.CARD:
            assert message.card is not None
            self.drawn += 1
            self._items.append(message.card)
            self._cond.notify_all()
            self._emit(CardDrawn(self.name, message.card, self.drawn))
            self._clear_misread()
        elif kind is ShoeType.BURN:
            assert message.card is not None
            self.drawn += 1
            log.info("%s: card %d burned: %s", self.name, self.drawn, message.card)
            self._emit(CardBurned(self.name, message.card, self.drawn))
            self._clear_misread()
        elif kind is ShoeType.MISREAD:
            self.drawn += 1
            self._misread(f"card {self.drawn} misread: "
                          f"{MISREAD_TEXT[MisreadReason(message.value)]}")
        elif kind is ShoeType.EMPTY:
            log.warning("%s: the shoe is empty", self.name)
            self.empty = True
            self._items.append(ShoeEmpty(f"{self.name}: the shoe is empty"))
            self._cond.notify_all()
            self._emit(ShoeStatus(self.name, empty=True, cut_card=self.cut_card))
        elif kind is ShoeType.CUT_CARD:
            log.info("%s: the cut card is out: this round is the shoe's last", self.name)
            self.cut_card = True
            self._emit(ShoeStatus(self.name, empty=self.empty, cut_card=True))
        elif kind is ShoeType.DOOR:
            self._emit(ShoeDoor(self.name, open=bool(message.value)))
        elif kind is ShoeType.LOADED:
            log.info("%s: a shoe of %d cards is loaded", self.name, message.value)
            self._drop("a new shoe was loaded")
            self.loaded, self.drawn = message.value, 0
            self.empty = self.cut_card = False
            self._emit(ShoeStatus(self.name, empty=False, cut_card=False))
            self._clear_misread()
            if self._state_lost:
                self._state_lost = False
                self._emit(DeviceFault(self.name, FaultKind.STATE_LOST, "a shoe is loaded",
                                       cleared=True))

    def _misread(self, detail: str) -> None:
        log.error("%s: %s", self.name, detail)
        self._items.append(ShoeMisread(f"{self.name}: {detail}"))
        self._cond.notify_all()
        if not self._misread_fault:
            self._misread_fault = True
            self._emit(DeviceFault(self.name, FaultKind.MISREAD, detail))

    def _clear_misread(self) -> None:
        if self._misread_fault:
            self._misread_fault = False
            self._emit(DeviceFault(self.name, FaultKind.MISREAD, "a card read again",
                                   cleared=True))


__all__ = ["ShoeDriver", "ShoeEmpty", "ShoeMisread", "ShoeReadError",
           "ShoeStateLost"]
