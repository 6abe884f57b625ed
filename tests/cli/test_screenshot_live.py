"""``egm screenshot live`` and the lab ops against a running ``egm run --sim --headless``: the PNG
is the terminal's state drawn now (the credit meter after a note differs from before it), the lab
prompt is in the status and on the screenshot, answered from the console; nothing running -> one
line, a non-zero exit, no file."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pygame

from firmware.cabinet.control import request
from firmware.cli import main
from firmware.ui import theme
from tests.cli.processes import reaped
from tests.cli.test_memory_lock import status_when


def start(tmp_path: Path, state: Path, *, window: bool = False) -> subprocess.Popen:
    """``egm run --sim --headless``; ``window``: with its window instead (SDL's dummy display, the
    simulator panel beside the game)."""
    cfg = tmp_path / "egm.toml"
    cfg.write_text("[host]\nenabled = false\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
    screens = ["--size", "1280x720"] if window else ["--headless"]
    if window:
        env.update(SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    return subprocess.Popen([sys.executable, "-m", "firmware.cli", "run", "--sim", *screens, "--config",
                             str(cfg), "--state-dir", str(state)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env={**env, "PYTHONUNBUFFERED": "1"})


def screenshot(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["screenshot", "live", *args])
    return code, out.getvalue(), err.getvalue()


def region(image: pygame.Surface, rect: list[int]) -> bytes:
    return pygame.image.tobytes(image.subsurface(pygame.Rect(*rect)), "RGB")


def distinct_colours(image: pygame.Surface) -> int:
    small = pygame.transform.scale(image, (192, 108))
    data = pygame.image.tobytes(small, "RGB")
    return len({data[i:i + 3] for i in range(0, len(data), 3)})


def test_the_live_screen_shows_the_note_and_the_lab_prompt_and_changes_nothing(tmp_path):
    state = tmp_path / "state"
    proc = start(tmp_path, state)
    with reaped(proc):
        status_when(proc, state, lambda s: s.get("state") == "IDLE")
        before = tmp_path / "before.png"
        code, out, err = screenshot("--state-dir", str(state), "--out", str(before), "--json")
        assert code == 0, err
        first = json.loads(out)
        assert first["shown"] == "table" and first["state"] == "IDLE" and first["size"] == [1920, 1080]

        request(state, "sim", {"words": ["note", "20"]})
        status_when(proc, state, lambda s: s.get("credits_cents") == 2000)
        after = tmp_path / "after.png"
        code, out, err = screenshot("--state-dir", str(state), "--out", str(after), "--json")
        assert code == 0, err
        second = json.loads(out)
        a, b = pygame.image.load(str(before)), pygame.image.load(str(after))
        assert a.get_size() == b.get_size() == (1920, 1080)
        assert distinct_colours(b) > 20                               # not blank
        meter = second["regions"]["meter.credit"]
        assert meter == first["regions"]["meter.credit"]
        assert region(a, meter) != region(b, meter)                   # the credit meter changed
        title = second["regions"]["title"]
        assert region(a, title) == region(b, title)                   # ... and the game's title did not

        meters = request(state, "status")
        assert request(state, "lab_prompt", {"id": "door-1", "text": "Open the main door", "timeout_s": 120})
        lab = status_when(proc, state, lambda s: s.get("lab") is not None)["lab"]
        assert (lab["id"], lab["answer"], lab["timed_out"]) == ("door-1", None, False)
        panel = tmp_path / "panel.png"
        code, out, err = screenshot("--state-dir", str(state), "--out", str(panel), "--json", "--size", "1280x720")
        shot = json.loads(out)
        assert code == 0 and shot["lab"] == "door-1" and shot["size"] == [1280, 720]
        assert pygame.image.load(str(panel)).get_size() == (1280, 720)
        assert {"lab", "lab.done", "lab.cannot"} <= set(shot["regions"])
        assert request(state, "lab_answer", {"id": "door-1", "answer": "cannot"})["answer"] == "cannot"
        lab = status_when(proc, state, lambda s: (s.get("lab") or {}).get("answer") is not None)["lab"]
        assert (lab["answer"], lab["source"]) == ("cannot", "console")
        now = request(state, "status")
        assert {k: now[k] for k in ("state", "credits_cents", "rounds_played")} == {
            k: meters[k] for k in ("state", "credits_cents", "rounds_played")}
        request(state, "stop")
        proc.wait(timeout=60)
    from firmware.ledger.ledger import Ledger

    with Ledger.open(state) as ledger:
        lab_events = [(e["what"], e.get("answer")) for e in reversed(ledger.events(20)) if e["event"] == "lab_prompt"]
    assert lab_events == [("asked", None), ("answered", "cannot")]


def test_with_a_window_the_screenshot_is_the_windows_frame_without_the_simulator_panel(tmp_path):
    state = tmp_path / "state"
    proc = start(tmp_path, state, window=True)
    with reaped(proc):
        status_when(proc, state, lambda s: s.get("state") == "IDLE")
        request(state, "lab_prompt", {"id": "window", "text": "Touch DONE"})
        status_when(proc, state, lambda s: s.get("lab") is not None)
        out = tmp_path / "window.png"
        code, stdout, stderr = screenshot("--state-dir", str(state), "--out", str(out), "--json",
                                          "--size", "1280x720")
        assert code == 0, stderr
        shot = json.loads(stdout)
        assert shot["shown"] == "table" and shot["size"] == [1280, 720]
        image = pygame.image.load(str(out))
        assert image.get_size() == (1280, 720) and distinct_colours(image) > 20
        x, y, w, h = shot["regions"]["button.games"]     # the game's screen edge to edge (GAMES at its
        assert x + w >= 1240                               # right edge: no simulator panel squeezed in)
        x, y, w, h = shot["regions"]["lab.cannot"]       # ... and what was drawn is where it says
        for px in (x + 30, x + w - 30):
            assert all(abs(a - b) <= 8 for a, b in zip(image.get_at((px, y + h // 2))[:3], theme.BUTTON,
                                                         strict=True)), px
        request(state, "stop")
        proc.wait(timeout=60)


def test_no_terminal_running_is_one_line_and_no_file(tmp_path):
    out = tmp_path / "live.png"
    started = time.monotonic()
    code, stdout, stderr = screenshot("--state-dir", str(tmp_path), "--out", str(out))
    assert code != 0 and stdout == ""
    assert stderr.strip().count("\n") == 0 and "no terminal is running" in stderr
    assert not out.exists() and time.monotonic() - started < 30
