"""A card-reading shoe, simulated: the device side of the product link (``docs/protocols/shoe.md``).

The shoe holds a card sequence (given, or an n-deck shoe shuffled from a seed). The dealer draws
cards with the control API (:meth:`ShoeSimulator.draw`, :meth:`ShoeSimulator.burn`); each becomes a
reliable CARD / BURN frame numbered by a :class:`~drivers.link.reliable.Sender`, kept until the
host acknowledges it and re-sent on the retry timer. The shoe answers RESEND_FROM (re-sends what it
still holds from there), STATUS_REQUEST (STATUS), RESET (forgets its frames, HELLO with next SEQ 1,
then LOADED with the cards it holds) and the host's reliable EXPECT (acknowledged through a
:class:`~drivers.link.reliable.Receiver`; a malformed one is NAKed). It says HELLO when it powers up
(state lost) and when its cable is plugged back in (state kept).

A full window (64 frames unacknowledged) stops the shoe: :meth:`draw` refuses and the card stays in
the shoe (the dealer sees the lamp), exactly as ``link.md`` says.

Faults, for tests and ``egm sim shoe``: a misread next card, an empty shoe (a draw from it reports
EMPTY), the cut card (by position at load, or now), the door, unplug and replug (the port is closed
and the shoe serves again on a new one, or the line goes silent and comes back), corrupted CRCs,
dropped and repeated frames (one-shot or at random rates), and power off / on (the shoe loses its
frames and sequence numbers: HELLO with next SEQ 1, cause power-up).

``feed(bytes)`` and ``tick()`` are the whole device (sans-I/O, each returns the writes to make);
``serve`` runs them on a byte port. The control API is thread-safe: frames it produces wait in an
outbox the serve loop writes.
"""

from __future__ import annotations

import collections
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable

from drivers.codec import Garbage
from drivers.link.codec import LinkCodec, LinkFrame, LinkType, encode, seq_bytes
from drivers.link.reliable import Receiver, Sender, control_seq
from drivers.shoe.control import SHOE_KIND, Hello, HelloCause, ShoeState
from drivers.shoe.messages import MisreadReason, ShoeType, card_payload, decode
from firmware.cards.card import Card, parse_card
from firmware.cards.shoe import standard_shoe
from sim_hardware.pty_link import READ_SLICE_S, BytePort

log = logging.getLogger(__name__)

#: NAK reason the shoe gives for a host frame it cannot use.
NAK_MALFORMED = 0x01
VERSION = (1, 0)


def _card(value: Card | int | str) -> Card:
    return parse_card(value) if isinstance(value, str) else Card(value)


class ShoeSimulator:
    """One simulated card-reading shoe."""

    def __init__(self, cards: Iterable[Card | int | str] | None = None, *, seed: int | None = None,
                 decks: int = 8, cut_at: int | None = None, retry_s: float = 0.2,
                 window: int = 64, clock: Callable[[], float] = time.monotonic) -> None:
        self.retry_s = retry_s
        self.window = window
        self._clock = clock
        self._lock = threading.RLock()
        self._outbox: list[bytes] = []
        self._cards: collections.deque[Card] = collections.deque()
        self._cut_at: int | None = None
        self._taken = 0
        self.door_open = False
        self.cut_out = False
        self.empty = False
        #: Cards reported as CARD, BURN and MISREAD, in order; EXPECT's last value; host frames
        #: received by type; frames thrown away unacknowledged by a RESET or a power cut.
        self.dealt: list[Card] = []
        self.burned: list[Card] = []
        self.misread: list[Card] = []
        self.expected_cards: int | None = None
        self.received: collections.Counter[int] = collections.Counter()
        self.discarded: list[LinkFrame] = []
        self.refused = 0                   #: draws refused on a full window
        # wire faults
        self._misread_next: MisreadReason | None = None
        self._drop = 0
        self._corrupt = 0
        self._lose = 0
        self._repeat = False
        self._rnd: random.Random | None = None
        self._loss = self._dup = 0.0
        # the cable and the power
        self._silent = False
        self._unplug = False
        self.unplugged = False
        self.powered = True
        self._power_up()
        if cards is not None:
            self.load(cards, cut_at=cut_at)
        elif seed is not None:
            self.shuffle(seed, decks=decks, cut_at=cut_at)

    # --- state ------------------------------------------------------------------------------
    def _power_up(self) -> None:
        self._codec = LinkCodec()
        self._tx = Sender(retry_s=self.retry_s, window=self.window)
        self._rx = Receiver()
        self._hello: HelloCause | None = HelloCause.POWER_UP

    @property
    def left(self) -> int:
        return len(self._cards)

    @property
    def next_seq(self) -> int:
        return self._tx.next

    @property
    def unacknowledged(self) -> list[LinkFrame]:
        with self._lock:
            return self._tx.unacknowledged

    @property
    def window_full(self) -> bool:
        return len(self._tx.unacknowledged) >= self.window

    def state(self) -> ShoeState:
        """What a STATUS frame would say now."""
        with self._lock:
            return ShoeState(door_open=self.door_open, empty=self.empty, cut_card=self.cut_out,
                             window_full=self.window_full, left=min(self.left, 0xFFFF),
                             next_seq=self._tx.next,
                             pending=min(len(self._tx.unacknowledged), 0xFF))

    # --- the device: bytes in, bytes out ----------------------------------------------------
    def feed(self, data: bytes) -> list[bytes]:
        """Receive ``data`` from the host; every write to make now, in order."""
        with self._lock:
            if not self.powered or self._silent or self._unplug:
                return []
            self._codec.receive_data(data)
            for event in self._codec.events():
                if isinstance(event, Garbage):
                    log.debug("shoe sim: garbage from the host (%s)", event.reason)
                elif self._lose > 0:
                    self._lose -= 1
                    log.debug("shoe sim: host frame 0x%02X lost on the wire", event.type)
                else:
                    self.received[event.type] += 1
                    self._on_frame(event)
            return self._take()

    def tick(self) -> list[bytes]:
        """The retry timer and the HELLO: every write to make now (and the control API's)."""
        with self._lock:
            if not self.powered or self._silent:
                return []
            if self._hello is not None:
                self._say_hello(self._hello)
            for frame in self._tx.due(self._clock()):
                self._out(frame)
            return self._take()

    def _take(self) -> list[bytes]:
        out, self._outbox = self._outbox, []
        return out

    def _on_frame(self, frame: LinkFrame) -> None:
        if frame.seq:                                   # a reliable command of the host
            deliver, reply = self._rx.receive(frame, self._clock())
            if reply is not None:
                self._out(reply)
            if deliver is not None:
                self._command(deliver)
            return
        seq = control_seq(frame)
        kind = frame.type
        if kind == LinkType.ACK and seq is not None:
            self._tx.acknowledged(seq)
        elif kind == LinkType.RESEND_FROM and seq is not None:
            for again in self._tx.resend_from(seq, self._clock()):
                self._out(again)
        elif kind == LinkType.NAK and seq is not None:
            log.warning("shoe sim: the host refused frame %d (reason %s)", seq, frame.payload[2:])
            self._tx.acknowledged(seq)
        elif kind == LinkType.STATUS_REQUEST:
            self._out(LinkFrame(0, LinkType.STATUS, self.state().encode()))
        elif kind == LinkType.RESET:
            self._forget("reset by the host")
            self._tx, self._rx = Sender(retry_s=self.retry_s, window=self.window), Receiver()
            self._say_hello(HelloCause.RESET)
            if self._cards:
                self._send(ShoeType.LOADED, self.left.to_bytes(2, "big"))
        else:
            log.warning("shoe sim: unexpected host frame type 0x%02X ignored", kind)

    def _command(self, frame: LinkFrame) -> None:
        try:
            message = decode(frame.type, frame.payload)
            if message.type is not ShoeType.EXPECT:
                raise ValueError(f"{message.type.name} is not a host command")
        except ValueError as exc:
            log.warning("shoe sim: host frame %d refused: %s", frame.seq, exc)
            self._out(LinkFrame(0, LinkType.NAK, seq_bytes(frame.seq) + bytes((NAK_MALFORMED,))))
            return
        self.expected_cards = message.value

    def _say_hello(self, cause: HelloCause) -> None:
        self._hello = None
        self._out(LinkFrame(0, LinkType.HELLO,
                            Hello(SHOE_KIND, VERSION, self._tx.next, cause).encode()))

    def _forget(self, why: str) -> None:
        lost = self._tx.unacknowledged
        if lost:
            log.info("shoe sim: %d unacknowledged frames forgotten (%s)", len(lost), why)
        self.discarded += lost

    def _send(self, kind: ShoeType, payload: bytes = b"") -> None:
        self._out(self._tx.send(kind, payload, self._clock()))

    def _out(self, frame: LinkFrame) -> None:
        """Put ``frame`` on the wire as the disturbed wire carries it."""
        if not self.powered or self._silent or self.unplugged:
            return
        data = encode(frame)
        if self._corrupt > 0:
            self._corrupt -= 1
            data = data[:-1] + bytes((data[-1] ^ 0x5A,))
        if self._drop > 0:
            self._drop -= 1
            return
        copies = 2 if self._repeat else 1
        if self._rnd is not None and frame.type not in (LinkType.HELLO, LinkType.STATUS):
            if self._rnd.random() < self._loss:
                return
            if self._rnd.random() < self._dup:
                copies = 2
        self._outbox += [data] * copies

    def serve(self, port: BytePort, stop: threading.Event) -> None:
        """Run on ``port`` until ``stop`` is set, the port fails, or :meth:`unplug` closes it.

        Serving again (on a new port) after an unplug is the replug: the shoe says HELLO
        (reconnect) and still holds every frame not yet acknowledged.
        """
        with self._lock:
            if self.unplugged:
                self.unplugged = self._unplug = False
                self._hello = HelloCause.RECONNECT
        while not stop.is_set():
            if self._unplug:
                with self._lock:
                    port.close()
                    self.unplugged = True
                    self._outbox.clear()
                log.info("shoe sim: unplugged")
                return
            try:
                data = port.read(READ_SLICE_S)
                writes = self.feed(data) if data else []
                writes += self.tick()
                for chunk in writes:
                    port.write(chunk)
            except OSError as exc:
                log.warning("shoe sim: port failed, stopping: %s", exc)
                return

    # --- control API: the dealer and the shoe -------------------------------------------------
    def load(self, cards: Iterable[Card | int | str], *, cut_at: int | None = None) -> None:
        """Load a new shoe with ``cards`` (top first); the cut card comes out before the
        ``cut_at``-th card (0-based), if given. Reports LOADED with the count."""
        new = collections.deque(_card(c) for c in cards)
        if cut_at is not None and not 0 <= cut_at <= len(new):
            raise ValueError(f"the cut card goes within the {len(new)} cards, not at {cut_at}")
        with self._lock:
            self._cards, self._cut_at, self._taken = new, cut_at, 0
            self.empty = self.cut_out = False
            self._send(ShoeType.LOADED, min(len(new), 0xFFFF).to_bytes(2, "big"))

    def shuffle(self, seed: int, *, decks: int = 8, cut_at: int | None = None) -> list[Card]:
        """Load ``decks`` decks shuffled from ``seed`` (a simulator's shuffle, not the certified
        RNG); the cards, top first."""
        cards = list(standard_shoe(decks))
        random.Random(seed).shuffle(cards)
        self.load(cards, cut_at=cut_at)
        return cards

    def peek(self, n: int = 1) -> list[Card]:
        """The next ``n`` cards, top first, without drawing them."""
        with self._lock:
            return list(self._cards)[:n]

    def draw(self) -> Card | None:
        """The dealer draws a card past the reader: CARD (or MISREAD if one is armed).

        The card drawn, or None: the shoe is empty (EMPTY is reported), its window is full (the
        card stays in; the lamp is lit), or it has no power.
        """
        return self._draw(ShoeType.CARD)

    def burn(self) -> Card | None:
        """The dealer draws a card and burns it (BURN; not dealt)."""
        return self._draw(ShoeType.BURN)

    def _draw(self, kind: ShoeType) -> Card | None:
        with self._lock:
            if not self.powered:
                return None
            cut = self._cut_at is not None and self._taken == self._cut_at and not self.cut_out
            if len(self._tx.unacknowledged) + 1 + cut > self.window:
                self.refused += 1
                return None
            if not self._cards:
                self.empty = True
                self._send(ShoeType.EMPTY)
                return None
            if cut:
                self._cut_card()
            card = self._cards.popleft()
            self._taken += 1
            if self._misread_next is not None:
                reason, self._misread_next = self._misread_next, None
                self.misread.append(card)
                self._send(ShoeType.MISREAD, bytes((reason,)))
            elif kind is ShoeType.CARD:
                self.dealt.append(card)
                self._send(ShoeType.CARD, card_payload(card))
            else:
                self.burned.append(card)
                self._send(ShoeType.BURN, card_payload(card))
            return card

    def misread_next(self, reason: MisreadReason = MisreadReason.UNREADABLE) -> None:
        """The next card drawn goes past unread: MISREAD with ``reason``."""
        with self._lock:
            self._misread_next = MisreadReason(reason)

    def cut_card(self) -> bool:
        """The cut card comes out now (this round is the shoe's last). False on a full window."""
        with self._lock:
            if self.window_full or not self.powered:
                return False
            self._cut_card()
            return True

    def _cut_card(self) -> None:
        self.cut_out = True
        self._send(ShoeType.CUT_CARD)

    def open_door(self) -> bool:
        return self._door(True)

    def close_door(self) -> bool:
        return self._door(False)

    def _door(self, open_: bool) -> bool:
        with self._lock:
            if self.window_full or not self.powered:
                return False
            if self.door_open != open_:
                self.door_open = open_
                self._send(ShoeType.DOOR, b"\x01" if open_ else b"\x00")
            return True

    # --- control API: the wire and the power --------------------------------------------------
    def send_frame(self, kind: int, payload: bytes = b"") -> None:
        """A firmware bug: send any reliable frame (a malformed card, an unknown type)."""
        with self._lock:
            self._out(self._tx.send(kind, payload, self._clock()))

    def corrupt_next_crc(self, n: int = 1) -> None:
        """The next ``n`` frames the shoe writes go out with a wrong CRC."""
        with self._lock:
            self._corrupt = n

    def drop_next(self, n: int = 1) -> None:
        """The next ``n`` frames the shoe writes are lost on the wire."""
        with self._lock:
            self._drop = n

    def lose_next_from_host(self, n: int = 1) -> None:
        """The next ``n`` frames from the host never arrive."""
        with self._lock:
            self._lose = n

    def repeat(self, on: bool = True) -> None:
        """Every frame the shoe writes goes out twice."""
        with self._lock:
            self._repeat = on

    def disturb(self, *, loss: float = 0.0, dup: float = 0.0, seed: int = 0) -> None:
        """From now on each event frame and acknowledgement the shoe writes is lost with
        probability ``loss`` and doubled with ``dup`` (HELLO and STATUS are spared); 0, 0 stops."""
        if not (0 <= loss < 1 and 0 <= dup <= 1):
            raise ValueError(f"loss is in [0, 1) and dup in [0, 1], not {loss}, {dup}")
        with self._lock:
            self._loss, self._dup = loss, dup
            self._rnd = random.Random(seed) if loss or dup else None

    def unplug(self, *, close_port: bool = True) -> None:
        """Pull the cable. ``close_port``: the serve loop closes its port (the driver's reads fail;
        replug by serving on a new port); else the line goes silent until :meth:`replug`."""
        with self._lock:
            if close_port:
                self._unplug = True
            else:
                self._silent = True

    def replug(self) -> None:
        """Put a silenced cable back: the shoe says HELLO (reconnect) and carries on."""
        with self._lock:
            if self._silent:
                self._silent = False
                self._codec = LinkCodec()
                self._hello = HelloCause.RECONNECT

    def power_off(self) -> None:
        """Power is cut: silent, and every frame not acknowledged is lost with the RAM."""
        with self._lock:
            if self.powered:
                self._forget("power off")
                self.powered = False
                self._outbox.clear()

    def power_on(self) -> None:
        """Power comes back: sequences restart at 1, HELLO (power-up). The cards stay in."""
        with self._lock:
            if not self.powered:
                self.powered = True
                self._power_up()

    def power_cycle(self) -> None:
        self.power_off()
        self.power_on()

    def __repr__(self) -> str:
        return (f"<ShoeSimulator {self.left} cards left, next SEQ {self._tx.next}, "
                f"{len(self._tx.unacknowledged)} unacknowledged>")
