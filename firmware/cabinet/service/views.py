"""The read actions: meters, game recall, events, bills, tickets, and the software verification.

Each handler takes the :class:`~firmware.cabinet.service.api.ServiceApi` and the action's words and
returns (answer, the detail logged with it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from firmware.cabinet.service.errors import ServiceError
from firmware.cabinet.service.words import count, no_args

if TYPE_CHECKING:
    from firmware.cabinet.service.api import ServiceApi


def meters(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    no_args(args, "meters")
    return api.ledger.meters_report(), "meters read"


def recall(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    rounds = api.ledger.recall(count(args, 10))
    return {"rounds": rounds}, f"{len(rounds)} rounds"


def events(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    found = api.ledger.events(count(args, 50))
    return {"events": found}, f"{len(found)} events"


def bills(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    notes = api.ledger.notes(count(args, 10))
    return {"bills": notes}, f"{len(notes)} notes"


def tickets(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    n = count(args, 35)
    vouchers = api.terminal.vouchers.history(n)
    return {"vouchers": vouchers, "cashless": api.ledger.cashless(n)}, f"{len(vouchers)} vouchers"


def software(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    if args:
        raise ServiceError("software takes no arguments (software hash ALGORITHM [SEED_HEX] digests "
                           "the software now)")
    verification = api.software_verification
    if verification is None:
        return {"verification": None, "note": "no software verification was recorded since power-up"}, \
            "no verification recorded"
    return {"verification": verification}, f"ok={verification.get('ok')}"


def software_hash(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    from firmware.cabinet.software import (
        DEFAULT_PACKAGES,
        LAB_ALGORITHMS,
        default_root,
        lab_hash,
    )

    if not 1 <= len(args) <= 2:
        raise ServiceError(f"usage: software hash ALGORITHM [SEED_HEX]; algorithms: {', '.join(LAB_ALGORITHMS)}")
    seed = None
    if len(args) == 2:
        text = args[1][2:] if args[1][:2].lower() == "0x" else args[1]
        try:
            seed = bytes.fromhex(text)
        except ValueError:
            raise ServiceError("the seed is hexadecimal digits (an even number of them)") from None
    report = lab_hash(api.software_root or default_root(), args[0], seed,
                      api.software_packages or DEFAULT_PACKAGES)
    return report, f"{report['algorithm']} {report['overall'][:16]}... ({len(report['files'])} files)"
