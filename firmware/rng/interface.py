"""What the rest of the firmware may ask of a random source.

Games never call the RNG themselves: they draw through a card source (``firmware.cards.source``)
which uses exactly this interface, so a test can swap the production service for a stub.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class RandomSource(Protocol):
    def randbelow(self, n: int) -> int:
        """A uniformly distributed integer in ``[0, n)``, ``n >= 1`` (rejection sampling, never ``%``)."""
        ...
