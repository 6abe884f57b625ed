"""The simulated twin of a configured device: ``sim:<backend>`` (``hal.registry.parse_spec``).

A twin is the production backend driving its simulator on a pty, exactly as the tests and
``egm sim`` pair them: :func:`twin` starts the simulator (:data:`SIMULATORS`) serving one end of a
:class:`~sim_hardware.pty_link.PtyLink` and creates the backend (closed) on the other end's path.
A backend whose simulator is not on a pty (evdev writes a FIFO) has no twin here.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator, Mapping
from typing import Any

from hal import registry
from hal.base import Device
from hal.errors import BackendError
from sim_hardware.pty_link import run_on_pty

#: (device class, backend) -> "module:Class" of its simulator (built with no arguments).
SIMULATORS: dict[tuple[str, str], str] = {
    ("bill_validator", "id003"): "sim_hardware.id003_validator:Id003Simulator",
    ("bill_validator", "ssp"): "sim_hardware.ssp_validator:SspSimulator",
    ("printer", "tcl"): "sim_hardware.tcl_printer:TclPrinterSimulator",
    ("touch", "microtouch"): "sim_hardware.touch_microtouch:MicroTouchSimulator",
    ("shoe", "shoe"): "sim_hardware.shoe:ShoeSimulator",
    ("io", "io"): "sim_hardware.io_board:IoBoardSimulator",
}


def simulator_for(device_class: str, backend: str) -> Any:
    """A new simulator of ``backend`` (``BackendError`` if it has none on a pty)."""
    target = SIMULATORS.get((device_class, backend))
    if target is None:
        raise BackendError(f"{device_class}: backend {backend!r} has no simulated twin on a pty")
    module_name, _, class_name = target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)()


@contextlib.contextmanager
def twin(spec: registry.BackendSpec, name: str, settings: Mapping[str, Any] | None = None,
         *, simulator: Any = None) -> Iterator[tuple[Device, Any]]:
    """``(device, simulator)`` for a ``sim:`` spec: the simulator (``simulator``, or a new one)
    served on a pty and the backend created (closed) on it with ``settings`` (its ``port`` is the
    pty). On exit the device is closed, then the simulator stopped and the pty closed."""
    if not spec.simulated or spec.backend is None:
        raise BackendError(f"{spec.device_class}: {spec.backend or registry.NONE} is not a "
                           f"{registry.SIM_PREFIX} spec")
    sim = simulator if simulator is not None else simulator_for(spec.device_class, spec.backend)
    with run_on_pty(sim, name=f"sim-{spec.backend}") as link:
        device = registry.create(spec.device_class, spec.backend, name,
                                 {**(settings or {}), "port": link.path})
        try:
            yield device, sim
        finally:
            device.close()


__all__ = ["SIMULATORS", "simulator_for", "twin"]
