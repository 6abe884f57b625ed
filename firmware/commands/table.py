"""``egm table serve|demo``: the live table's controller (issue 24, docs/protocols/table.md).

``serve`` runs the table controller: its critical memory in ``--state-dir``, the stations' link on
``--listen`` (mutual TLS, the table's PKI), the cards from the certified RNG, the card-reading shoe
(with ``--sim``: its simulated twin, drawn by a simulated dealer) or a stacked list (``--stack
FILE``), until SIGTERM/SIGINT. The dealer's screen (``firmware.ui``'s, when the build has one) is
given the controller (:func:`dealer_screen`); ``--headless`` runs without it.

``demo`` makes a development PKI, starts a controller and N player stations (``egm run --sim
--headless --autoplay``, each its own process) on loopback, waits until R rounds are settled, stops
them all and reports the money and the latency (``firmware.commands._table_demo``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from firmware.commands._common import emit_json, game_id, game_ids, json_argument, positive_int

log = logging.getLogger("egm.table")

#: The module of the dealer's screen (``firmware.ui``), when the build has one: its
#: ``run_dealer_screen(provider, actions, headless=, stop=, on_close=)`` draws ``provider()`` (the
#: controller's snapshot) and calls the controller's operator methods (``actions``).
DEALER_SCREEN_MODULE = "firmware.ui.livetable.dealer"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("table", help="the live table: its controller (serve) and a demonstration (demo)")
    tsub = p.add_subparsers(dest="table_command", metavar="ACTION")
    tsub.required = True

    s = tsub.add_parser("serve", help="run the table controller until SIGTERM/SIGINT")
    s.add_argument("--config", help="configuration file (TOML; [table], [games.options], [limits])")
    s.add_argument("--state-dir", required=True, metavar="DIR", help="the controller's critical memory")
    s.add_argument("--listen", metavar="HOST:PORT", help="where the stations connect (default: [table] listen)")
    s.add_argument("--pki", metavar="DIR", help="the table's PKI (default: [table] pki, else DIR/pki)")
    s.add_argument("--dev-pki", metavar="STATION", action="append", default=[],
                   help="make a development PKI in --pki with a certificate for STATION (repeatable)")
    s.add_argument("--game", type=game_id, choices=game_ids(), metavar="GAME",
                   help=f"the table's game (default: [table] game): {', '.join(game_ids())}")
    s.add_argument("--source", choices=("rng", "physical", "stacked"),
                   help="the cards: the certified RNG, the card-reading shoe, or --stack")
    s.add_argument("--stack", metavar="FILE", help="cards dealt in order from the first round (implies stacked)")
    s.add_argument("--sim", action="store_true", help="with --source physical: the shoe's simulated twin, "
                   "drawn by a simulated dealer")
    s.add_argument("--seed", help="seed the RNG (a demonstration: not the certified RNG's entropy)")
    s.add_argument("--betting-window", type=float, metavar="S", help="seconds the betting window stays open")
    s.add_argument("--headless", action="store_true", help="no dealer's screen")
    json_argument(s)
    s.set_defaults(func=_serve)

    d = tsub.add_parser("demo", help="a controller and N stations on loopback for R rounds, then the figures")
    d.add_argument("--stations", type=_stations, default=3, metavar="N", help="player stations, 1-7 (default 3)")
    d.add_argument("--rounds", type=positive_int, default=10, metavar="R", help="rounds to settle (default 10)")
    d.add_argument("--state-dir", required=True, metavar="DIR", help="DIR/pki, DIR/table, DIR/station-k")
    d.add_argument("--seed", default=None, help="seed the controller's RNG (default: the certified RNG)")
    d.add_argument("--game", type=game_id, choices=game_ids(), metavar="GAME", default="baccarat-war",
                   help=f"the table's game (default baccarat-war): {', '.join(game_ids())}")
    d.add_argument("--betting-window", type=float, default=3.0, metavar="S",
                   help="seconds the window stays open (it closes once every station has bet; default 3)")
    d.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a rules option of the table's game for the controller and every station, e.g. "
                        "banking=player for double-super-9 (repeatable)")
    d.add_argument("--timeout", type=float, default=600.0, metavar="S", help="give up after S seconds (default 600)")
    json_argument(d)
    d.set_defaults(func=_demo)


def _stations(text: str) -> int:
    n = positive_int(text)
    if n > 7:
        raise argparse.ArgumentTypeError("a table has at most 7 stations")
    return n


def serve_settings(cfg: Any, args: argparse.Namespace) -> Any:
    """``[table]`` with the command line's choices, validated as the section is."""
    from pydantic import ValidationError

    from firmware.config.schema import TableSection
    from firmware.errors import UsageError

    changes: dict[str, Any] = {}
    if args.listen:
        changes["listen"] = args.listen
    if args.game:
        changes["game"] = args.game
    if args.betting_window is not None:
        changes["betting_window_s"] = args.betting_window
    try:
        return TableSection.model_validate({**cfg.table.model_dump(), **changes})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"{'.'.join(str(x) for x in first['loc'])}: {first['msg']}") from None


def dealer_screen() -> Callable[[Any, threading.Event], None] | None:
    """The hook of the dealer's screen: ``show(controller, stop)`` runs it in a window until ``stop``
    is set (closing the window sets it), or None when this build has no dealer's screen."""
    try:
        module = importlib.import_module(DEALER_SCREEN_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name is not None and DEALER_SCREEN_MODULE.startswith(exc.name):
            return None                      # this build has no dealer's screen
        raise
    run_dealer_screen = module.run_dealer_screen

    def show(controller: Any, stop: threading.Event) -> None:
        run_dealer_screen(controller.snapshot, controller, headless=False, stop=stop.is_set, on_close=stop.set)

    return show


def _serve(args: argparse.Namespace) -> int:
    from firmware.cards.card import parse_cards
    from firmware.commands._common import checked_state_dir, load_terminal_config
    from firmware.errors import UsageError
    from firmware.ledger.errors import CriticalMemoryError
    from firmware.ledger.ledger import Ledger
    from firmware.table.build import build_controller
    from firmware.table.identity import ensure_table_pki
    from firmware.table.server import TableServer

    cfg = load_terminal_config(args.config)
    settings = serve_settings(cfg, args)
    state = checked_state_dir(args.state_dir, create=True)
    source = "stacked" if args.stack else args.source or settings.source
    stack = None
    if args.stack:
        try:
            stack = [str(c) for c in parse_cards(Path(args.stack).read_text(encoding="utf-8"))]
        except OSError as exc:
            raise UsageError(f"--stack {args.stack}: {exc.strerror or exc}") from None
    elif source == "stacked":
        raise UsageError("--source stacked needs --stack FILE")
    if source == "physical" and not args.sim:
        raise UsageError("--source physical needs the shoe: --sim (its simulated twin)")
    pki = Path(args.pki or settings.pki or state / "pki")
    if args.dev_pki:
        pki = ensure_table_pki(pki.parent if pki.name == "pki" else pki, settings.controller_name, args.dev_pki)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    rig = _sim_shoe(int(args.seed) if args.seed and args.seed.isdigit() else 0) if source == "physical" else None
    try:
        with Ledger.open(state, denomination=cfg.terminal.denomination) as ledger:
            controller = build_controller(ledger, settings, cfg=cfg, source=source, stack=stack,
                                          shoe=rig.device("shoe") if rig is not None else None,
                                          seed=args.seed)
            if rig is not None:
                controller.cards.card_wanted = rig.simulator("shoe").draw
            server = TableServer(controller, pki, settings.listen)
            server.on_halt = stop.set
            host, port = server.start()
            started = {"table_id": settings.table_id, "game": controller.game.id, "source": source,
                       "listen": f"{host}:{port}", "state_dir": str(state), "pki": str(pki)}
            if args.json:
                emit_json(started)
            else:
                print(f"table {settings.table_id} ({controller.game.name}, {source}) listening on {host}:{port}")
            sys.stdout.flush()
            try:
                screen = None if args.headless else dealer_screen()
                if screen is None:
                    if not args.headless:
                        log.info("no dealer's screen in this build: running headless")
                    stop.wait()
                else:
                    screen(controller, stop)
            finally:
                server.stop()
            if server.halted:
                raise CriticalMemoryError(f"the table stopped: {server.halted}")
    finally:
        if rig is not None:
            rig.close()
    return 0


def _sim_shoe(seed: int) -> Any:
    """The card-reading shoe's simulated twin on a pty, opened, loaded with 8 decks shuffled from
    ``seed`` (the simulator's shuffle; ``egm simctl``-style faults through ``rig.simulator``)."""
    from hal.registry import parse_spec
    from sim_hardware.rig import SimRig

    spec = parse_spec("shoe", "sim:shoe")
    rig = SimRig({"shoe": spec})
    try:
        rig.device("shoe").open()
        rig.simulator("shoe").shuffle(seed)
    except BaseException:
        rig.close()
        raise
    return rig


def _demo(args: argparse.Namespace) -> int:
    from firmware.commands._table_demo import TableDemo, print_report
    from firmware.errors import UsageError
    from firmware.games.errors import GameError

    try:
        demo = TableDemo(Path(args.state_dir), stations=args.stations, game=args.game, seed=args.seed,
                         betting_window_s=args.betting_window, options=args.option)
    except GameError as exc:
        raise UsageError(f"--option: {exc}") from None
    report = demo.run(args.rounds, timeout_s=args.timeout)
    if args.json:
        emit_json(report)
    else:
        print_report(report)
    return 0 if report["ok"] else 1
