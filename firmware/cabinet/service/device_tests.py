"""The technician's device actions: diagnostics, the device tests, the touch calibration's gate and
clearing a tilt once its check passes again. Hard meters are never pulsed by a test."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from firmware.cabinet.service.errors import ServiceError
from firmware.cabinet.service.words import no_args
from firmware.cabinet.states import CabinetState as S
from hal.base import Device
from hal.devices.io_board import TIERS, TowerPattern

if TYPE_CHECKING:
    from firmware.cabinet.service.api import ServiceApi

D = TypeVar("D", bound=Device)


def fitted(device: D | None, slot: str) -> D:
    """The device fitted in ``slot``, if it is open (a :class:`ServiceError` otherwise)."""
    if device is None:
        raise ServiceError(f"no {slot.replace('_', ' ')} is fitted")
    if not device.is_open:
        raise ServiceError(f"the {slot.replace('_', ' ')} is {device.lifecycle.value}")
    return device


def counters(device: Device) -> dict[str, Any]:
    return {str(k): v for k, v in dict(device.counters).items()}


def clear_tilt(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    if len(args) != 1:
        raise ServiceError("usage: clear-tilt TILT (e.g. rng:drbg)")
    return api.terminal.retest(args[0]), f"{args[0]} cleared after its check passed"


def diagnostics(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    no_args(args, "diagnostics")
    devices = {}
    for name, device in api.terminal.devices.items():
        entry: dict[str, Any] = {"lifecycle": device.lifecycle.value, "backend": type(device).__name__}
        try:
            entry["counters"] = counters(device)
        except Exception as exc:           # a device in trouble must not hide the others
            entry["error"] = f"{type(exc).__name__}: {exc}"
        devices[name] = entry
    cabinet = api.terminal.cabinet
    return {"state": cabinet.state.name, "tilts": [{"tilt": t.key, "reason": t.reason}
                                                   for t in cabinet.active_tilts],
            "devices": devices}, f"{len(devices)} devices"


def note_return_test(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    no_args(args, "test note-return")
    terminal = api.terminal
    validator = fitted(terminal.devices.bill_validator, "bill_validator")
    status = validator.status()
    escrowed = validator.escrowed
    returned = False
    # Only in SERVICE, where the cabinet takes no money; never a voucher being redeemed.
    if escrowed and terminal.cabinet.state is S.SERVICE and terminal.redeeming is None:
        validator.return_escrow()
        returned = True
    result = {"device": "bill_validator", "lifecycle": validator.lifecycle.value,
              "status": status, "escrow": escrowed, "returned": returned,
              "notes_cents": sorted(set(validator.notes.values())),
              "counters": counters(validator)}
    if returned:
        detail = "escrowed item returned"
    elif escrowed:
        detail = "item in escrow left to the cabinet (returned only in SERVICE)"
    else:
        detail = f"status {result['status']}; nothing in escrow"
    return result, detail


def ticket_test(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    if args == ["print"]:
        return api.terminal.print_test_ticket(), "test ticket sent (TEST TICKET - VOID, never redeemable)"
    no_args(args, "test ticket [print]")
    printer = fitted(api.terminal.devices.printer, "printer")
    status = printer.status()
    text = status.text
    result = {"device": "printer", "lifecycle": printer.lifecycle.value, "flags": text,
              "version": status.version, "printing": printer.printing,
              "counters": counters(printer),
              "note": "`test ticket print` (in SERVICE) prints TEST TICKET - VOID, numbered all zeros"}
    return result, f"printer flags: {text}"


def touch_calibrate(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    """The gate of the screens' ``touch_calibration`` command (firmware/ui/service/calibration.py):
    the role and the cabinet state are checked and the step logged; the screens do the rest."""
    if len(args) != 1 or args[0] not in ("begin", "commit", "cancel"):
        raise ServiceError("usage: touch calibrate begin|commit|cancel")
    fitted(api.terminal.devices.touch, "touch")
    return {"step": args[0]}, f"touch calibration {args[0]}"


def touch_test(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    no_args(args, "test touch")
    touch = fitted(api.terminal.devices.touch, "touch")
    touches = list(api.terminal.touches)
    return ({"device": "touch", "lifecycle": touch.lifecycle.value, "touches": touches},
            f"{len(touches)} touches")


def shoe_test(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    no_args(args, "test shoe")
    shoe = fitted(api.terminal.devices.shoe, "shoe")
    if api.terminal.kernel is not None:
        raise ServiceError("the shoe is dealing a round")
    if not shoe.queued:
        return {"device": "shoe", "card": None, "note": "draw a card from the shoe, then ask again"}, \
            "no card drawn"
    card = str(shoe.read_card(1.0))
    api.terminal.ledger.event("shoe_test_card", card=card)
    return {"device": "shoe", "card": card}, f"read {card}"


def lamps_test(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    from hal.events import Button

    if args not in ([], ["on"], ["off"]):
        raise ServiceError("usage: test lamps [on/off]")
    board = fitted(api.terminal.devices.io_board, "io_board")
    lit = frozenset() if args == ["off"] else frozenset(Button)
    board.button_lamps(lit)
    return {"device": "io_board", "lamps": sorted(b.value for b in lit)}, \
        f"{len(lit)} button lamps lit"


def tower_test(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    patterns = {p.name.lower().replace("_", "-"): p for p in TowerPattern}
    board = fitted(api.terminal.devices.io_board, "io_board")
    if args == ["off"]:
        for tier in range(TIERS):
            board.tower(tier, TowerPattern.OFF)
        return {"device": "io_board", "tower": dict.fromkeys(range(TIERS), "off")}, "tower off"
    tier_text, pattern_text = args if len(args) == 2 else ("0", "flash-fast") if not args else ("", "")
    if not tier_text.isdigit() or not 0 <= int(tier_text) < TIERS or pattern_text not in patterns:
        raise ServiceError(f"usage: test tower [TIER PATTERN, or off]: TIER 0..{TIERS - 1}, "
                           f"PATTERN {', '.join(patterns)}")
    board.tower(int(tier_text), patterns[pattern_text])
    return {"device": "io_board", "tower": {int(tier_text): pattern_text}}, \
        f"tier {tier_text} {pattern_text}"


def meters_test(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    no_args(args, "test meters")
    board = fitted(api.terminal.devices.io_board, "io_board")
    shown = {k.value: bool(v) for k, v in board.inputs.items()}
    return {"device": "io_board", "inputs": shown, "active": sorted(k for k, v in shown.items() if v),
            "counters": counters(board),
            "note": "hard meters count money: a test never pulses them"}, \
        f"{sum(shown.values())} of {len(shown)} inputs on"
