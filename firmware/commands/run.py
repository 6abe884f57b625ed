"""``egm run``: start the terminal.

What exists so far runs: the configuration is loaded and validated; the power-up self-test of the
certified RNG (known-answer test against a NIST vector built into the firmware, SP 800-90B health
tests on fresh entropy) is performed; every enabled game's PAR sheet is checked against the
jurisdiction profile (a refused configuration stops the start); the enabled games are listed, and
``--autoplay ROUNDS`` plays rounds through the real round kernel and critical memory in
``--state-dir`` (simulated notes in, tickets out now and then; see ``firmware.ledger.driver``),
resuming a round a power cut interrupted. The parts of the terminal that are not built yet are
listed plainly instead of being pretended.
"""

from __future__ import annotations

import argparse
import logging
import sys

log = logging.getLogger(__name__)

NOT_YET = (
    ("the devices wired into the terminal (their drivers and simulated twins exist: egm sim DEVICE)",
     "the terminal issue"),
    ("money flow, tilts from devices, service functions around the cabinet state machine "
     "(the machine exists: egm diagram cabinet)", "the terminal issue"),
    ("host link and the embedded reference host", "the host-link issue"),
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
    from firmware.games.registry import available

    cfg = load_config(args.config)
    if args.game and args.game not in cfg.games.enabled:
        raise UsageError(f"game {args.game!r} is not enabled; enabled: {', '.join(cfg.games.enabled)}")
    if args.autoplay is not None and args.autoplay < 0:
        raise UsageError("--autoplay takes a number of rounds >= 0")
    built = set(available())
    playable = [g for g in cfg.games.enabled if g in built]
    game_id = args.game or (cfg.games.default if cfg.games.default in built else None)
    if game_id is None and playable:
        game_id = playable[0]
    if game_id is not None and game_id not in built:
        raise UsageError(f"game {game_id!r} is not built yet; playable: {', '.join(playable) or 'none'}")

    out = sys.stdout
    out.write(f"egm terminal {cfg.terminal.id} at {cfg.terminal.venue}\n")
    out.write("power-up self-test:\n")
    out.write(f"  {'configuration':<24s} ok\n")
    for name, verdict in _rng_power_up_test(cfg):
        out.write(f"  {name:<24s} {verdict}\n")
    _math_check(cfg, out, args.state_dir)
    out.write(f"games: {', '.join(playable) or 'none'} playable")
    missing = [g for g in cfg.games.enabled if g not in built]
    out.write(f"; not built yet: {', '.join(missing)}\n" if missing else "\n")
    if args.autoplay is not None and game_id:
        _autoplay(cfg, game_id, args.autoplay, out, args.state_dir)
    out.write("not built yet (the terminal cannot take money until these land):\n")
    for what, where in NOT_YET:
        out.write(f"  - {what}: {where}\n")
    if not args.autoplay:
        out.write("play rounds now with `egm round GAME` or `egm run --sim --autoplay N [--state-dir DIR]`.\n")
    out.flush()
    return 0


def _autoplay(cfg, game_id: str, rounds: int, out, state_dir: str | None) -> None:
    """Rounds through the real kernel and critical memory, with the production RNG."""
    from pathlib import Path

    import platformdirs

    from firmware.kernel.limits import BetLimits
    from firmware.ledger.driver import autoplay
    from firmware.ledger.ledger import Ledger
    from firmware.rng.service import RngService

    path = Path(state_dir) if state_dir else Path(platformdirs.user_data_dir("egm")) / cfg.terminal.id
    rng = RngService.production((cfg.rng.personalization + ":" + cfg.terminal.id).encode("utf-8"),
                                reseed_interval=cfg.rng.reseed_interval)
    with Ledger.open(path, denomination=cfg.terminal.denomination) as ledger:
        for problem in ledger.repairs:
            out.write(f"critical memory repaired: {problem}\n")
        ledger.event("power_up")

        def show(record) -> None:
            out.write(f"  round {record['round_id'][:12]} {record['game']}: net {record['net']:+d}\n")

        result = autoplay(ledger, game_id=game_id, options_table=cfg.games.options.get(game_id, {}),
                          limits=BetLimits.from_config(cfg.limits), seats=cfg.games.seats, rng=rng,
                          rounds=rounds, on_round=show)
        ledger.event("power_down")
        if result.resumed:
            out.write(f"resumed round {result.resumed} from its journal\n")
        out.write(f"autoplay: {rounds} round(s) of {game_id}; credits {result.credits_cents} cents; "
                  f"critical memory in {path}\n")


def _math_check(cfg, out, state_dir: str | None) -> None:
    """Every enabled game's PAR against the jurisdiction profile; a refused wager stops the start."""
    from pathlib import Path

    import platformdirs

    from firmware.errors import EgmError
    from firmware.math.profile import check_configuration, load_profile

    profile = load_profile(cfg.math.profile)
    cache_dir = (Path(state_dir) if state_dir else Path(platformdirs.user_cache_dir("egm"))) / "par"
    findings = check_configuration(cfg, profile, cache_dir=cache_dir)
    refused = [f for f in findings if f.verdict == "refused"]
    unproven = [f for f in findings if f.verdict == "unproven"]
    verdict = "REFUSED" if refused else f"ok ({len(findings)} wagers" + (
        f", {len(unproven)} within Monte Carlo error of a limit)" if unproven else ")")
    out.write(f"  {'game math (' + profile.name + ')':<24s} {verdict}\n")
    for f in unproven:
        log.info("%s", f.message)
    if refused:
        for f in refused:
            out.write(f"    refused: {f.message}\n")
        out.flush()
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise EgmError(f"configuration refused: {refused[0].message}{more}")


def _rng_power_up_test(cfg) -> list[tuple[str, str]]:
    """Known-answer test and a health-tested instantiation, as the cabinet will do at power-up."""
    from firmware.rng.power_up import power_up_self_test

    return power_up_self_test(personalization=cfg.rng.personalization + ":" + cfg.terminal.id)
