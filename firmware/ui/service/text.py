"""The service screens' text: the core catalogue (``firmware/ui/messages.toml``) first, then the
service screens' own keys (``firmware/ui/service/messages.toml``, every key under ``service.``).

``msg(key, **fields)`` is :func:`firmware.ui.messages.text` over both files: an unknown key or a
missing field is a :class:`~firmware.ui.messages.MessageError`, never a blank. ``mkey(name)`` marks
a key looked up later (a table of labels). Keys are always written out whole, so
``tests/ui/service/test_service_text.py`` finds every key used by reading the source and proves
that each exists, none is unused and the fields match.

The service keys live in their own file only until the core catalogue takes them (one catalogue
for every screen): once ``messages.toml`` holds a key, it is read from there and the copy here is
unused (the test then says so).
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from typing import Any

from firmware.ui import messages
from firmware.ui.messages import MessageError, fields_of

CATALOGUE = "messages.toml"
PREFIX = "service."


@functools.cache
def service_catalogue() -> dict[str, str]:
    """The service screens' own keys (read once); each starts with ``service.``."""
    data = resources.files("firmware.ui.service").joinpath(CATALOGUE).read_text("utf-8")
    flat: dict[str, str] = {}

    def walk(table: dict[str, Any], prefix: str) -> None:
        for name, value in table.items():
            dotted = f"{prefix}{name}"
            if isinstance(value, dict):
                walk(value, dotted + ".")
            elif isinstance(value, str):
                flat[dotted] = value
            else:
                raise MessageError(f"service/{CATALOGUE}: {dotted} is not a string")

    walk(tomllib.loads(data), "")
    stray = sorted(k for k in flat if not k.startswith(PREFIX))
    if stray:
        raise MessageError(f"service/{CATALOGUE}: keys outside service.: {', '.join(stray)}")
    return flat


def mkey(name: str) -> str:
    """Mark ``name`` as a catalogue key used later; returned unchanged."""
    return name


def has(name: str) -> bool:
    return messages.has(name) or name in service_catalogue()


def msg(key: str, /, **fields: Any) -> str:
    """The message ``key`` (core catalogue first) with its fields filled in."""
    if messages.has(key):
        return messages.text(key, **fields)
    try:
        message = service_catalogue()[key]
    except KeyError:
        raise MessageError(f"no message {key!r} in the catalogue") from None
    missing = fields_of(message) - set(fields)
    if missing:
        raise MessageError(f"message {key!r} needs {', '.join(sorted(missing))}")
    return message.format(**fields) if fields or "{" in message else message
