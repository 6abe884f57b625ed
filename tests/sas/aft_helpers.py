"""An AFT machine over a real ledger, a cabinet stand-in the tests steer, and the host's exchange."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from firmware.ledger.ledger import Ledger
from firmware.sas.aft import AftPolls, AftSettings
from firmware.sas.responder import SasMachine
from firmware.sas.view import LedgerView
from tests.sas.helpers import ADDRESS, IDENTITY, NOW

ASSET = 1234
LIMIT = 100_000          #: cents


@dataclass
class Cabinet:
    """``AftCabinet`` as the tests set it: what it refuses, and what it was told."""

    refuse: dict[str, str] = field(default_factory=dict)     #: "in" / "out" / "lock" -> reason
    room: int = 10**9
    held_until: float | None = None
    shown: list[tuple[str, int]] = field(default_factory=list)

    def refusal(self, direction: str) -> str | None:
        return self.refuse.get(direction)

    def credit_room(self) -> int:
        return 0 if "in" in self.refuse else self.room

    def lock_refusal(self) -> str | None:
        return self.refuse.get("lock")

    def hold(self, until: float | None) -> None:
        self.held_until = until

    def show_transfer(self, direction: str, cents: int) -> None:
        self.shown.append((direction, cents))

    # receipts: none without ``has_printer`` (or with ``refuse["receipt"]``), ``busy`` holds them
    # back, ``receipts`` has each one sent and its ``done``
    has_printer: bool = False
    busy: bool = False
    receipts: list[tuple[str, tuple[str, ...], Callable[[str | None], None]]] = field(default_factory=list)

    def receipt_refusal(self) -> str | None:
        return self.refuse.get("receipt") or (None if self.has_printer else "no printer")

    def printer_busy(self) -> bool:
        return self.busy

    def receipt_texts(self) -> dict[int, str]:
        return {0x00: "HOUSE"}

    def print_receipt(self, key: str, lines: tuple[str, ...], done: Callable[[str | None], None]) -> None:
        self.receipts.append((key, lines, done))


@dataclass
class Clock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


def aft_machine(ledger: Ledger, cabinet: Cabinet | None = None, *, enabled: bool = True,
                clock: Clock | None = None) -> tuple[SasMachine, AftPolls]:
    polls = AftPolls(ledger, cabinet or Cabinet(), AftSettings(ASSET, LIMIT, enabled),
                     clock=lambda: NOW, monotonic=clock or Clock())
    return SasMachine(ADDRESS, LedgerView(ledger, IDENTITY, clock=lambda: NOW), polls=[polls]), polls


def exchange_with(machine: SasMachine):
    """The host's exchange with ``machine``; a poll to another address follows each, as hosts do,
    so that the next poll is never taken for a retry."""
    def exchange(wire: bytes) -> bytes:
        reply = machine.receive(wire)
        machine.receive(bytes([0x80 | (ADDRESS + 1)]))
        return reply
    return exchange
