"""Lab mode on the player's screens: the panel over the table at 1920x1080, answered by a touch
through the touchscreen (simulator -> driver -> terminal -> the panel's hit area), a touch outside
it still the table's; and the live screenshot of those screens (``UiApp.capture``)."""

from __future__ import annotations

import base64
import io
import threading
from typing import Any

import pygame
import pytest

from firmware.ui import theme
from firmware.ui.capture import CaptureError, FrameGrab, png
from tests.ui.session import Session
from tests.ui.test_acceptance import FIG_8

SIZE = (1920, 1080)


@pytest.fixture
def big(tmp_path):
    s = Session(tmp_path, size=SIZE)
    yield s
    s.close()


def prompt(s: Session, **args: Any) -> None:
    s.terminal.submit("lab_prompt", **args)
    s.until(lambda: s.terminal.status()["lab"] is not None, "the prompt")
    s.step()


def top(s: Session, region: str) -> str:
    """The text drawn last (on top) inside ``region``: the panel's, over the table's."""
    return s.app.frame.texts_in(region)[-1]


def near(colour: tuple[int, ...], expected: tuple[int, int, int]) -> bool:
    """Within the blur of a scaled image."""
    return all(abs(a - b) <= 8 for a, b in zip(colour[:3], expected, strict=True))


def tap(s: Session, x: float, y: float) -> None:
    """A finger at design point (x, y) through the touchscreen, then lifted (as ``Session.touch``)."""
    px, py = s.app.scaler.point(x, y)
    last = s.terminal.touches[-1] if s.terminal.touches else None
    s.finger.tap(px, py)
    s.until(lambda: s.terminal.touches and s.terminal.touches[-1] is not last
            and s.terminal.touches[-1]["phase"] == "up", f"the touch at {x}, {y}")


def money(s: Session) -> tuple[Any, ...]:
    t = s.terminal
    return (dict(t.ledger.meters), t.status()["state"], t.status()["credits_cents"], t.rounds_played)


def test_the_panel_is_drawn_over_the_table_and_a_touch_on_could_not_do_it_answers(big):
    s = big
    s.insert(20)
    before = money(s)
    prompt(s, id="door-1", text="Open the main door, then close it")
    frame = s.app.frame
    assert s.app.surface.get_size() == SIZE
    assert top(s, "lab.title") == "LAB TEST - door-1"
    assert top(s, "lab.text") == "Open the main door, then close it"
    assert top(s, "lab.done") == "DONE" and top(s, "lab.cannot") == "COULD NOT DO IT"
    x, y, w, h = s.app.scaler.rect(frame.regions["lab"])
    assert x > 0 and y > 0 and x + w < SIZE[0] and y + h < SIZE[1]
    assert frame.regions["meter.credit"]                 # the table is still drawn under it
    assert frame.action_at(*frame.regions["lab.done"].center).name == "lab_done"
    s.save("lab-prompt")

    s.touch("lab.cannot")
    s.until(lambda: s.terminal.status()["lab"]["answer"] == "cannot", "the answer")
    s.step()
    lab = s.terminal.status()["lab"]
    assert lab["source"] == "screen" and lab["id"] == "door-1"
    assert top(s, "lab.answer") == "ANSWERED: COULD NOT DO IT"
    with pytest.raises(KeyError):                          # answered: the buttons take no touch
        s.app.frame.hit("lab.done")
    assert s.app.slip.wagers == {} and money(s) == before  # the table under it saw nothing; no money moved
    answered = [e for e in reversed(s.ledger.events(10)) if e.get("event") == "lab_prompt"]
    assert [(e["what"], e.get("source")) for e in answered] == [("asked", None), ("answered", "screen")]
    s.save("lab-answered")

    s.terminal.submit("lab_clear")
    s.until(lambda: s.terminal.status()["lab"] is None, "the prompt cleared")
    s.step()
    assert "lab" not in s.app.frame.regions


def test_a_touch_outside_the_panel_goes_to_the_screen_under_it(big):
    s = big
    prompt(s, id="help", text="Touch HELP at the top of the screen")
    s.touch("button.help")
    s.until(lambda: s.app.mode == "help", "the help opened")
    assert s.terminal.status()["lab"]["answer"] is None


def test_the_live_screenshot_is_the_frame_on_screen_with_the_panel(big):
    s = big
    prompt(s, id="door-1", text="Open the main door")
    answers: list[Any] = []
    asker = threading.Thread(target=lambda: answers.append(s.terminal.screenshot((1280, 720))))
    asker.start()
    s.until(lambda: bool(answers), "the screenshot", timeout=10)
    asker.join()
    shot = answers[0]
    assert (shot["width"], shot["height"], shot["screen"], shot["state"], shot["lab"]) == (
        1280, 720, "table", "IDLE", "door-1")
    image = pygame.image.load(io.BytesIO(base64.b64decode(shot["png_base64"])), "shot.png")
    assert image.get_size() == (1280, 720)
    x, y, w, h = shot["regions"]["lab.done"]
    assert w > 0 and near(image.get_at((x + w // 2, y + 8)), theme.BUTTON_DEAL)
    x, y, w, h = shot["regions"]["lab.cannot"]
    assert near(image.get_at((x + w // 2, y + 8)), theme.BUTTON)


def test_a_screenshot_no_frame_serves_times_out():
    with pytest.raises(CaptureError, match="drew no frame within 0.05 s"):
        FrameGrab(wait_s=0.05).request((320, 180))


def test_the_png_encoder_round_trips_through_pygame():
    surface = pygame.Surface((40, 30))
    surface.fill((10, 200, 30))
    surface.fill((250, 0, 128), pygame.Rect(5, 7, 10, 3))
    data = png(pygame.image.tobytes(surface, "RGB"), 40, 30)
    back = pygame.image.load(io.BytesIO(data), "x.png")
    assert back.get_size() == (40, 30)
    assert back.get_at((6, 8))[:3] == (250, 0, 128) and back.get_at((0, 0))[:3] == (10, 200, 30)
    with pytest.raises(ValueError):
        png(b"\x00" * 10, 40, 30)


def test_over_the_service_menu_the_panel_takes_its_touch_and_the_menu_does_not(big):
    s = big
    s.rig.control(["key", "audit", "on"])
    s.until(lambda: s.app.service_menu is not None, "the service menu")
    s.step()
    assert "role.technician" in s.app.frame.regions
    prompt(s, id="menu", text="Touch DONE over the service menu")
    assert s.app.screen == "service" and top(s, "lab.title") == "LAB TEST - menu"
    menu = s.app.service_menu
    page = menu.state.page
    role = menu.frame.hit("role.technician").rect                   # under the panel's body
    assert s.app.frame.action_at(*role.center).name == "lab_panel"
    tap(s, *role.center)
    s.step()
    assert menu.state.page == page == "login"                       # a touch on the panel: nothing
    s.touch("lab.done")
    s.until(lambda: s.terminal.status()["lab"]["answer"] == "done", "the answer")
    s.step()
    assert s.terminal.status()["lab"]["source"] == "screen"
    assert s.app.service_menu is menu and menu.state.page == page      # the menu saw nothing
    assert "role.technician" in s.app.frame.regions


def test_the_headless_screenshot_draws_the_published_state_once_and_disturbs_nothing(big):
    from firmware.ui.live import render_live

    s = big
    s.insert(20)
    s.stack_shoe(FIG_8.split())
    s.terminal.submit("play", wagers={1: {"bac": 10, "war": 10, "tie": 5, "war_pool": 10}})
    s.until(lambda: s.terminal.status()["last_round"] is not None and s.app.playback is not None, "a round")
    s.app.playback.skip()
    s.step()
    on_input, handlers = s.terminal.on_input, dict(s.terminal.handlers)
    queued, published = s.terminal.commands._queue.qsize(), s.terminal.published
    shot = render_live(s.terminal, (1920, 1080))
    assert (shot["screen"], shot["state"], shot["lab"]) == ("table", "IDLE", None)
    # the round is shown at its end, as on the screens that followed it: the same result regions
    drawn = {n for n in s.app.frame.regions if n.startswith(("result", "hand", "dealer", "banner"))}
    assert drawn and drawn <= set(shot["regions"])
    # the terminal is as it was: its input still the screens', no command registered or queued
    assert s.terminal.on_input == on_input and s.terminal.handlers == handlers
    assert s.terminal.commands._queue.qsize() == queued and s.terminal.published == published
    image = pygame.image.load(io.BytesIO(base64.b64decode(shot["png_base64"])), "live.png")
    live = pygame.image.tobytes(image, "RGB")
    mine = pygame.image.tobytes(s.app.surface, "RGB")
    same = sum(a == b for a, b in zip(live[::97], mine[::97], strict=True)) / len(live[::97])
    assert same > 0.95                      # the same picture as the screens that played it
