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
outbox the serve loop writes. The link itself (framing, delivery, serve loop, the wire faults) is
:class:`~sim_hardware.link_device.LinkDeviceSimulator`, shared with the I/O board.
"""

from __future__ import annotations

import collections
import random
import time
from collections.abc import Callable, Iterable

from drivers.link.codec import LinkFrame
from drivers.link.reliable import Receiver
from drivers.shoe.control import SHOE_KIND, ShoeState
from drivers.shoe.messages import MisreadReason, ShoeType, card_payload, decode
from firmware.cards.card import Card, parse_card
from firmware.cards.shoe import standard_shoe
from sim_hardware.link_device import NAK_MALFORMED, VERSION, LinkDeviceSimulator

__all__ = ["NAK_MALFORMED", "VERSION", "ShoeSimulator"]


def _card(value: Card | int | str) -> Card:
    return parse_card(value) if isinstance(value, str) else Card(value)


class ShoeSimulator(LinkDeviceSimulator):
    """One simulated card-reading shoe."""

    KIND = SHOE_KIND
    LOG_NAME = "shoe sim"

    def __init__(self, cards: Iterable[Card | int | str] | None = None, *, seed: int | None = None,
                 decks: int = 8, cut_at: int | None = None, retry_s: float = 0.2,
                 window: int = 64, clock: Callable[[], float] = time.monotonic) -> None:
        self._cards: collections.deque[Card] = collections.deque()
        self._cut_at: int | None = None
        self._taken = 0
        self.door_open = False
        self.cut_out = False
        self.empty = False
        #: Cards reported as CARD, BURN and MISREAD, in order; EXPECT's last value.
        self.dealt: list[Card] = []
        self.burned: list[Card] = []
        self.misread: list[Card] = []
        self.expected_cards: int | None = None
        self.refused = 0                   #: draws refused on a full window
        self._misread_next: MisreadReason | None = None
        super().__init__(retry_s=retry_s, window=window, clock=clock)
        if cards is not None:
            self.load(cards, cut_at=cut_at)
        elif seed is not None:
            self.shuffle(seed, decks=decks, cut_at=cut_at)

    # --- state ------------------------------------------------------------------------------
    def _power_up(self) -> None:
        super()._power_up()
        self._rx = Receiver()

    @property
    def left(self) -> int:
        return len(self._cards)

    def state(self) -> ShoeState:
        """What a STATUS frame would say now."""
        with self._lock:
            return ShoeState(door_open=self.door_open, empty=self.empty, cut_card=self.cut_out,
                             window_full=self.window_full, left=min(self.left, 0xFFFF),
                             next_seq=self._tx.next,
                             pending=min(len(self._tx.unacknowledged), 0xFF))

    # --- the host's frames ------------------------------------------------------------------
    def _after_reset(self) -> None:
        if self._cards:
            self._send(ShoeType.LOADED, self.left.to_bytes(2, "big"))

    def _command(self, frame: LinkFrame) -> None:
        try:
            message = decode(frame.type, frame.payload)
            if message.type is not ShoeType.EXPECT:
                raise ValueError(f"{message.type.name} is not a host command")
        except ValueError as exc:
            self._refuse(frame, exc)
            return
        self.expected_cards = message.value

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

    def __repr__(self) -> str:
        return (f"<ShoeSimulator {self.left} cards left, next SEQ {self._tx.next}, "
                f"{len(self._tx.unacknowledged)} unacknowledged>")
