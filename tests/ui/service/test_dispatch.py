"""Every service action a button can carry does something: the menu has exactly one handler for
each (the navigation's or one part's), so a touch is never silently dropped."""

from __future__ import annotations

import pytest

from firmware.ui.service.actions import ACTIONS
from firmware.ui.service.flows.login import Login
from firmware.ui.service.menu import ServiceMenu
from tests.ui.service.test_menu import SIZE, ScriptedLink


def test_every_service_action_has_a_handler():
    menu = ServiceMenu(ScriptedLink({}), size=SIZE)
    assert set(menu.handlers) == ACTIONS


def test_two_parts_claiming_one_action_is_refused(monkeypatch):
    monkeypatch.setattr(Login, "handlers", lambda self: {"role": self.choose, "digit": self.choose})
    with pytest.raises(ValueError, match="two handlers for the service action 'digit'"):
        ServiceMenu(ScriptedLink({}), size=SIZE)
