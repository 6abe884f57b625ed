"""The technician's demo mode actions (the mode itself: :mod:`firmware.cabinet.demo`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from firmware.cabinet.service.errors import ServiceError
from firmware.cabinet.service.words import no_args

if TYPE_CHECKING:
    from firmware.cabinet.service.api import ServiceApi


def _number(args: list[str], usage: str) -> int | None:
    if len(args) > 1 or (args and not args[0].isdigit()):
        raise ServiceError(f"usage: {usage}")
    return int(args[0]) if args else None


def demo_start(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    status = api.demo.start(_number(args, "demo start [CREDITS]"))
    return status, f"{status['credits']} demo credits, {status['game']}"


def demo_play(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    rounds = _number(args, "demo play [ROUNDS]")
    result = api.demo.play(1 if rounds is None else rounds)
    return result, f"{result['played']} demo rounds; demo credits {result['credits']}"


def demo_stop(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    no_args(args, "demo stop")
    summary = api.demo.stop()
    return summary, f"{summary['rounds']} demo rounds"
