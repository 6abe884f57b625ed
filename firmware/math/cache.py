"""PAR sheets kept for the configuration check: shipped with the firmware, or cached locally.

A Monte Carlo sheet costs minutes; the check at start-up must not. Sheets are stored as the check
needs them (each wager's outcome table and sample size), under a key of the game, its options, the
seats and the stake, in ``firmware/math/sheets`` (shipped: the default configurations, produced by
``python -m firmware.math.cache``) or in a cache directory (the terminal's state directory). A sheet
is used only when its sample is at least the configured number of rounds; an unreadable file is
ignored and recomputed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any

from firmware.games.options import GameOptions
from firmware.math.sheet import Number, OutcomeLine, ParSheet, WagerPar

#: Bumped whenever a change to the games or the math could change a stored sheet.
VERSION = 1
SHIPPED = "sheets"


def key(game_id: str, options: GameOptions, *, seats: int, unit: int) -> str:
    doc = {"v": VERSION, "game": game_id, "options": options.to_json(), "seats": seats, "unit": unit}
    return f"{game_id}-{hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:24]}"


def lookup(game_id: str, options: GameOptions, *, seats: int, unit: int, rounds: int,
           cache_dir: Path | str | None) -> ParSheet | None:
    name = key(game_id, options, seats=seats, unit=unit) + ".json"
    texts = []
    shipped = resources.files("firmware.math").joinpath(SHIPPED, name)
    if shipped.is_file():
        texts.append(shipped.read_text("utf-8"))
    if cache_dir is not None:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            texts.append((Path(cache_dir) / name).read_text("utf-8"))
    for text in texts:
        sheet = _decode(text)
        if sheet is not None and (sheet.method == "exact" or sheet.extras.get("rounds", 0) >= rounds):
            return sheet
    return None


def store(sheet: ParSheet, directory: Path | str, *, rounds: int) -> Path:
    """Write ``sheet`` (atomically) where :func:`lookup` finds it."""
    from firmware.games.registry import make_options

    options = make_options(sheet.game, sheet.options)
    path = Path(directory) / (key(sheet.game, options, seats=sheet.seats, unit=sheet.unit or 10) + ".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(_encode(sheet, rounds), indent=1) + "\n", "utf-8")
    tmp.replace(path)
    return path


def _encode(sheet: ParSheet, rounds: int) -> dict[str, Any]:
    return {
        "game": sheet.game, "options": sheet.options, "seats": sheet.seats, "unit": sheet.unit,
        "rounds": rounds,
        "wagers": {
            name: {
                "method": w.method, "sample_size": w.sample_size,
                "measured_standard_error": w.measured_standard_error,
                "outcomes": [[o.name, _text(o.probability), _text(o.net), o.count, _text(o.stake)]
                             for o in w.outcomes],
            }
            for name, w in sheet.wagers.items()
        },
    }


def _text(value: Number) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _number(text: str, exact: bool) -> Number:
    return Fraction(text) if exact else float(text)


def _decode(text: str) -> ParSheet | None:
    try:
        doc = json.loads(text)
        wagers = {}
        for name, w in doc["wagers"].items():
            exact = w["method"] != "monte-carlo"
            lines = [OutcomeLine(str(n), _number(p, exact), Fraction(net), c, Fraction(s))
                     for n, p, net, c, s in w["outcomes"]]
            wagers[name] = WagerPar(name, lines, method=w["method"], sample_size=w["sample_size"],
                                    measured_standard_error=w["measured_standard_error"])
        return ParSheet(doc["game"], doc["options"], wagers, seats=int(doc["seats"]),
                        unit=doc["unit"], extras={"rounds": int(doc["rounds"])})
    except (ValueError, KeyError, TypeError, ZeroDivisionError):
        return None


def main(argv: list[str]) -> int:
    """Compute and store the shipped sheets of the default configuration's games (exact, or
    Monte Carlo with ROUNDS rounds): ``python -m firmware.math.cache [ROUNDS] [GAME ...]``."""
    from firmware.config import load_config
    from firmware.games.registry import configured_options
    from firmware.math.par import ParError, par_sheet

    cfg = load_config(None)
    rounds = int(argv[0]) if argv else cfg.math.monte_carlo_rounds
    games = argv[1:] or cfg.games.enabled
    out = Path(str(resources.files("firmware.math").joinpath(SHIPPED)))
    unit = max(cfg.limits.min_bet, min(10, cfg.limits.max_bet))
    for game_id in games:
        options = configured_options(cfg, game_id)
        try:
            sheet = par_sheet(game_id, options, method="exact", seats=cfg.games.seats, unit=unit)
        except ParError:
            sheet = par_sheet(game_id, options, seats=cfg.games.seats, unit=unit, rounds=rounds,
                              seed=f"shipped:{game_id}")
        print(f"{game_id}: {store(sheet, out, rounds=rounds)} ({sheet.elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
