"""The development keyboard on the service screens: :func:`key_action`.

A cabinet has only the touchscreen; on a bench the keyboard types on the pads (digits, hex digits
on the seed pad, BACKSPACE, ENTER), ESCAPE leaves a pad, an editor or a confirmation (else goes
back to the menu) and the arrows page a long list.
"""

from __future__ import annotations

import pygame

from firmware.ui.service.actions import ServiceAction
from firmware.ui.service.builders import MenuState

KEY_DIGITS = {getattr(pygame, f"K_{d}"): d for d in "0123456789"}
KEY_HEX = {getattr(pygame, f"K_{c.lower()}"): c for c in "ABCDEF"}


def key_action(state: MenuState, key: int) -> ServiceAction | None:
    """What ``key`` does on the page ``state`` is on (None: nothing)."""
    page = state.page
    if page in ("pin", "seed"):
        if key in KEY_DIGITS:
            return ServiceAction("digit", KEY_DIGITS[key])
        if page == "seed" and key in KEY_HEX:
            return ServiceAction("digit", KEY_HEX[key])
        if key == pygame.K_BACKSPACE:
            return ServiceAction("erase")
        if key in (pygame.K_RETURN, pygame.K_KP_ENTER):
            return ServiceAction("enter")
    if key == pygame.K_ESCAPE:
        if page in ("pin", "seed") or state.option or state.reason:
            return ServiceAction("cancel")
        return ServiceAction("menu") if state.role else None
    if key in (pygame.K_LEFT, pygame.K_PAGEUP):
        return ServiceAction("page", -1)
    if key in (pygame.K_RIGHT, pygame.K_PAGEDOWN):
        return ServiceAction("page", 1)
    return None
