"""The touch calibration from the service menu: :class:`CalibrationFlow`.

``touch_calibration begin`` switches the touchscreen to raw reports; the raw touch-downs then go
to a :class:`~firmware.ui.service.calibration.CalibrationRun` (its targets on screen), not to the
buttons; a run that is done is sent as ``commit`` (stored in critical memory, applied to the
driver), one that failed, or that waited :data:`CALIBRATION_IDLE_S` for a touch, or ESCAPE, as
``cancel`` (the old calibration back). The touches of the frame in which the mode changes are
dropped (:attr:`CalibrationFlow.flush`): they were made in the other mode.
"""

from __future__ import annotations

from collections.abc import Callable

from firmware.ui.service.actions import Handler
from firmware.ui.service.calibration import CalibrationRun, CalibrationView
from firmware.ui.service.context import MenuContext, MenuPart
from firmware.ui.service.link import Answer
from firmware.ui.service.text import msg

#: Seconds without a touch after which a calibration run gives up (the old calibration stays).
CALIBRATION_IDLE_S = 60.0


class CalibrationFlow(MenuPart):
    def __init__(self, ctx: MenuContext, *, size: Callable[[], tuple[int, int]],
                 clock: Callable[[], float]) -> None:
        super().__init__(ctx)
        self.size = size                #: the screen's size in pixels (where the targets are)
        self.clock = clock
        self.run: CalibrationRun | None = None
        self.phase = ""                 #: "", starting, collecting, saving, cancelling
        self.flush = False              #: drop the touches of this frame (made before a mode change)
        self._last_touch = 0.0

    def handlers(self) -> dict[str, Handler]:
        return {"calibrate": self.begin}

    @property
    def active(self) -> bool:
        """True while touches are raw (they go to the run, not to the buttons)."""
        return bool(self.phase)

    def view(self) -> CalibrationView | None:
        """The targets' screen while the run is on it."""
        if self.run is not None and self.phase in ("collecting", "saving"):
            return self.run.view(saving=self.phase == "saving")
        return None

    def poll(self) -> None:
        """Give up on a run that has waited too long for a touch."""
        if self.phase == "collecting" and self.clock() - self._last_touch > CALIBRATION_IDLE_S:
            self.cancel(msg("service.calibration.idle"))

    def begin(self, _: object) -> None:
        if self.phase or self.ctx.state.busy:
            return
        width, height = self.size()
        self.phase = "starting"
        self.ctx.say("")

        def started(_: Answer) -> None:
            self.run = CalibrationRun(width, height)
            self.phase = "collecting"
            self._last_touch = self.clock()
            self.flush = True                   # touches of this frame were made before raw mode

        def refused(reason: str) -> None:
            self.phase = ""
            self.ctx.refused(reason)

        self.ctx.send("touch_calibration begin", self.ctx.link.calibration("begin"), started, refused)

    def touch(self, x: float, y: float) -> None:
        """A raw touch-down (taken only while the run collects them)."""
        run = self.run
        if self.phase != "collecting" or run is None:
            return
        self._last_touch = self.clock()
        phase = run.touch(x, y)
        if phase == "done":
            self._save()
        elif phase == "failed":
            self.cancel(msg("service.calibration.failed", attempts=run.attempts), "alert")

    def _save(self) -> None:
        run = self.run
        assert run is not None and run.calibration is not None
        self.phase = "saving"

        def saved(answer: Answer) -> None:
            self.phase = ""
            self.flush = True                   # touches of this frame were raw
            cal = answer.get("calibration", {})
            self.ctx.state.test = ("calibration", {"residual_px": cal.get("residual_px"),
                                                   "check_px": answer.get("check_px"),
                                                   "screen": f"{cal.get('width')} x {cal.get('height')}"})
            self.ctx.say(msg("service.calibration.saved", error=f"{run.check_error or 0:.1f}"), "good")
            self.run = None

        def refused(reason: str) -> None:
            self.cancel(msg("service.refused", reason=reason), "alert")

        self.ctx.send("touch_calibration commit",
                      self.ctx.link.calibration("commit", calibration=run.calibration.to_json(),
                                                check_px=run.check_error),
                      saved, refused)

    def cancel(self, message: str, tone: str = "alert") -> None:
        """Give the run up (the old calibration back); ``message`` once the terminal has."""
        self.phase = "cancelling"
        self.run = None

        def restored(_: Answer) -> None:
            self.phase = ""
            self.flush = True
            self.ctx.say(message, tone)

        def failed(reason: str) -> None:
            self.phase = ""
            self.flush = True
            self.ctx.say(msg("service.refused", reason=reason), "alert")

        self.ctx.send("touch_calibration cancel", self.ctx.link.calibration("cancel"), restored, failed)

    def leave(self) -> None:
        """The menu is closed during a run: the old calibration back (nobody waits for it)."""
        if self.phase:
            self.ctx.link.calibration("cancel")
