"""Discovery and hot-plug of serial devices through udev (pyudev).

The cabinet says which physical port each device is by udev properties that survive a replug on
another USB socket (``ID_SERIAL``: vendor, model and serial number of a USB adapter; or ``ID_PATH``:
the socket itself) or by a fixed device node. :class:`Hotplug` keeps the watched devices:

* a udev ``remove`` of a watched port calls ``device.lost(...)``: the backend releases the port,
  queues ``DeviceOffline`` and refuses requests (the cabinet tilts);
* a udev ``add`` of a matching port points the backend at the new node (``device.port``) and calls
  ``reopen()``; a failure to reopen is logged and the device stays offline until the next ``add``.

The decision logic is :meth:`Hotplug.handle`, fed ``(action, properties)``; the udev monitor
thread (``start``) is a thin adapter around it, so tests feed events directly.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hal.base import Device, Lifecycle
from hal.errors import DeviceError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PortMatch:
    """Which udev ``tty`` device is this device's port; every given field must match."""

    devnode: str | None = None
    id_serial: str | None = None
    id_path: str | None = None

    def __post_init__(self) -> None:
        if not (self.devnode or self.id_serial or self.id_path):
            raise ValueError("a port match needs a device node, an ID_SERIAL or an ID_PATH")

    def matches(self, properties: Mapping[str, str]) -> bool:
        return ((self.devnode is None or properties.get("DEVNAME") == self.devnode)
                and (self.id_serial is None or properties.get("ID_SERIAL") == self.id_serial)
                and (self.id_path is None or properties.get("ID_PATH") == self.id_path))


def discover(match: PortMatch, context: Any = None) -> list[str]:
    """The device nodes of the ``tty`` devices present now that ``match`` accepts."""
    import pyudev

    context = context or pyudev.Context()
    return sorted(d.device_node for d in context.list_devices(subsystem="tty")
                  if d.device_node and match.matches(dict(d.properties)))


class Hotplug:
    def __init__(self) -> None:
        self._watched: list[tuple[PortMatch, Device]] = []
        self._observer: Any = None

    def watch(self, device: Device, match: PortMatch) -> None:
        self._watched.append((match, device))

    def handle(self, action: str, properties: Mapping[str, str]) -> None:
        """One udev event of the ``tty`` subsystem."""
        for match, device in self._watched:
            if not match.matches(properties):
                continue
            node = properties.get("DEVNAME", "?")
            if action == "remove":
                device.lost(f"unplugged ({node} removed)")
            elif action == "add" and device.lifecycle is not Lifecycle.OPEN:
                if hasattr(device, "port") and node != "?":
                    device.port = node
                try:
                    device.reopen()
                    log.info("%s: back on %s", device.name, node)
                except DeviceError as exc:
                    log.error("%s: came back on %s but cannot reopen: %s", device.name, node, exc)

    def start(self, context: Any = None) -> None:
        """Watch udev in a background thread (pyudev's observer)."""
        import pyudev

        context = context or pyudev.Context()
        monitor = pyudev.Monitor.from_netlink(context)
        monitor.filter_by(subsystem="tty")

        def on_event(device: Any) -> None:
            try:
                self.handle(device.action, dict(device.properties))
            except Exception:       # the observer thread must survive anything
                log.exception("hot-plug: event handling failed")

        self._observer = pyudev.MonitorObserver(monitor, callback=on_event, name="egm-hotplug")
        self._observer.start()

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.send_stop()
            self._observer.join(2.0)
            self._observer = None
