"""Touch calibration: three targets, the raw touches, the fit, a check touch, critical memory.

The procedure (:class:`CalibrationRun`, pure: no device, no clock):

1. The touch driver is switched to raw reports (its ``calibration`` set to None: the drivers then
   report sensor coordinates, ``drivers/touch/contact.py``).
2. The technician touches the three targets of :func:`hal.calibration.targets` (in the screen's own
   pixels); each touch-down's raw point is kept.
3. :func:`hal.calibration.fit` makes the affine calibration from the three pairs.
4. A fourth, **check** target: its raw touch, through the new calibration, must land within
   :func:`check_tolerance` pixels of it (three points always fit exactly; the fourth proves the
   fit). Too far, or three touches on one line: the targets start again (at most ``attempts``
   rounds, then the run fails and the old calibration stays).
5. The calibration is stored in critical memory the way the terminal keeps it
   (``Ledger.store_setting("touch_calibration", cal.to_json())``, :data:`SETTING`) and applied to
   the driver, which from then on reports screen pixels through it.

Steps 1 and 5 run on the terminal's thread through the ``touch_calibration`` command
(:func:`install_calibration`): ``begin`` (raw reports), ``commit`` (store and apply), ``cancel``
(the old calibration back). Both ``begin`` and ``commit`` first ask the service API for
``test touch``, so only a role the permission table lets drive the touchscreen (the technician),
in a cabinet state that allows a device test, can calibrate, and the API logs the request; the
stored calibration is logged as a ``touch_calibrated`` event.

:func:`draw_calibration` draws the screen of a run (:class:`CalibrationView`): one cross-hair
target at a time, at its real pixel, with the step and what to do.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from firmware.ui import theme
from firmware.ui.layout import Rect
from firmware.ui.painter import Painter
from firmware.ui.service.text import mkey, msg
from hal.calibration import Calibration, CalibrationError, fit, targets

log = logging.getLogger(__name__)

#: The critical-memory setting that holds the calibration (hal/calibration.py).
SETTING = "touch_calibration"
#: Rounds of the three targets before the run gives up.
ATTEMPTS = 3
#: Where the check target is, as fractions of the screen (inside the three targets' triangle).
CHECK_AT = (0.5, 0.5)


def check_tolerance(width: int, height: int) -> float:
    """How far (screen pixels) the check touch may land from its target: 1% of the diagonal, at
    least 10 px (a fingertip is far wider)."""
    return max(10.0, 0.01 * math.hypot(width, height))


def check_target(width: int, height: int) -> tuple[int, int]:
    return (round(width * CHECK_AT[0]), round(height * CHECK_AT[1]))


class CalibrationRun:
    """One calibration at a ``width`` x ``height`` screen: feed it the raw touch-downs."""

    def __init__(self, width: int, height: int, *, attempts: int = ATTEMPTS,
                 tolerance_px: float | None = None) -> None:
        if width <= 0 or height <= 0:
            raise CalibrationError(f"a screen of {width} x {height} pixels")
        if attempts < 1:
            raise ValueError("a calibration run needs at least one attempt")
        self.width, self.height = width, height
        self.targets = [tuple(t) for t in targets(width, height)]
        self.check = check_target(width, height)
        self.tolerance = tolerance_px if tolerance_px is not None else check_tolerance(width, height)
        self.attempts = attempts
        self.attempt = 1
        self.raw: list[tuple[float, float]] = []
        self.phase = "targets"           #: targets | check | done | failed
        self.calibration: Calibration | None = None
        self.check_error: float | None = None
        self.note = ""                   #: catalogue key: why the targets start again

    @property
    def target(self) -> tuple[int, int] | None:
        """The point to touch now (screen pixels), or None when the run is over."""
        if self.phase == "targets":
            return self.targets[len(self.raw)]  # type: ignore[return-value]
        if self.phase == "check":
            return self.check
        return None

    @property
    def done(self) -> bool:
        return self.phase in ("done", "failed")

    def touch(self, rx: float, ry: float) -> str:
        """A raw touch-down; the phase after it."""
        if not (math.isfinite(rx) and math.isfinite(ry)):
            raise CalibrationError("touch coordinates must be finite numbers")
        if self.phase == "targets":
            self.raw.append((float(rx), float(ry)))
            if len(self.raw) == len(self.targets):
                try:
                    self.calibration = fit(self.targets, self.raw, self.width, self.height)
                except CalibrationError as exc:
                    log.info("calibration fit refused: %s", exc)
                    return self._again(mkey("service.calibration.again_line"))
                self.phase = "check"
        elif self.phase == "check":
            assert self.calibration is not None
            x, y = self.calibration.apply(rx, ry)
            self.check_error = math.hypot(x - self.check[0], y - self.check[1])
            if self.check_error <= self.tolerance:
                self.phase = "done"
            else:
                log.info("calibration check %.1f px off (at most %.1f)", self.check_error, self.tolerance)
                return self._again(mkey("service.calibration.again_check"))
        return self.phase

    def _again(self, why: str) -> str:
        self.note = why
        self.raw = []
        self.calibration = None
        if self.attempt >= self.attempts:
            self.phase = "failed"
        else:
            self.attempt += 1
            self.phase = "targets"
        return self.phase

    def view(self, *, saving: bool = False) -> CalibrationView:
        """The screen of the run: one step (and one progress dot) per target, the check target the
        last, so that "target k of n" counts what the dots show."""
        steps = len(self.targets) + 1
        if self.phase == "targets":
            step = len(self.raw) + 1
            instruction = msg("service.calibration.touch_target", n=step, of=steps)
        elif self.phase == "check":
            step = steps
            instruction = msg("service.calibration.touch_check", n=step, of=steps)
        else:
            step = steps
            instruction = msg("service.calibration.saving") if saving else msg("service.calibration.over")
        detail = msg(self.note, tolerance=f"{self.tolerance:.0f}",
                     error=f"{self.check_error or 0:.0f}") if self.note else ""
        return CalibrationView(self.width, self.height, self.target, step, steps, instruction,
                               detail, msg("service.calibration.attempt", n=self.attempt, of=self.attempts),
                               self.phase == "check")


@dataclass(frozen=True, slots=True)
class CalibrationView:
    width: int                             #: the real screen, in pixels
    height: int
    target: tuple[int, int] | None         #: real pixels
    step: int                              #: 1..steps
    steps: int
    instruction: str
    detail: str = ""
    attempt: str = ""
    checking: bool = False


def draw_calibration(p: Painter, view: CalibrationView) -> None:
    """The calibration screen: no buttons (touches are raw until it ends); the target to touch."""
    p.fill((8, 10, 16))
    p.region("calibration", p.canvas)
    box = Rect(360, 250, 1200, 200)
    p.region("calibration.instruction", box)
    p.text(view.instruction, Rect(box.x, box.y, box.w, 60), theme.TITLE, theme.ACCENT)
    p.text(view.attempt, Rect(box.x, box.y + 70, box.w, 34), theme.BODY, theme.TEXT_DIM)
    if view.detail:
        p.text(view.detail, Rect(box.x, box.y + 112, box.w, 34), theme.BODY, (255, 150, 60))
        p.mark("cross", (box.x + 20, box.y + 129), 11, (255, 150, 60))
    progress = Rect(760, 470, 400, 40)
    p.region("calibration.progress", progress)
    for i in range(view.steps):
        cx = progress.x + 20 + i * (progress.w - 40) / max(1, view.steps - 1)
        centre = (cx, progress.y + progress.h / 2)
        p.region(f"calibration.progress.{i + 1}", Rect(round(cx - 14), progress.y + progress.h // 2 - 14, 28, 28))
        if i + 1 < view.step:
            p.circle(centre, 12, theme.HIGHLIGHT)
        elif i + 1 == view.step:
            p.circle(centre, 14, theme.ACCENT, width=4)
        else:
            p.circle(centre, 10, theme.DISABLED, width=3)
    if view.target is None:
        return
    dx, dy = p.scaler.to_design(*view.target)
    colour = theme.HIGHLIGHT if view.checking else theme.ACCENT
    arm, ring = 46, 26
    p.region("calibration.target", Rect(round(dx - arm), round(dy - arm), 2 * arm, 2 * arm))
    p.circle((dx, dy), ring, colour, width=4)
    p.line((dx - arm, dy), (dx + arm, dy), colour, 3)
    p.line((dx, dy - arm), (dx, dy + arm), colour, 3)
    p.circle((dx, dy), 5, theme.TEXT)


# --- the terminal's side: the ``touch_calibration`` command --------------------------------------
_UNSET: Any = object()


class CalibrationCommand:
    """The ``touch_calibration`` terminal command (runs on the terminal's thread)."""

    def __init__(self, terminal: Any) -> None:
        self.terminal = terminal
        self.previous: Any = _UNSET      #: the calibration in force before ``begin``

    def _touch(self) -> Any:
        from firmware.cabinet.service import ServiceError

        device = self.terminal.devices.touch
        if device is None:
            raise ServiceError("no touchscreen is fitted")
        return device

    def _allowed(self, step: str) -> str:
        """The service API's gate for the calibration (``touch calibrate STEP``: role, cabinet
        state, device; logged)."""
        from firmware.cabinet.service import ServiceError

        api = self.terminal.service
        if api is None:
            raise ServiceError("no service API is installed on this terminal")
        api.perform("touch calibrate", [step])
        assert api.session is not None
        return api.session.role

    def __call__(self, step: str, calibration: Mapping[str, Any] | None = None,
                 check_px: float | None = None) -> dict[str, Any]:
        from firmware.cabinet.service import ServiceError

        if step == "begin":
            self._allowed("begin")
            device = self._touch()
            if self.previous is _UNSET:
                self.previous = device.calibration
            device.calibration = None
            return {"raw": True, "device": device.name}
        if step == "commit":
            if not isinstance(calibration, Mapping):
                raise ServiceError("commit needs the calibration")
            cal = Calibration.from_json(calibration)
            if check_px is None or not math.isfinite(check_px) or check_px > check_tolerance(cal.width, cal.height):
                raise ServiceError("a calibration is stored only after its check touch landed on the check target")
            role = self._allowed("commit")
            device = self._touch()
            self.terminal.ledger.store_setting(SETTING, cal.to_json())
            device.calibration = cal
            self.previous = _UNSET
            self.terminal.ledger.event("touch_calibrated", role=role, width=cal.width, height=cal.height,
                                       residual_px=cal.residual_px, check_px=round(float(check_px), 2))
            return {"stored": True, "calibration": cal.to_json(), "check_px": round(float(check_px), 2)}
        if step == "cancel":
            device = self._touch()
            restored = self.previous is not _UNSET
            if restored:
                device.calibration = self.previous
                self.previous = _UNSET
            return {"restored": restored}
        raise ServiceError(f"touch_calibration: unknown step {step!r} (begin, commit, cancel)")


def install_calibration(terminal: Any) -> CalibrationCommand:
    """Register the ``touch_calibration`` command on ``terminal`` (after the service API's
    ``install``); returns it. Installing twice keeps the first."""
    existing = terminal.handlers.get("touch_calibration")
    if isinstance(existing, CalibrationCommand):
        return existing
    command = CalibrationCommand(terminal)
    terminal.register(touch_calibration=command)
    return command


def stored_calibration(ledger: Any) -> Calibration | None:
    """The calibration critical memory holds (None: never calibrated)."""
    doc = ledger.setting(SETTING)
    return None if doc is None else Calibration.from_json(doc)


def apply_stored_calibration(terminal: Any) -> Calibration | None:
    """At start-up: the stored calibration into the touch driver (None: nothing stored or no
    touchscreen fitted)."""
    device = terminal.devices.touch
    cal = stored_calibration(terminal.ledger)
    if cal is not None and device is not None:
        device.calibration = cal
        return cal
    return None
