"""Run ``egm round`` in-process and return its JSON record."""

from __future__ import annotations

import json

from firmware.cli import main

#: The WAR_POOL is off in the terminal's default configuration (one seat cannot play it against
#: other players); the tests of the pool's rules turn it on.
POOL_ON = ("--option", "pool.enabled=true")


def egm_round(capsys, game: str, *args: str) -> dict:
    code = main(["round", game, "--json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def egm_fails(capsys, *argv: str) -> str:
    """Run ``egm ARGV`` in-process; it must fail with one clear stderr line and nothing on stdout.
    Returns that line."""
    try:
        code = main(list(argv))
    except SystemExit as exc:               # argparse refused the command line (an unknown GAME)
        code = exc.code
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def wagers(*specs: str) -> list[str]:
    """``wagers("7:bac=10", "7:war=10")`` -> ``["--wager", "7:bac=10", "--wager", "7:war=10"]``."""
    out: list[str] = []
    for spec in specs:
        out += ["--wager", spec]
    return out


def seat(record: dict, number: int) -> dict:
    return next(s for s in record["seats"] if s["seat"] == number)


def outcome(record: dict, number: int, wager: str) -> tuple[str, int]:
    r = seat(record, number)["results"][wager]
    return r["outcome"], r["net"]
