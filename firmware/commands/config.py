"""``egm config``: check a configuration file, show the effective configuration, print the defaults."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("config", help="check, show or print the default configuration (TOML)")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION")
    csub.required = True

    check = csub.add_parser("check", help="validate a configuration file")
    check.add_argument("file", metavar="FILE", help="the configuration file (TOML) to check")
    check.add_argument("--profile", help="jurisdiction profile (built-in name or TOML file; "
                       "default: the configuration's math.profile)")
    check.add_argument("--no-math", action="store_true",
                       help="only validate the file; skip the PAR check against the profile")
    check.add_argument("--json", action="store_true", help="print the findings as JSON")
    check.set_defaults(func=_check)

    show = csub.add_parser("show", help="print the effective configuration as JSON")
    show.add_argument("file", nargs="?", help="configuration file (default: built-in defaults)")
    show.set_defaults(func=_show)

    default = csub.add_parser("default", help="print the documented default configuration file")
    default.set_defaults(func=_default)


def _check(args: argparse.Namespace) -> int:
    from firmware.commands._common import load_terminal_config

    cfg = load_terminal_config(args.file)
    if args.no_math:
        print(f"{args.file}: ok (terminal {cfg.terminal.id}, {len(cfg.games.enabled)} game(s) enabled)")
        return 0
    import platformdirs

    from firmware.commands._common import emit_json
    from firmware.math.profile import check_configuration, load_profile

    profile = load_profile(args.profile or cfg.math.profile)
    from pathlib import Path

    findings = check_configuration(cfg, profile, cache_dir=Path(platformdirs.user_cache_dir("egm")) / "par")
    refused = [f for f in findings if f.verdict == "refused"]
    if args.json:
        emit_json({"file": args.file, "profile": profile.name, "ok": not refused,
                   "findings": [f.to_json() for f in findings]})
    else:
        for f in findings:
            print(f"{f.verdict:<9s} {f.message}")
        print(f"{args.file}: {'REFUSED' if refused else 'ok'} (terminal {cfg.terminal.id}, "
              f"{len(cfg.games.enabled)} game(s) enabled, profile {profile.name})")
    return 1 if refused else 0


def _show(args: argparse.Namespace) -> int:
    from firmware.commands._common import emit_json, load_terminal_config

    emit_json(load_terminal_config(args.file).model_dump(mode="json"))
    return 0


def _default(args: argparse.Namespace) -> int:
    from firmware.config import default_toml

    sys.stdout.write(default_toml())
    return 0
