"""A round shown step by step: a timeline of beats, advanced by the frame clock, skippable.

A game turns a completed round record into :class:`Beat` s (``GameUi.timeline``): each holds what
is visible once it has played (``reveal``, the game's own immutable snapshot), how long it lasts,
and a caption. :class:`Playback` only keeps time: ``advance(dt)`` moves through the beats,
``skip()`` jumps to the end, and ``progress`` (0..1 in the current beat) drives the small
animations (a card sliding in from the shoe). Tests step it with fixed ``dt``; nothing reads a
clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Beat:
    kind: str                    #: deal, scores, war, war_step, pool, pool_step, settle...
    duration: float              #: seconds
    reveal: Any                  #: what is visible from this beat on (the game's snapshot)
    caption: str = ""            #: the message line while it shows
    banner: str = ""             #: a big word over the table (WAR!)


class Playback:
    """Time through a list of beats (at least one)."""

    def __init__(self, beats: list[Beat], *, speed: float = 1.0) -> None:
        if not beats:
            raise ValueError("a playback needs at least one beat")
        if speed <= 0:
            raise ValueError(f"playback speed must be positive, not {speed}")
        self.beats = beats
        self.speed = speed
        self.index = 0
        self.elapsed = 0.0           #: seconds into the current beat
        self.skipped = False

    @property
    def beat(self) -> Beat:
        return self.beats[self.index]

    @property
    def done(self) -> bool:
        return self.index == len(self.beats) - 1 and self.elapsed >= self.beat.duration

    @property
    def progress(self) -> float:
        """0..1 through the current beat."""
        d = self.beat.duration
        return 1.0 if d <= 0 else min(1.0, self.elapsed / d)

    def advance(self, dt: float) -> None:
        if dt < 0:
            raise ValueError(f"time does not run backwards ({dt})")
        self.elapsed += dt * self.speed
        while self.elapsed >= self.beat.duration and self.index < len(self.beats) - 1:
            self.elapsed -= self.beat.duration
            self.index += 1

    def skip(self) -> None:
        """Show the rest at once (the player touched the table)."""
        self.index = len(self.beats) - 1
        self.elapsed = self.beat.duration
        self.skipped = True

    def seek(self, kind: str, *, last: bool = False) -> bool:
        """Stop at the end of the first (or last) beat of ``kind``; False if there is none."""
        found = [i for i, b in enumerate(self.beats) if b.kind == kind]
        if not found:
            return False
        self.index = found[-1] if last else found[0]
        self.elapsed = self.beat.duration
        return True
