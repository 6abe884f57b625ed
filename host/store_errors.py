"""The host store's one error type (re-exported by :mod:`host.store`)."""

from __future__ import annotations

from egmproto.errors import EgmError


class HostStoreError(EgmError):
    """The host database cannot be opened or used as asked (bad URL, unreachable server, corrupt
    file, misuse of the API, a database error). The message says which and why."""
