"""The AFT game lock of long poll 0x74: held until cancelled, used by a transfer, or timed out."""

from __future__ import annotations

from collections.abc import Callable


class AftLock:
    """Whether the host holds the machine locked for a transfer, on a monotonic ``clock``."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._until: float | None = None

    def lock(self, timeout_hundredths: int) -> float:
        """Lock for ``timeout_hundredths`` of a second from now; the monotonic time it ends."""
        self._until = self._clock() + timeout_hundredths / 100
        return self._until

    def release(self) -> None:
        self._until = None

    @property
    def locked(self) -> bool:
        if self._until is not None and self._clock() >= self._until:
            self._until = None
        return self._until is not None
