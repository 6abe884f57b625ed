"""Double Super 9 PAR sheet: seconds to compute the exact sheet of the default configuration
(12 decks, house banking, 5% commission, unit 10): 126 x 126 value multisets through the game's
house way, compare and hand_outcome, plus the one stacked kernel round that reads the win's pay.
"""

from __future__ import annotations

import os
import statistics
import time

from firmware.games.double_super_9 import DoubleSuper9Options
from firmware.math.double_super_9 import par_sheet

#: Sheets computed (the median is reported).
RUNS = int(os.environ.get("EGM_BENCH_PAR_DS9_RUNS", "5"))


def exact_default_sheet() -> tuple[float, str]:
    options = DoubleSuper9Options()
    par_sheet(options)                                  # warm-up: imports, caches
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        sheet = par_sheet(options)
        samples.append(time.perf_counter() - start)
    assert sheet.wagers["bet"].rtp < 1
    return statistics.median(samples), f"s, exact default sheet (median of {RUNS})"


BENCHMARKS = [
    ("par_ds9: exact Double Super 9 PAR sheet, default options", exact_default_sheet),
]
