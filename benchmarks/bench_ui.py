"""The screens: frame time while dealing (median, 99th percentile) and memory use, headless.

A terminal (in-process, no devices) with the UI app at 1920x1080 and 1280x720: Baccarat War with
BAC, WAR, TIE and WAR POOL on spot 1, and Three Card Poker with ANTE and PAIR PLUS and a PLAY
decision; deal, and time every :meth:`UiApp.step` (terminal step, input, playback, drawing the
whole frame) while the round plays back at 60 frames a second, for ``ROUNDS`` rounds. Memory: the process's peak resident set size, and the Python heap's peak during
the dealing (tracemalloc). Run alone: ``.venv/bin/python -m benchmarks.bench_ui``.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from benchmarks.timing import median, p99  # noqa: E402

FRAME = 1 / 60
ROUNDS = 10


#: The rounds measured: the game, its options, the wagers put on spot 1, and the decision made
#: when the round waits for one (Three Card Poker's PLAY).
SCENARIOS: dict[str, dict] = {
    "baccarat-war": {"options": {"war_wager": "optional", "pool": {"enabled": True, "dealer_ante": 10}},
                     "wagers": ("bac", "war", "tie", "war_pool"), "decide": None},
    "three-card-poker": {"options": {}, "wagers": ("ante", "pair_plus"), "decide": "play"},
}


def _app(state: Path, size: tuple[int, int], game: str = "baccarat-war"):
    import pygame

    from firmware.cabinet.terminal import Devices, Terminal
    from firmware.cashless.vouchers import VoucherBook
    from firmware.config import Config
    from firmware.ledger.ledger import Ledger
    from firmware.rng.service import RngService
    from firmware.ui.app import UiApp

    pygame.font.init()
    cfg = Config.model_validate({
        "games": {"enabled": [game], "default": game, "seats": 1,
                  "options": {game: SCENARIOS[game]["options"]}},
        "host": {"enabled": False}})
    ledger = Ledger.open(state)
    terminal = Terminal(cfg, ledger, RngService.seeded(3), Devices(), VoucherBook(ledger, terminal_id="B1"))
    terminal.power_up()
    ledger.bill_in(100_000)
    app = UiApp(terminal, size=size)
    app.step(FRAME)
    return app, ledger


def _rounds(app, game: str, rounds: int, samples: list[float] | None) -> None:
    """Play ``rounds`` rounds through the app, timing every frame into ``samples`` (if given)."""
    from firmware.ui.actions import UiAction

    scenario = SCENARIOS[game]
    for _ in range(rounds):
        app.dispatch(UiAction("chip", 5))
        for wager in scenario["wagers"]:
            app.dispatch(UiAction("bet", (1, wager)))
        app.dispatch(UiAction("deal"))
        decided = False
        for _ in range(60 * 30):                   # at most 30 s of frames per round
            start = time.perf_counter_ns()
            app.step(FRAME)
            if samples is not None:
                samples.append((time.perf_counter_ns() - start) / 1e6)
            pending = (app.status.get("round") or {}).get("pending")
            if pending and scenario["decide"] and not decided:
                app.dispatch(UiAction("decide", (1, scenario["decide"])))
                decided = True
            if app.playback is not None and app.playback.done and not app.status.get("round"):
                break                              # the round is shown to its end


def measure(size: tuple[int, int], rounds: int = ROUNDS, game: str = "baccarat-war") -> dict[str, float]:
    """Frame times (ms) of every frame while a round is dealt and shown, over ``rounds`` rounds;
    then two more rounds under tracemalloc for the Python heap's peak (tracing slows every frame,
    so it is kept out of the timed rounds)."""
    samples: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        app, ledger = _app(Path(tmp) / "state", size, game)
        try:
            _rounds(app, game, rounds, samples)
            tracemalloc.start()
            _rounds(app, game, 2, None)
            _, heap_peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        finally:
            ledger.close()
    return {"median_ms": median(samples), "p99_ms": p99(samples), "frames": len(samples),
            "heap_peak_mib": heap_peak / 2**20,
            "rss_peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


_CACHE: dict[tuple[str, tuple[int, int]], dict[str, float]] = {}


def _figure(size: tuple[int, int], key: str, unit: str, game: str = "baccarat-war"):
    def run() -> tuple[float, str]:
        if (game, size) not in _CACHE:
            _CACHE[game, size] = measure(size, game=game)
        return round(_CACHE[game, size][key], 2), unit
    return run


BENCHMARKS = [
    ("ui: frame time while dealing, 1920x1080 (median)", _figure((1920, 1080), "median_ms", "ms")),
    ("ui: frame time while dealing, 1920x1080 (p99)", _figure((1920, 1080), "p99_ms", "ms")),
    ("ui: frame time while dealing, 1280x720 (median)", _figure((1280, 720), "median_ms", "ms")),
    ("ui: frame time while dealing, 1280x720 (p99)", _figure((1280, 720), "p99_ms", "ms")),
    ("ui: Three Card Poker with a decision, 1920x1080 (median)",
     _figure((1920, 1080), "median_ms", "ms", "three-card-poker")),
    ("ui: Three Card Poker with a decision, 1920x1080 (p99)",
     _figure((1920, 1080), "p99_ms", "ms", "three-card-poker")),
    ("ui: Python heap peak over two rounds (tracemalloc)", _figure((1920, 1080), "heap_peak_mib", "MiB")),
    ("ui: process peak RSS", _figure((1920, 1080), "rss_peak_mib", "MiB")),
]


if __name__ == "__main__":
    for game in SCENARIOS:
        for size in ((1920, 1080), (1280, 720)):
            figures = measure(size, game=game)
            print(f"{game} {size[0]}x{size[1]}: " + ", ".join(
                f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items()))
