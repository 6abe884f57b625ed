"""Backends by name, imported lazily: configuration says ``backend = "id003"``, this finds the class.

Nothing registers itself at import time; the table below is the whole list, reviewed in one place.
A backend's settings are its constructor's keyword arguments: an unknown setting is a
:class:`BackendError` naming it and the ones allowed (no ``**kwargs`` swallowing a misspelling).

The configuration's ``[devices]`` section names each device's backend as a *spec*
(:func:`parse_spec`): ``"id003"`` (the real device), ``"sim:id003"`` (the same backend driving its
simulated twin on a pty: ``sim_hardware.twins``) or ``"none"`` (no such device on this cabinet).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hal.base import Device
from hal.devices.bill_validator import BillValidator
from hal.devices.io_board import IoBoard
from hal.devices.printer import TicketPrinter
from hal.devices.shoe import CardShoe
from hal.devices.touch import Touchscreen
from hal.errors import BackendError

#: Device class -> the interface every backend of it implements (``hal.devices``).
INTERFACES: dict[str, type] = {      # type[Device] would refuse the abstract classes (mypy)
    "bill_validator": BillValidator,
    "printer": TicketPrinter,
    "touch": Touchscreen,
    "shoe": CardShoe,
    "io": IoBoard,
}

#: Device class -> backend name -> "module:Class".
BACKENDS: dict[str, dict[str, str]] = {
    "bill_validator": {
        "id003": "drivers.id003.driver:Id003Validator",
        "ssp": "drivers.ssp.driver:SspValidator",
    },
    "printer": {"tcl": "drivers.tcl.driver:TclPrinter"},
    "touch": {
        "evdev": "drivers.touch.evdev_driver:EvdevTouch",
        "microtouch": "drivers.touch.microtouch_driver:MicroTouch",
    },
    "shoe": {"shoe": "drivers.shoe.driver:ShoeDriver"},
    "io": {"io": "drivers.io_board.driver:IoBoardDriver"},
}


def backend_class(device_class: str, backend: str) -> type[Device]:
    """The class of ``backend`` for ``device_class``, imported now."""
    backends = BACKENDS.get(device_class)
    if backends is None:
        raise BackendError(f"unknown device class {device_class!r}; classes are {', '.join(BACKENDS)}")
    target = backends.get(backend)
    if target is None:
        raise BackendError(
            f"{device_class}: unknown backend {backend!r}; backends are {', '.join(backends)}"
        )
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name):
            raise BackendError(f"{device_class}: backend {backend!r} is not built yet") from None
        raise BackendError(f"{device_class}: backend {backend!r} cannot be imported: {exc}") from exc
    cls = getattr(module, class_name, None)
    interface = INTERFACES.get(device_class, Device)
    if not (isinstance(cls, type) and issubclass(cls, Device) and issubclass(cls, interface)):
        raise BackendError(f"{target} is not a device backend implementing {interface.__name__}")
    missing = sorted(getattr(cls, "__abstractmethods__", ()))
    if missing:
        raise BackendError(f"{target} does not implement {interface.__name__}: "
                           f"{', '.join(missing)} missing")
    return cls


def create(device_class: str, backend: str, name: str, settings: Mapping[str, Any] | None = None) -> Device:
    """A closed backend instance named ``name`` with ``settings`` as keyword arguments."""
    cls = backend_class(device_class, backend)
    settings = dict(settings or {})
    parameters = inspect.signature(cls.__init__).parameters
    allowed = [p for p in parameters if p not in ("self", "name")
               and parameters[p].kind in (inspect.Parameter.KEYWORD_ONLY,
                                          inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    unknown = sorted(set(settings) - set(allowed))
    if unknown:
        raise BackendError(
            f"{device_class}.{backend}: unknown setting(s) {', '.join(unknown)}; "
            f"settings are {', '.join(allowed) or 'none'}"
        )
    try:
        return cls(name, **settings)
    except (TypeError, ValueError) as exc:
        raise BackendError(f"{device_class}.{backend}: {exc}") from exc


#: The spec prefix of a simulated twin, and the spec of an absent device.
SIM_PREFIX = "sim:"
NONE = "none"


@dataclass(frozen=True, slots=True)
class BackendSpec:
    """A configured device: its ``backend`` (None: no device) and whether it is ``simulated``."""

    device_class: str
    backend: str | None
    simulated: bool = False


def parse_spec(device_class: str, spec: str) -> BackendSpec:
    """``"microtouch"``, ``"sim:microtouch"`` or ``"none"`` for ``device_class``; the backend must
    be one of the table's (:class:`BackendError` otherwise). Nothing is imported."""
    text = spec.strip()
    if text == NONE:
        return BackendSpec(device_class, None)
    simulated = text.startswith(SIM_PREFIX)
    backend = text[len(SIM_PREFIX):] if simulated else text
    backends = BACKENDS.get(device_class)
    if backends is None:
        raise BackendError(f"unknown device class {device_class!r}; classes are {', '.join(BACKENDS)}")
    if backend not in backends:
        raise BackendError(
            f"{device_class}: {spec!r} names no backend; write one of {', '.join(backends)}, "
            f"{SIM_PREFIX}<backend> for its simulator, or {NONE}")
    return BackendSpec(device_class, backend, simulated)
