"""Turning pydantic validation errors into one readable line that names each key and what is allowed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError


def _field_names(model: Any, loc: tuple[Any, ...]) -> list[str] | None:
    for part in loc:
        fields = getattr(model, "model_fields", None)
        if not fields or part not in fields:
            return None
        model = fields[part].annotation
    fields = getattr(model, "model_fields", None)
    return list(fields) if fields else None


def describe_error(err: Mapping[str, Any], model: type[BaseModel] | None = None, prefix: str = "") -> str:
    loc = tuple(err.get("loc", ()))
    where = ".".join([prefix] * bool(prefix) + [str(p) for p in loc]) or "(top level)"
    kind = err.get("type", "")
    msg = str(err.get("msg", "invalid"))
    if kind == "extra_forbidden":
        allowed = _field_names(model, loc[:-1]) if model is not None else None
        hint = f"; allowed: {', '.join(allowed)}" if allowed else ""
        return f"{where}: unknown key{hint}"
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    value = err.get("input")
    if kind != "missing" and not isinstance(value, (dict, list)) and "input" in err:
        return f"{where}: {msg} (got {value!r})"
    return f"{where}: {msg}"


def describe_validation_error(
    exc: ValidationError, model: type[BaseModel] | None = None, prefix: str = ""
) -> str:
    """Every error of ``exc`` as ``key.path: what is wrong (got value)``, joined by ``; ``."""
    return "; ".join(describe_error(e, model, prefix) for e in exc.errors())
