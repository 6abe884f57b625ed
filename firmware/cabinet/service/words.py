"""The arguments of a service action, as words: checks shared by the handlers."""

from __future__ import annotations

from firmware.cabinet.service.errors import ServiceError

#: The most records a read action returns.
MAX_READ = 1000


def count(args: list[str], default: int) -> int:
    """The record count ``[N]`` of a read action (``default`` without one)."""
    if not args:
        return default
    if len(args) != 1 or not args[0].isdigit() or not 1 <= int(args[0]) <= MAX_READ:
        raise ServiceError(f"N is a number of records 1..{MAX_READ}")
    return int(args[0])


def no_args(args: list[str], name: str) -> None:
    """Refuse arguments to an action that takes none."""
    if args:
        raise ServiceError(f"{name} takes no arguments")
