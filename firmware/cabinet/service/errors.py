"""The service API's one error: a request refused."""

from __future__ import annotations

from firmware.errors import EgmError


class ServiceError(EgmError):
    """A service request refused (one line: why)."""
