"""The kiosk as egm-kiosk.service starts it: cage, with the unit's own command line and runtime
directory, runs (wlroots' headless backend standing for the cabinet's screens) and the terminal's
SDL, with egm-terminal.service's display settings, connects to it over Wayland. Drawing a frame
needs EGL (Mesa), which a build machine may lack: that part is not checked here."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNITS = ROOT / "deploy/cabinet/systemd"
NOBODY = 65534                     # cage refuses to run as root


def unit_values(name: str, key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in (UNITS / name).read_text().splitlines() if line.startswith(key + "=")]


def unit_environment(name: str) -> dict[str, str]:
    return dict(v.split("=", 1) for v in unit_values(name, "Environment"))


def _usable() -> str | None:
    for tool in ("cage", "Xwayland", "setpriv"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian packages cage, xwayland, util-linux)"
    if os.geteuid() != 0:
        return "the test runs cage as an unprivileged user, which needs root to switch to"
    return None


pytestmark = pytest.mark.skipif(_usable() is not None, reason=str(_usable()))


def sdl_connects(env: dict[str, str]) -> subprocess.CompletedProcess:
    code = "import pygame; pygame.display.init(); print(pygame.display.get_driver())"
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env, "PYGAME_HIDE_SUPPORT_PROMPT": "1"},
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def runtime():
    """The kiosk's runtime directory (/run/egm-kiosk on a cabinet), owned by the compositor's user,
    in /tmp (pytest's own directories are root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="egm-kiosk-"))
    os.chown(path, NOBODY, NOBODY)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_terminal_reaches_the_kiosk_compositor_over_wayland(runtime):
    kiosk_env = unit_environment("egm-kiosk.service")
    terminal_env = unit_environment("egm-terminal.service")
    assert kiosk_env["XDG_RUNTIME_DIR"] == terminal_env["XDG_RUNTIME_DIR"] == "/run/egm-kiosk"
    command = shlex.split(unit_values("egm-kiosk.service", "ExecStart")[0])
    assert command[0] == "/usr/bin/cage" and "-s" not in command          # no VT switching
    env = {"PATH": os.environ["PATH"], **kiosk_env, "XDG_RUNTIME_DIR": str(runtime),
           "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman"}
    env.pop("LIBSEAT_BACKEND")                                               # no seat with a headless backend
    # the terminal's view of the display, pointed at this runtime directory
    display = {**terminal_env, "XDG_RUNTIME_DIR": str(runtime)}
    assert display["SDL_VIDEODRIVER"] == "wayland"
    refused = sdl_connects(display)
    assert refused.returncode != 0                                           # no compositor yet: no display
    cage = subprocess.Popen(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        socket = runtime / terminal_env["WAYLAND_DISPLAY"]
        deadline = time.monotonic() + 30
        while not socket.is_socket() and cage.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert socket.is_socket(), cage.stdout.read() if cage.poll() is not None else "no socket in 30 s"
        connected = sdl_connects(display)
        assert connected.returncode == 0 and connected.stdout.strip().endswith("wayland"), connected.stderr
    finally:
        # cage waits for its client; systemd's stop signals the whole cgroup (KillMode=control-group),
        # this the whole process group
        os.killpg(cage.pid, signal.SIGTERM)
        cage.communicate(timeout=30)
