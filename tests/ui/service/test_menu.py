"""The service menu's controller against a scripted link: the exact service requests each touch
sends, and what the screen does with the answers and refusals (packages, the lab hash with a
seed, a page the API refuses, a session that timed out, the calibration giving up)."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pygame
import pytest

from firmware.cabinet.service import ACTIONS, ServiceError
from firmware.ui.layout import Scaler
from firmware.ui.service.actions import ServiceAction
from firmware.ui.service.menu import CALIBRATION_IDLE_S, ServiceMenu
from firmware.ui.service.screen import ServiceScreen
from hal.events import Touch, TouchPhase

SIZE = (1280, 720)


class ScriptedLink:
    """Answers service requests from a script: words -> answer, or an exception to raise."""

    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.asked: list[list[str]] = []
        self.calibration_steps: list[tuple[str, dict]] = []

    def _future(self, answer: Any) -> Future:
        future: Future = Future()
        if isinstance(answer, Exception):
            future.set_exception(answer)
        else:
            future.set_result(answer)
        return future

    def service(self, words):
        self.asked.append(list(words))
        key = " ".join(words)
        answer = self.script.get(key, self.script.get(words[0]))
        if callable(answer):
            answer = answer(words)
        if answer is None:
            answer = ServiceError(f"unscripted request {key!r}")
        return self._future(answer)

    def calibration(self, step, **args):
        self.calibration_steps.append((step, args))
        return self._future({"raw": True} if step == "begin" else {"restored": True})

    def status(self):
        return {"state": "SERVICE", "credits": 0, "devices": {"touch": "open"}, "tilts": []}


def role_answer(role: str) -> dict:
    return {"role": role, "allowed": [a.name for a in ACTIONS if role in a.roles], "timeout_s": 300}


@pytest.fixture
def menu(monkeypatch):
    def make(script: dict[str, Any], role: str = "technician", clock=None) -> ServiceMenu:
        link = ScriptedLink({"login": lambda w: role_answer(w[1]), "session": {"role": role}, **script})
        m = ServiceMenu(link, size=SIZE, **({"clock": clock} if clock else {}))
        m.poll()
        m.dispatch(ServiceAction("role", role))
        for d in "1234":
            m.dispatch(ServiceAction("digit", d))
        m.dispatch(ServiceAction("enter"))
        m.poll()
        assert m.state.role == role and link.asked[-1] == ["login", role, "1234"]
        m.draw(pygame.Surface(SIZE))
        return m

    return make


def step(m: ServiceMenu, action: ServiceAction) -> None:
    m.dispatch(action)
    m.poll()
    m.draw(pygame.Surface(SIZE))


PACKAGES = {"pending": {"holiday-pays": {"version": "1.2", "sha256": "ab" * 32}},
            "installed": {"base": {"version": "1.0", "sha256": "cd" * 32}}, "downloading": []}


def test_packages_are_listed_and_approved_by_name(menu):
    m = menu({"packages": PACKAGES, "package approve holiday-pays": {"installed": {}}})
    step(m, ServiceAction("open", "packages"))
    frame = m.frame
    assert " | ".join(frame.texts_in("row.package.holiday-pays")).startswith("holiday-pays | 1.2 | waiting")
    assert "installed" in " | ".join(frame.texts_in("row.package.base"))
    assert {"button.approve", "button.reject"} <= {h.name for h in frame.hits}
    step(m, frame.hit("button.approve").action)
    assert ["package", "approve", "holiday-pays"] in m.link.asked
    assert m.link.asked[-1] == ["packages"]                          # the list is asked again
    assert "holiday-pays verified again and installed" in m.state.message


def test_an_auditor_sees_packages_but_cannot_approve(menu):
    m = menu({"packages": PACKAGES}, role="auditor")
    step(m, ServiceAction("open", "packages"))
    assert not {"button.approve", "button.reject"} & {h.name for h in m.frame.hits}


def test_a_lab_hash_with_a_seed_typed_on_the_hex_pad(menu):
    answer = {"algorithm": "hmac-sha256", "overall": "0f" * 32, "files": [{}, {}, {}]}
    m = menu({"software": {"verification": {"ok": True, "reason": "verified"}},
              "software hash hmac-sha256 00FF": answer})
    step(m, ServiceAction("open", "software"))
    assert "ok | True" in " | ".join(m.frame.texts_in("row.software.ok"))
    step(m, m.frame.hit("hash.hmac-sha256").action)
    assert m.state.page == "seed"
    for d in "00F":
        step(m, m.frame.hit(f"key.{d}").action)
    step(m, ServiceAction("enter"))                                   # an odd number of digits
    assert "even number" in m.state.message and m.state.page == "seed"
    step(m, m.frame.hit("key.F").action)
    step(m, ServiceAction("enter"))
    assert m.link.asked[-1] == ["software", "hash", "hmac-sha256", "00FF"]
    assert m.state.page == "software"
    assert "0f" * 16 in m.frame.texts_in("panel.hash") and "3 files" in m.frame.texts_in("panel.hash")


def test_a_page_the_api_refuses_says_why_instead_of_waiting(menu):
    m = menu({"packages": ServiceError("this terminal takes no game packages (no host link)")})
    step(m, ServiceAction("open", "packages"))
    assert "Not available: this terminal takes no game packages" in " ".join(m.frame.texts_in("panel.unavailable"))
    assert m.state.message.startswith("Refused:") and m.state.role == "technician"


def test_a_timed_out_session_goes_back_to_the_login(menu):
    m = menu({"meters": ServiceError("the technician session timed out: log in first: service login ROLE PIN"),
              "session": {"role": None, "ended": "the technician session timed out"}})
    step(m, ServiceAction("open", "meters"))
    m.poll()
    assert m.state.page == "login" and m.state.role is None
    assert "timed out" in m.state.message


def test_development_keys_type_the_pin(menu):
    link = ScriptedLink({"login": lambda w: role_answer(w[1])})
    m = ServiceMenu(link, size=SIZE)
    scaler = Scaler(*SIZE)
    m.draw(pygame.Surface(SIZE))
    m.dispatch(ServiceAction("role", "auditor"))
    for key in (pygame.K_3, pygame.K_3, pygame.K_9, pygame.K_BACKSPACE, pygame.K_3, pygame.K_3, pygame.K_RETURN):
        m.on_pygame_event(pygame.event.Event(pygame.KEYDOWN, key=key), scaler)
    m.poll()
    assert link.asked[-1] == ["login", "auditor", "3333"] and m.state.role == "auditor"


def test_the_calibration_gives_up_after_a_minute_without_a_touch(menu):
    now = [100.0]
    m = menu({}, clock=lambda: now[0])
    step(m, ServiceAction("open", "calibration"))
    step(m, m.frame.hit("button.calibrate").action)
    assert m.calibrating and m.link.calibration_steps[-1][0] == "begin"
    scaler = Scaler(*SIZE)
    m.end_frame()
    m.on_device_event(Touch("touch", 5000, 4000, TouchPhase.DOWN), scaler)     # a raw touch: target 1
    assert len(m.run.raw) == 1
    now[0] += CALIBRATION_IDLE_S + 1
    m.poll()
    m.poll()
    assert not m.calibrating and m.link.calibration_steps[-1][0] == "cancel"
    assert "No touch for a minute" in m.state.message


def test_the_event_log_is_paged(menu):
    events = [{"seq": 60 - i, "time": "2026-11-23T18:00:00.000Z", "event": "bill_rejected", "reason": f"r{60 - i}"}
              for i in range(60)]
    m = menu({"events": {"events": events}})
    step(m, ServiceAction("open", "events"))
    per = ServiceScreen().capacity(ServiceScreen.BODY)              # rows that fit in the body
    pages = -(-60 // per)
    assert pages > 1 and f"Page 1 of {pages}" in m.frame.texts_in("pager")
    assert "button.prev" not in {h.name for h in m.frame.hits}     # the first page: PREVIOUS is dark
    assert "reason=r60" in " | ".join(m.frame.texts_in("row.event.0"))
    step(m, m.frame.hit("button.next").action)
    assert f"Page 2 of {pages}" in m.frame.texts_in("pager")
    assert "row.event.0" not in m.frame.regions and f"row.event.{per}" in m.frame.regions
    assert f"reason=r{60 - per}" in " | ".join(m.frame.texts_in(f"row.event.{per}"))
    step(m, m.frame.hit("button.prev").action)
    assert f"Page 1 of {pages}" in m.frame.texts_in("pager")
    step(m, ServiceAction("page", -1))                              # the arrow keys stop at the ends
    for _ in range(pages + 2):
        step(m, ServiceAction("page", 1))
    assert m.state.list_page == pages - 1 and f"Page {pages} of {pages}" in m.frame.texts_in("pager")


def test_a_round_still_in_progress_is_recalled_with_the_cards_dealt_so_far(menu):
    open_round = {"round_id": "r-open", "game": "three-card-poker", "status": "in_progress",
                  "wagers": {"1": {"ante": 10}}, "cards_dealt": ["Qs", "Kd", "Qh"], "decisions": [], "steps": 2}
    m = menu({"recall": {"rounds": [open_round]}})
    step(m, ServiceAction("open", "recall"))
    assert "IN PROGRESS: the round has not ended" in m.frame.texts_in("round")
    dealt = m.frame.texts_in("round.dealt")
    assert "DEALT" in dealt and {"Q", "K"} <= set(dealt)
    assert "10 credits" in m.frame.texts_in("round.wager.1.ante")
    assert "open" in " | ".join(m.frame.texts_in("row.round.0"))


def test_meters_in_cents_that_are_not_whole_credits_say_so():
    from firmware.ui.money import Money
    from firmware.ui.service.builders import money_cells

    assert money_cells(Money(5, "USD"), 2000) == ("$20.00", "400 credits")
    assert money_cells(Money(5, "USD"), 2003) == ("$20.03", "400 credits + 3 cents")
    assert money_cells(Money(1, "EUR"), 1) == ("€0.01", "1 credit")
