"""Fixtures shared by the simulator tests."""

from __future__ import annotations

import pytest

from tests.sim_hardware.link_host import Clock


@pytest.fixture
def clock() -> Clock:
    """The fake clock a simulator under test is built on."""
    return Clock()
