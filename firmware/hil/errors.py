"""The suite framework's exceptions: what a test, a target or the runner raise."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from firmware.errors import EgmError


class HilError(EgmError):
    """``egm hil`` cannot do what it was asked (bad target file, unknown test id, bad run folder)."""


class TargetError(HilError):
    """The target (the terminal under test) could not do what a test asked of it."""


class NeedsOperator(TargetError):
    """An automation (``Target.sim``) that only the simulated cabinet offers; on a real cabinet a
    person does it (``operator.do``)."""


class Blocked(Exception):  # noqa: N818 - a verdict, not an error
    """The test could not be carried out (the operator could not do a step, or did not answer in
    time): its verdict is BLOCKED, neither passed nor failed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MeasurementFailure(AssertionError):
    """A measurement outside its limits (the test's verdict is FAIL)."""


def read_text(path: Path, what: str, missing: str = "does not exist") -> str:
    """The text of ``path``; HilError ``"{what} {path} {missing}"`` or "... cannot be read: why"."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HilError(f"{what} {path} {missing}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HilError(f"{what} {path} cannot be read: {exc}") from None


def raised(action: Callable[[], Any], error: type[Exception] = TargetError) -> str:
    """The message of the ``error`` that ``action`` raises, "" when it raises none (a refusal the
    terminal answers, an RNG's EntropyError): what a test measures as "refused"."""
    try:
        action()
    except error as exc:
        return str(exc)
    return ""
