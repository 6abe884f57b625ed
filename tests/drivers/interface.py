"""The interface half of the device contracts: every backend of a device class in the hal registry
implements that class's interface (``hal.devices``), and a backend missing a member is refused."""

from __future__ import annotations

import inspect
import sys
import types

import pytest

from hal import registry
from hal.base import Device
from hal.errors import BackendError


def assert_implements(device: Device, device_class: str) -> None:
    """``device`` (a backend under test, on a simulator or real hardware) and every registered
    backend of ``device_class`` implement its interface, with nothing left abstract."""
    interface = registry.INTERFACES[device_class]
    assert isinstance(device, interface)
    for backend in registry.BACKENDS[device_class]:
        cls = registry.backend_class(device_class, backend)
        assert issubclass(cls, interface) and not inspect.isabstract(cls), backend
        for name in interface.__abstractmethods__:
            assert getattr(cls, name) is not getattr(interface, name), f"{backend}: {name}"


def assert_a_missing_member_fails(device_class: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend that leaves out any one member of the interface cannot be made, directly or
    through the registry (the error names the member)."""
    interface = registry.INTERFACES[device_class]
    assert interface.__abstractmethods__, f"{interface.__name__} declares no operation"
    complete = {name: _stand_in(getattr(interface, name))
                for name in interface.__abstractmethods__ | {"_open", "_close"}}
    module = types.ModuleType("interface_probe")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    whole = type("Whole", (interface,), complete)
    assert isinstance(whole("probe"), interface)
    for name in sorted(interface.__abstractmethods__):
        partial = type(f"Without_{name}", (interface,), {k: v for k, v in complete.items() if k != name})
        with pytest.raises(TypeError, match=name):
            partial("probe")
        setattr(module, partial.__name__, partial)
        monkeypatch.setitem(registry.BACKENDS[device_class], "partial", f"{module.__name__}:{partial.__name__}")
        with pytest.raises(BackendError, match=f"does not implement {interface.__name__}: {name} missing"):
            registry.create(device_class, "partial", "probe")


def _stand_in(member: object) -> object:
    if isinstance(member, property):
        return property(lambda self: None)
    return lambda self, *args, **kwargs: None
