"""Exactly-once, in-order delivery over the product link (``docs/protocols/link.md``).

Both directions use the same two halves, sans-I/O and clock-driven by the caller:

* :class:`Sender` numbers reliable frames 1, 2, ... (wrapping 65535 -> 1), keeps each until it is
  acknowledged (ACK is cumulative), re-sends everything from a RESEND_FROM, and on ``due(now)``
  re-sends the oldest unacknowledged frame once ``retry_s`` has passed since it was last sent.
  A window bounds how many may be unacknowledged; past it ``send`` refuses (the device must stop
  producing, e.g. a shoe refuses to report further cards).
* :class:`Receiver` delivers a frame only if its SEQ is the next expected one and acknowledges it;
  a duplicate (already delivered) is acknowledged again and dropped; a gap (a later SEQ) is
  dropped and answered with RESEND_FROM(next expected), so order is kept and nothing is lost.
  ``resync()`` asks for everything from the next expected SEQ, as a host does after a reconnect.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from drivers.codec import LocalProtocolError
from drivers.link.codec import MAX_SEQ, LinkFrame, LinkType, seq_bytes, seq_of


def next_seq(seq: int) -> int:
    return 1 if seq >= MAX_SEQ else seq + 1


def _distance(a: int, b: int) -> int:
    """How far ``b`` is ahead of ``a`` on the 1..65535 ring (0 if equal)."""
    return (b - a) % MAX_SEQ


@dataclass(slots=True)
class _Pending:
    frame: LinkFrame
    sent_at: float


#: A RESEND_FROM for the same SEQ is neither asked for nor answered again within this time: every
#: frame behind a gap would otherwise ask again, and each answer re-send the whole window, filling
#: the line both ways until writes time out.
RESEND_HOLD_S = 0.1


@dataclass(slots=True)
class Sender:
    retry_s: float = 0.2
    window: int = 64
    next: int = 1
    hold_s: float = RESEND_HOLD_S
    _pending: deque[_Pending] = field(default_factory=deque)
    _answered: tuple[int, float] = (0, float("-inf"))

    def send(self, type_: int, payload: bytes, now: float) -> LinkFrame:
        """Number a new reliable frame and keep it until acknowledged; the caller writes it."""
        if len(self._pending) >= self.window:
            raise LocalProtocolError(f"{self.window} frames await acknowledgement")
        frame = LinkFrame(self.next, type_, payload)
        self.next = next_seq(self.next)
        self._pending.append(_Pending(frame, now))
        return frame

    @property
    def unacknowledged(self) -> list[LinkFrame]:
        return [p.frame for p in self._pending]

    def acknowledged(self, seq: int) -> None:
        """ACK(seq): every pending frame up to and including ``seq`` is delivered."""
        if not any(p.frame.seq == seq for p in self._pending):
            return                                  # stale or unknown: nothing to release
        while self._pending:
            done = self._pending.popleft().frame.seq == seq
            if done:
                break

    def resend_from(self, seq: int, now: float) -> list[LinkFrame]:
        """RESEND_FROM(seq): the pending frames from ``seq`` on, in order (and acks before it);
        nothing when the same request was answered less than ``hold_s`` ago."""
        if self._answered[0] == seq and now - self._answered[1] < self.hold_s:
            return []
        self._answered = (seq, now)
        while self._pending and self._pending[0].frame.seq != seq and \
                _distance(self._pending[0].frame.seq, seq) < self.window:
            self._pending.popleft()                 # the receiver has everything before seq
        for p in self._pending:
            p.sent_at = now
        return [p.frame for p in self._pending]

    def due(self, now: float) -> list[LinkFrame]:
        """Frames to send again because their acknowledgement is overdue (oldest first, one)."""
        if self._pending and now - self._pending[0].sent_at >= self.retry_s:
            self._pending[0].sent_at = now
            return [self._pending[0].frame]
        return []


@dataclass(slots=True)
class Receiver:
    expected: int = 1
    hold_s: float = RESEND_HOLD_S
    _asked: tuple[int, float] = (0, float("-inf"))
    #: Reliable frames delivered, and duplicates / gaps seen (for the diagnostics screen).
    delivered: int = 0
    duplicates: int = 0
    gaps: int = 0

    def receive(self, frame: LinkFrame, now: float = 0.0) -> tuple[LinkFrame | None, LinkFrame | None]:
        """``(frame to deliver or None, control frame to send back or None)`` for one reliable
        frame. A gap asks RESEND_FROM(expected) once per ``hold_s``; later frames behind the same
        gap are dropped silently while the answer is on its way."""
        if frame.seq == 0:
            raise LocalProtocolError("an unsequenced frame is not for the receiver")
        if frame.seq == self.expected:
            self.expected = next_seq(self.expected)
            self.delivered += 1
            return frame, LinkFrame(0, LinkType.ACK, seq_bytes(frame.seq))
        ahead = _distance(self.expected, frame.seq)
        if ahead < MAX_SEQ // 2:                    # a gap: ask again from what is missing
            self.gaps += 1
            if self._asked[0] == self.expected and now - self._asked[1] < self.hold_s:
                return None, None
            self._asked = (self.expected, now)
            return None, LinkFrame(0, LinkType.RESEND_FROM, seq_bytes(self.expected))
        self.duplicates += 1                        # already delivered: acknowledge again
        return None, LinkFrame(0, LinkType.ACK, seq_bytes(frame.seq))

    def resync(self) -> LinkFrame:
        """After a reconnect: ask for everything not yet delivered."""
        return LinkFrame(0, LinkType.RESEND_FROM, seq_bytes(self.expected))


def control_seq(frame: LinkFrame) -> int | None:
    """The SEQ an ACK / RESEND_FROM / NAK refers to, or None for another or malformed frame."""
    if frame.type in (LinkType.ACK, LinkType.RESEND_FROM, LinkType.NAK):
        return seq_of(frame.payload)
    return None
