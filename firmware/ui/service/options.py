"""What the configuration screen can offer for each game option: read from the game's options model.

A game's options are a pydantic model (``firmware.games.options``); walking its fields gives each
option (dotted keys for nested tables, as ``config set`` takes them) and what a touch may choose:

* ``choice``: a ``Literal``, an ``Enum`` or a ``bool``: one button per value;
* ``number``: an ``int`` or a percentage with bounds: a stepper (-10, -1, +1, +10; 0.5 for a
  percentage), kept inside the bounds;
* ``fixed``: anything else (a fraction, a list, an optional seat): shown, changed with
  ``egm simctl service config set``.

The screen never decides what is allowed: it sends ``config set GAME KEY=VALUE`` and the service
API validates the option and checks the PAR sheet against the jurisdiction profile.
"""

from __future__ import annotations

import enum
import functools
import typing
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel

from firmware.games.registry import make_options

Number = int | Decimal


@dataclass(frozen=True, slots=True)
class OptionSpec:
    key: str                               #: dotted, as ``config set`` takes it
    kind: str                              #: choice | number | fixed
    choices: tuple[str, ...] = ()          #: the values a choice offers, as typed
    low: Number | None = None              #: inclusive bounds of a number
    high: Number | None = None
    step: Number = 1
    integer: bool = True

    def clamp(self, value: Number) -> Number:
        if self.low is not None and value < self.low:
            value = self.low
        if self.high is not None and value > self.high:
            value = self.high
        return value

    def stepped(self, current: str, steps: int) -> str:
        """``current`` moved by ``steps`` steps, inside the bounds (as typed)."""
        if self.kind != "number":
            raise ValueError(f"option {self.key} is not a number")
        value: Number = int(current) if self.integer else Decimal(current)
        return as_text(self.clamp(value + self.step * steps))


def as_text(value: Any) -> str:
    """An option value as ``config set`` takes it (``true``, ``8``, ``2.5``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, Decimal):
        return str(int(value)) if value == value.to_integral_value() else str(value.normalize())
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def _bounds(metadata: list[Any]) -> tuple[Number | None, Number | None, bool]:
    low = high = None
    open_high = False
    for m in metadata:
        if isinstance(m, annotated_types.Ge):
            low = m.ge
        elif isinstance(m, annotated_types.Gt):
            low = m.gt
        elif isinstance(m, annotated_types.Le):
            high = m.le
        elif isinstance(m, annotated_types.Lt):
            high, open_high = m.lt, True
    return low, high, open_high


def _spec(key: str, annotation: Any, metadata: list[Any]) -> OptionSpec:
    if typing.get_origin(annotation) is Literal:
        return OptionSpec(key, "choice", tuple(as_text(v) for v in typing.get_args(annotation)))
    if annotation is bool:
        return OptionSpec(key, "choice", ("true", "false"))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return OptionSpec(key, "choice", tuple(as_text(m) for m in annotation))
    if annotation is int or annotation is Decimal:
        low, high, open_high = _bounds(metadata)
        if annotation is int:
            if open_high and high is not None:
                high = high - 1
            return OptionSpec(key, "number", low=low, high=high, step=1, integer=True)
        step = Decimal("0.5")
        if open_high and high is not None:
            high = Decimal(high) - step
        return OptionSpec(key, "number", low=None if low is None else Decimal(low),
                          high=None if high is None else Decimal(high), step=step, integer=False)
    return OptionSpec(key, "fixed")


@functools.cache
def option_specs(game_id: str) -> dict[str, OptionSpec]:
    """Every option of ``game_id`` by dotted key, in the model's order (read once per game; do not
    change the answer)."""
    model = type(make_options(game_id, {}))
    out: dict[str, OptionSpec] = {}

    def walk(cls: type[BaseModel], prefix: str) -> None:
        for name, field in cls.model_fields.items():
            key = prefix + name
            annotation = field.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                walk(annotation, key + ".")
            else:
                out[key] = _spec(key, annotation, list(field.metadata))

    walk(model, "")
    return out


def flatten(options: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"pool": {"commission": 5}}`` -> ``{"pool.commission": "5"}`` (values as typed)."""
    out: dict[str, str] = {}
    for name, value in options.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{name}."))
        elif isinstance(value, list | tuple):
            out[prefix + name] = ",".join(as_text(v) for v in value)
        elif value is None:
            out[prefix + name] = "-"
        else:
            out[prefix + name] = as_text(value)
    return out
