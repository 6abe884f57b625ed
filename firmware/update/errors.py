"""The update's errors: one line each, for the ``egm update`` command and the events."""

from __future__ import annotations

from firmware.errors import EgmError


class UpdateError(EgmError):
    """An update operation cannot be done (bad arguments, unreadable state, a tool missing)."""


class UpdateRefused(UpdateError):
    """A bundle is refused: ``reason`` is a short code for the event, the message says why."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
