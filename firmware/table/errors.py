"""The live table's errors."""

from __future__ import annotations

from firmware.errors import EgmError


class TableError(EgmError):
    """The table refused something (a command, a configuration, an operator's action)."""


class TableProtocolError(TableError):
    """Hostile or broken input on a table connection: nothing changed, the connection is dropped.

    ``reason`` is one short code (``oversize``, ``truncated``, ``bad_signature``, ``replay``,
    ``bad_body``, ``unknown_sender``...), the message says what was wrong.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
