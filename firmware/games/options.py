"""Game options: the rules files' **(option)** settings as validated, immutable models.

Options come from TOML (``[games.options.<game>]``) or the command line (``--option KEY=VALUE``,
dotted keys for nested tables such as ``pool.commission=5``). Both end in the game's pydantic model
with ``extra="forbid"``, so an unknown option or value is a clear error naming it and what is allowed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainSerializer, ValidationError

from firmware.config.validation import describe_validation_error
from firmware.games.errors import OptionError


class GameOptions(BaseModel):
    """Base of every game's options model."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def split_list(value: Any) -> Any:
    """``"40,30,6,3,1"`` -> ``["40", "30", "6", "3", "1"]`` (pydantic converts the items)."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def parse_percent(value: Any) -> Any:
    """``5``, ``"5"``, ``"5%"`` or ``"2.5"`` -> ``Decimal`` percent; anything else is left to pydantic."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().removesuffix("%").strip()
        try:
            return Decimal(text)
        except InvalidOperation:
            raise ValueError(f"expected a percentage such as 5 or 2.5%, not {value!r}") from None
    if isinstance(value, float):
        return Decimal(repr(value))
    return value


def _plain_number(value: Decimal) -> int | float:
    """A percentage as JSON shows it: ``5`` rather than ``"5"``, ``2.5`` where it has a fraction."""
    return int(value) if value == value.to_integral_value() else float(value)


#: An option given as a percentage (``5``, ``"5%"``, ``2.5``): a ``Decimal`` in the model, a plain
#: number in JSON. Bounds go in the field's ``Field(ge=..., lt=...)``.
Percent = Annotated[Decimal, BeforeValidator(parse_percent), PlainSerializer(_plain_number)]


def percent_fraction(percent: Decimal) -> Fraction:
    """An exact fraction of a percentage: ``Decimal('2.5')`` -> ``Fraction(1, 40)``."""
    return Fraction(percent) / 100


def parse_assignments(pairs: Iterable[str]) -> dict[str, Any]:
    """``["decks=6", "pool.commission=5"]`` -> ``{"decks": "6", "pool": {"commission": "5"}}``."""
    tree: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise OptionError(f"option {pair!r} must look like KEY=VALUE")
        node = tree
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise OptionError(f"option {key!r}: {part!r} is given both as a value and as a table")
            node = child
        if parts[-1] in node:
            raise OptionError(f"option {key!r} is given twice")
        node[parts[-1]] = value.strip()
    return tree


def build_options(model: type[GameOptions], *sources: Mapping[str, Any], prefix: str = "") -> GameOptions:
    """Merge option tables (later ones win, nested tables merged) and validate them with ``model``.

    Errors name each option by its dotted key, after ``prefix`` (e.g. ``games.options.baccarat-war``).
    """
    merged: dict[str, Any] = {}
    for source in sources:
        _merge(merged, source)
    try:
        return model.model_validate(merged)
    except ValidationError as exc:
        raise OptionError(describe_validation_error(exc, model, prefix)) from None


def _merge(into: dict[str, Any], source: Mapping[str, Any]) -> None:
    for key, value in source.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        elif isinstance(value, Mapping):
            into[key] = {}
            _merge(into[key], value)
        else:
            into[key] = value
