"""The contract every bill-validator backend keeps (ID-003, SSP): what the cabinet relies on.

A test module supplies a ``contract`` fixture yielding ``(device, world)`` -- :class:`SimulatedWorld`
around a simulator, or :class:`HardwareWorld` prompting a technician at a real validator -- and a
test class subclassing :class:`BillValidatorContract`, which may override :meth:`ready` (wait until
an enabled validator accepts notes) and add its protocol's own checks.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from hal.errors import DeviceOperationError
from hal.events import NoteEscrowed, NoteStacked, Returned
from tests.drivers.events import collect
from tests.drivers.hardware import Technician
from tests.drivers.interface import assert_a_missing_member_fails, assert_implements


class SimulatedWorld:
    """The player and the validator, simulated."""

    wait_s = 3.0

    def __init__(self, insert_note: Callable[[int], bool]) -> None:
        self._insert = insert_note

    def insert_note(self, dollars: int) -> None:
        assert self._insert(dollars)


class HardwareWorld(Technician):
    """A technician at a real validator, prompted on the terminal."""

    wait_s = 60.0

    def __init__(self, request: pytest.FixtureRequest, what: str = "validator") -> None:
        super().__init__(request)
        self.what = what

    def insert_note(self, dollars: int) -> None:
        self._say(f"insert a ${dollars} note into the {self.what}")


class BillValidatorContract:
    """Subclass as ``Test...Contract`` beside a ``contract`` fixture."""

    def ready(self, dev, world) -> None:
        """Return once an enabled validator accepts notes (nothing to wait for by default)."""

    def test_it_and_every_registered_validator_implement_the_interface(self, contract):
        dev, _ = contract
        assert_implements(dev, "bill_validator")

    def test_a_validator_missing_a_member_of_the_interface_is_refused(self, monkeypatch):
        assert_a_missing_member_fails("bill_validator", monkeypatch)

    def test_a_20_note_is_stacked_on_command_and_credited_once(self, contract):
        dev, world = contract
        dev.enable([2000])
        self.ready(dev, world)
        dev.drain_events()
        world.insert_note(20)
        assert collect(dev, lambda e: isinstance(e, NoteEscrowed), world.wait_s)[-1] == \
            NoteEscrowed(dev.name, 2000)
        dev.stack()
        assert collect(dev, lambda e: isinstance(e, NoteStacked), world.wait_s) == [
            NoteStacked(dev.name, 2000)]
        self.ready(dev, world)
        time.sleep(10 * dev.poll_interval)
        assert not any(isinstance(e, NoteStacked) for e in dev.drain_events())

    def test_a_note_is_returned_on_command(self, contract):
        dev, world = contract
        dev.enable([2000])
        self.ready(dev, world)
        world.insert_note(20)
        collect(dev, lambda e: isinstance(e, NoteEscrowed), world.wait_s)
        dev.return_escrow()
        assert collect(dev, lambda e: isinstance(e, Returned), world.wait_s)[-1] == Returned(dev.name)

    def test_nothing_to_stack_is_an_operation_error(self, contract):
        dev, _ = contract
        with pytest.raises(DeviceOperationError, match="nothing in escrow"):
            dev.stack()
