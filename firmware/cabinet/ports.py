"""What the terminal asks of the collaborators that sit above it, as small interfaces.

The host link (``firmware.hostlink``) is above the cabinet, which may not import it; the terminal
names only what it calls. The composition root (``firmware.commands.run``) builds the real link
and passes it in through the terminal's constructor (docs/architecture.md, "The composition root").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from firmware.cashless.vouchers import Host

if TYPE_CHECKING:
    from firmware.cabinet.cashout import TicketNumbering
    from firmware.cabinet.money_in import TicketHost
    from firmware.cabinet.packages import PackageManager


class HostPort(Host, Protocol):
    """The terminal's host link as the terminal uses it: polled from every step, its status in the
    status document, asked to validate a voucher while connected, and holding the game packages
    the host offered (None: the terminal takes none)."""

    packages: PackageManager | None

    @property
    def connected(self) -> bool: ...

    def poll(self) -> None: ...

    def status(self) -> dict[str, Any]: ...


class SasPart(Protocol):
    """The SAS port as the terminal uses it (``firmware/cabinet/sas_port.py``): its status in the
    status document, and what its TITO poll set takes over from the terminal's own vouchers: the
    tickets inserted (``ticket_host``: the SAS host decides) and the numbers of the tickets printed
    (``numbering``), None where it takes nothing over."""

    @property
    def ticket_host(self) -> TicketHost | None: ...

    @property
    def numbering(self) -> TicketNumbering | None: ...

    def play_held(self) -> str | None:
        """Why the SAS host holds play now (an AFT lock), or None."""
        ...

    def status(self) -> dict[str, Any]: ...

    def close(self) -> None: ...
