"""The one message catalogue: every string a player sees comes from ``messages.toml`` through here.

The catalogue is ``messages.toml`` and its fragments ``messages.<part>.toml`` beside it (one per
game's screens, so a game's words live with nothing else's); a key defined twice is an error.

``text(key, **fields)`` looks a string up by its dotted key (``button.deal``, ``meter.credit``) and
fills its ``{fields}``; an unknown key or a missing field is a :class:`MessageError`, never a blank
on the screen. ``key(name)`` marks a key that is looked up later (a table of labels): it returns the
key unchanged, so the catalogue test (``tests/ui/test_messages.py``) finds every key the code uses
by reading the source, and proves that every key used exists and that none is left unused. A key is
therefore always written out whole in the code (never assembled from pieces).
"""

from __future__ import annotations

import functools
import string
import tomllib
from collections.abc import Mapping
from importlib import resources
from typing import Any

from firmware.errors import EgmError

CATALOGUE = "messages.toml"


class MessageError(EgmError):
    """A key the catalogue does not hold, or a message whose fields were not all given."""


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in table.items():
        dotted = f"{prefix}{name}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, dotted + "."))
        elif isinstance(value, str):
            out[dotted] = value
        else:
            raise MessageError(f"{CATALOGUE}: {dotted} is not a string")
    return out


def catalogue_files() -> list[str]:
    """The catalogue's file names: ``messages.toml`` first, then its fragments in name order."""
    names = sorted(f.name for f in resources.files("firmware.ui").iterdir()
                   if f.name.startswith("messages.") and f.name.endswith(".toml") and f.name != CATALOGUE)
    return [CATALOGUE, *names]


@functools.cache
def catalogue() -> dict[str, str]:
    """Every message by its dotted key (read once, from the catalogue and its fragments)."""
    out: dict[str, str] = {}
    for name in catalogue_files():
        data = resources.files("firmware.ui").joinpath(name).read_text("utf-8")
        try:
            part = _flatten(tomllib.loads(data))
        except tomllib.TOMLDecodeError as exc:
            raise MessageError(f"{name}: {exc}") from None
        twice = sorted(set(part) & set(out))
        if twice:
            raise MessageError(f"{name}: keys already in the catalogue: {', '.join(twice)}")
        out.update(part)
    return out


def fields_of(message: str) -> set[str]:
    """The ``{field}`` names a message needs."""
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(message)
            if name}


def key(name: str) -> str:
    """Mark ``name`` as a catalogue key used later; it is returned unchanged (checked when used)."""
    return name


def has(name: str) -> bool:
    return name in catalogue()


def text(name: str, /, **fields: Any) -> str:
    """The message ``name`` with its fields filled in."""
    try:
        message = catalogue()[name]
    except KeyError:
        raise MessageError(f"no message {name!r} in the catalogue") from None
    missing = fields_of(message) - set(fields)
    if missing:
        raise MessageError(f"message {name!r} needs {', '.join(sorted(missing))}")
    return message.format(**fields) if fields or "{" in message else message
