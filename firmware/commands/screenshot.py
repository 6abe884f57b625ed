"""``egm screenshot SCREEN --out FILE.png [--game GAME] [--config FILE] [--option KEY=VALUE] [--size WxH]
[--json]``: a screen, headless; ``egm screenshot live --state-dir DIR --out FILE.png [--size WxH]
[--json]``: the running terminal's screen as it is now.

Renders a named screen from a demonstration state (``firmware.ui.demo``), its game played with the
options the terminal plays (the default configuration, or ``--config``'s, then ``--option``), through
the same drawing code the cabinet runs, on an off-screen surface (no display needed), and writes it as PNG. With
``--json`` it prints what it wrote and where each named element of the screen is, in the image's
pixels. Bad input (an unknown screen or game, a size the layouts cannot draw, an output that cannot
be written) is one line on stderr and a non-zero exit; nothing is written.

``live`` asks the terminal running on ``--state-dir`` (its control socket's ``screenshot`` op): a
copy of its window's frame, or, headless, its state drawn off screen by the same screens
(``firmware.ui.live``). No terminal running there: one line, a non-zero exit, no file.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

SCREENS = ("table", "war", "paytable", "help", "service", "recall", "calibration", "attract", "live")
#: The screen that is not drawn here but asked of the running terminal.
LIVE = "live"


def register(sub: argparse._SubParsersAction) -> None:
    from firmware.commands._common import game_id, game_ids, state_dir_argument
    from firmware.commands.play import _option_arguments

    p = sub.add_parser("screenshot", help="render a screen (table, war, paytable, help, attract...) to a PNG",
                       description="The game is played with the terminal's default configuration's options "
                                   "(as egm run, egm par and egm simulate), or --config's, then --option's.")
    p.add_argument("screen", metavar="SCREEN", help=", ".join(SCREENS))
    p.add_argument("--out", required=True, metavar="FILE.png", help="the PNG to write")
    p.add_argument("--game", default="baccarat-war", type=game_id, choices=game_ids(), metavar="GAME",
                   help=f"game id (default baccarat-war): {', '.join(game_ids())}")
    _option_arguments(p)
    p.add_argument("--size", default="1920x1080", help="WIDTHxHEIGHT in pixels (default 1920x1080)")
    p.add_argument("--page", type=int, default=1, help="page of the help or pay table (default 1)")
    p.add_argument("--json", action="store_true", help="print the file and the screen's named regions")
    state_dir_argument(p, "live: the running terminal's --state-dir (its control.sock)")
    p.set_defaults(func=_screenshot)


def _screenshot(args: argparse.Namespace) -> int:
    from firmware.errors import UsageError

    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    from firmware.games.registry import GAMES
    from firmware.ui.demo import demo_games
    from firmware.ui.layout import Scaler, SizeError, parse_size

    if args.screen not in SCREENS and args.screen != "games":
        raise UsageError(f"unknown screen {args.screen!r}; screens are {', '.join(SCREENS)}")
    if args.screen == LIVE:
        return _live(args)
    if args.state_dir is not None:
        raise UsageError(f"--state-dir is for the live screen, not {args.screen!r}")
    if args.game not in GAMES:
        raise UsageError(f"unknown game {args.game!r}; games are {', '.join(GAMES)}")
    games = demo_games()
    if args.game not in games:
        raise UsageError(f"game {args.game!r} has no screens yet; games with screens: {', '.join(games)}")
    try:
        size = parse_size(args.size)
    except SizeError as exc:
        raise UsageError(f"--size: {exc}") from None
    if args.page < 1:
        raise UsageError(f"--page counts from 1, not {args.page}")
    config = _config(args)
    out = Path(args.out)
    _check_output(out)

    import pygame

    from firmware.ui.render import PageError, render

    started = time.perf_counter()
    try:
        surface, frame = render(args.screen, size, args.game, page=args.page - 1, config=config)
    except PageError as exc:
        raise UsageError(f"--page: {exc}") from None
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp.png")
    try:
        pygame.image.save(surface, str(tmp))
        tmp.replace(out)
    except (OSError, pygame.error) as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {out}: {exc}") from None
    if args.json:
        from firmware.commands._common import emit_json

        scaler = Scaler(*size)
        emit_json({"screen": args.screen, "game": args.game, "size": list(size), "out": str(out),
                   "regions": {name: list(scaler.rect(r)) for name, r in sorted(frame.regions.items())},
                   "actions": sorted({h.name for h in frame.hits}),
                   "seconds": round(time.perf_counter() - started, 3)})
    return 0


def _config(args: argparse.Namespace):
    """The configuration the screen is drawn for: ``--config`` (else the terminal's default), with
    the game's options as ``egm par`` and ``egm simulate`` take them (``--option`` last)."""
    from firmware.commands.play import _configured
    from firmware.errors import UsageError

    cfg, options = _configured(args.game, args)
    if args.game not in cfg.games.enabled:
        raise UsageError(f"game {args.game!r} is not enabled in {args.config}; enabled: "
                         f"{', '.join(cfg.games.enabled)}")
    tables = {**cfg.games.options, args.game: options.to_json()}
    return cfg.model_copy(update={"games": cfg.games.model_copy(update={"options": tables})})


def _check_output(out: Path) -> None:
    """The output must be a .png file in a directory that exists and can be written."""
    from firmware.errors import UsageError

    if out.suffix.lower() != ".png":
        raise UsageError(f"--out must name a .png file, not {str(out)!r}")
    if out.is_dir():
        raise UsageError(f"--out {out} is a directory")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"cannot write {out}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise UsageError(f"cannot write {out}: permission denied")


def _live(args: argparse.Namespace) -> int:
    """The running terminal's screen now: asked through its control socket, written as PNG."""
    import base64

    from firmware.cabinet.control import request
    from firmware.commands._common import checked_state_dir, chosen_state_dir
    from firmware.errors import UsageError
    from firmware.ui.layout import SizeError, parse_size

    for given, name in ((args.config, "--config"), (args.option, "--option"), (args.page != 1, "--page")):
        if given:
            raise UsageError(f"{name} is for the demonstration screens: the live screen shows what the terminal shows")
    try:
        w, h = parse_size(args.size)
    except SizeError as exc:
        raise UsageError(f"--size: {exc}") from None
    out = Path(args.out)
    _check_output(out)
    state = checked_state_dir(chosen_state_dir(args))
    started = time.perf_counter()
    shot = request(state, "screenshot", {"size": f"{w}x{h}"})
    data = base64.b64decode(shot["png_base64"])
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp.png")
    try:
        tmp.write_bytes(data)
        tmp.replace(out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {out}: {exc}") from None
    if args.json:
        from firmware.commands._common import emit_json

        emit_json({"screen": LIVE, "shown": shot["screen"], "state": shot["state"], "lab": shot.get("lab"),
                   "size": [shot["width"], shot["height"]], "out": str(out), "regions": shot.get("regions", {}),
                   "seconds": round(time.perf_counter() - started, 3)})
    return 0
