"""``egm run``: start the terminal.

What exists so far runs: the configuration is loaded and validated, and the power-up self-test of
the certified RNG (known-answer test against the NIST vectors built into the firmware, SP 800-90B
health tests on fresh entropy) is performed. The parts of the terminal that are not built yet are
listed plainly instead of being pretended.
"""

from __future__ import annotations

import argparse
import sys

NOT_YET = (
    ("round kernel and war games", "the war-kernel issue"),
    ("critical memory (meters, journal, recall)", "the critical-memory issue"),
    ("devices and simulated hardware", "the devices issue"),
    ("cabinet state machine, money flow, tilts", "the terminal issue"),
    ("host link and embedded host", "the host-link issue"),
    ("player and service screens", "the screens issue"),
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="start the terminal (with --sim: simulated hardware)")
    p.add_argument("--sim", action="store_true", help="simulated devices and an embedded host")
    p.add_argument("--headless", action="store_true", help="no display")
    p.add_argument("--state-dir", help="critical-memory directory (default: the platform data dir)")
    p.add_argument("--config", help="configuration file (TOML; default: built-in defaults)")
    p.add_argument("--autoplay", type=int, metavar="ROUNDS", help="play ROUNDS rounds automatically")
    p.add_argument("--game", help="game id to start with")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from firmware.config import load_config
    from firmware.errors import UsageError

    cfg = load_config(args.config)
    if args.game and args.game not in cfg.games.enabled:
        raise UsageError(f"game {args.game!r} is not enabled; enabled: {', '.join(cfg.games.enabled)}")
    out = sys.stdout
    out.write(f"egm terminal {cfg.terminal.id} at {cfg.terminal.venue}\n")
    out.write("power-up self-test:\n")
    out.write(f"  configuration .......... ok ({len(cfg.games.enabled)} games enabled)\n")
    for name, verdict in _rng_power_up_test(cfg):
        out.write(f"  {name:<24s} {verdict}\n")
    out.write("not built yet (the terminal cannot take money or play until these land):\n")
    for what, where in NOT_YET:
        out.write(f"  - {what}: {where}\n")
    out.flush()
    return 0


def _rng_power_up_test(cfg) -> list[tuple[str, str]]:
    """Known-answer test and a health-tested instantiation, as the cabinet will do at power-up."""
    from firmware.rng.power_up import power_up_self_test

    return power_up_self_test(personalization=cfg.rng.personalization + ":" + cfg.terminal.id)
