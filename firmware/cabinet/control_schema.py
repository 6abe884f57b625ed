"""The control socket's requests, as schemas: every request is validated before the terminal acts.

One pydantic model per op (strict: ``true`` is no number, ``5`` is no word; ``extra="forbid"``: an
unknown argument is refused by name). :func:`validate` turns a request's ``args`` into the keyword
arguments of the terminal's command, or raises :class:`RequestError` with one clear line. The ops a
terminal registers at run time (``sim`` with simulated hardware) have their schemas here too; an op
that is not here is refused before it reaches the terminal. ``docs/terminal.md`` lists the ops.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from firmware.cabinet.lab import ID_PATTERN, MAX_TEXT, MAX_TIMEOUT_S
from firmware.errors import EgmError

#: A word of a ``sim``, ``service`` or ``demo`` request, and how many a request may carry.
Word = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Words = Annotated[list[Word], Field(max_length=32)]
#: A seat as a JSON object key ("1".."7") and a wager's name and amount.
SeatKey = Annotated[str, StringConstraints(pattern=r"^[1-7]$")]
WagerName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
Credits = Annotated[int, Field(gt=0, le=10**12)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class RequestError(EgmError):
    """A control request that does not fit its op's schema (nothing was done)."""


class _Args(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class NoArgs(_Args):
    pass


class WaitArgs(_Args):
    state: Name | None = None
    timeout: Annotated[float, Field(gt=0, le=600)] = 10.0
    rounds: Annotated[int, Field(ge=0)] | None = None
    printing: bool | None = None


class PlayArgs(_Args):
    #: Omitted: the automatic wagers at the current bet. Given: at least one seat, each with at
    #: least one wager (an empty object, a list or null is refused, never read as "automatic").
    wagers: Annotated[dict[SeatKey, Annotated[dict[WagerName, Credits], Field(min_length=1)]],
                      Field(min_length=1)] = None  # type: ignore[assignment]
    game: Name = None  # type: ignore[assignment]


class DecideArgs(_Args):
    seat: Annotated[int, Field(ge=1, le=7)]
    action: Name


class GameArgs(_Args):
    game: Name


class BetArgs(_Args):
    unit: Credits


class HandpayArgs(_Args):
    attendant: Name = "attendant"


class WordsArgs(_Args):
    words: Words = []


class CalibrationArgs(_Args):
    step: Literal["begin", "commit", "cancel"]
    calibration: dict[str, Any] | None = None
    check_px: float | None = None


#: The sizes a live screenshot may be asked for (the screens' own bounds would allow 8K: an
#: answer of that size is not what a control socket is for).
SCREENSHOT_MIN = (320, 180)
SCREENSHOT_MAX = (3840, 2160)


class ScreenshotArgs(_Args):
    #: ``"WxH"``; the op gets it as ``(width, height)``.
    size: Annotated[str, StringConstraints(pattern=r"^[0-9]{1,5}x[0-9]{1,5}$")] = "1920x1080"

    @field_validator("size")
    @classmethod
    def _bounded(cls, value: str) -> str:
        w, h = (int(part) for part in value.split("x"))
        (lo_w, lo_h), (hi_w, hi_h) = SCREENSHOT_MIN, SCREENSHOT_MAX
        if not (lo_w <= w <= hi_w and lo_h <= h <= hi_h):
            raise ValueError(f"a screenshot is {lo_w}x{lo_h} to {hi_w}x{hi_h} pixels, not {value}")
        if not 1.0 <= w / h <= 2.4:
            raise ValueError(f"a screenshot of {value} is too narrow or too wide (width/height 1.0 to 2.4)")
        return value


LabId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]


class LabPromptArgs(_Args):
    id: LabId
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT)]
    timeout_s: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S)] | None = None


class LabAnswerArgs(_Args):
    id: LabId
    answer: Literal["done", "cannot"]


#: Every op the control socket accepts, and the schema of its ``args``.
SCHEMAS: dict[str, type[_Args]] = {
    "status": NoArgs, "stop": NoArgs, "cashout": NoArgs, "retry_ticket": NoArgs,
    "wait": WaitArgs, "play": PlayArgs, "decide": DecideArgs, "game": GameArgs, "bet": BetArgs,
    "attendant_handpay": HandpayArgs, "sim": WordsArgs, "service": WordsArgs, "demo": WordsArgs,
    "touch_calibration": CalibrationArgs, "screenshot": ScreenshotArgs,
    "lab_prompt": LabPromptArgs, "lab_answer": LabAnswerArgs, "lab_clear": NoArgs,
}


def validate(op: Any, args: Any) -> tuple[str, dict[str, Any]]:
    """``(op, keyword arguments)`` of a valid request; RequestError naming what is wrong."""
    if not isinstance(op, str) or op not in SCHEMAS:
        raise RequestError(f"unknown op {op!r}; ops are {', '.join(sorted(SCHEMAS))}")
    if not isinstance(args, dict):
        raise RequestError(f"{op}: args is an object of named arguments, not {type(args).__name__}")
    try:
        model = SCHEMAS[op].model_validate(args)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "args"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise RequestError(f"{op}: {where}: {first['msg']}{more}") from None
    args = model.model_dump(exclude_unset=True)
    if "size" in args and op == "screenshot":
        w, h = args["size"].split("x")
        args["size"] = (int(w), int(h))
    return op, args
