"""``egm run``: start the terminal.

Power-up: the configuration is loaded and validated; the RNG's power-up self-test runs (known-answer
test, SP 800-90B health tests on fresh entropy); every enabled game's PAR sheet is checked against
the jurisdiction profile (a refused configuration stops the start); critical memory is opened and
verified; the devices are created from the configuration through the HAL registry (``--sim``:
every fitted device's simulated twin on a pty, ``sim_hardware.rig``); then the cabinet runs
(``firmware.cabinet.terminal``) until it is stopped (SIGINT/SIGTERM, ``egm simctl stop``) or,
with ``--autoplay ROUNDS``, until that many rounds are played. ``egm simctl`` reaches the running
terminal through ``<state-dir>/control.sock``.

Started by systemd (``deploy/cabinet/egm-terminal.service``, ``Type=notify``), it says ``READY=1``
once the cabinet reached attract with its self-test passed, pings the watchdog from the main loop and
reports its state as ``STATUS=`` (``firmware.cabinet.readiness``, ``deploy/cabinet/README.md``).

``--sim`` also gives the RNG an entropy source a test can make fail (``firmware.rng.switchable``;
``egm simctl rng entropy stuck|ok``, ``rng reseed``: ``firmware.cabinet.sim_rng``), and
``--sim-door-open DOOR`` powers the simulated I/O board up with DOOR open (opened while off).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import time
from pathlib import Path

log = logging.getLogger(__name__)



def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="start the terminal (with --sim: simulated hardware)")
    p.add_argument("--sim", action="store_true", help="simulated devices and an embedded host")
    p.add_argument("--headless", action="store_true", help="no screens, even with a display")
    p.add_argument("--size", default="1920x1080", metavar="WxH", help="the screens' size (default 1920x1080)")
    p.add_argument("--fullscreen", action="store_true", help="the screens full screen (a cabinet)")
    p.add_argument("--state-dir", metavar="DIR",
                   help="critical-memory directory (default: the platform's data directory, egm/TERMINAL-ID)")
    p.add_argument("--config", help="configuration file (TOML; default: built-in defaults)")
    p.add_argument("--autoplay", type=int, metavar="ROUNDS", help="play ROUNDS rounds automatically")
    p.add_argument("--sas", metavar="PORT", help="open the SAS port: a serial device, or 'pty' (a pseudo-terminal "
                   "whose path is printed as 'sas: PATH'); overrides [sas] port and turns SAS on")
    p.add_argument("--sas-address", type=int, metavar="N", help="the machine's SAS address, 1-127 (default: [sas] address)")
    from hal.events import Door

    p.add_argument("--sim-door-open", action="append", default=[], choices=[d.value for d in Door], metavar="DOOR",
                   help="with --sim: the simulated I/O board powers up with DOOR open, as if it was opened while "
                        f"the cabinet was off (repeatable; {', '.join(d.value for d in Door)})")
    from firmware.commands._common import game_id, game_ids

    p.add_argument("--game", type=game_id, choices=game_ids(), metavar="GAME",
                   help=f"the game to start with (default: the configuration's games.default): {', '.join(game_ids())}")
    p.add_argument("--update-dir", metavar="DIR",
                   help="the directory backend's A/B pair of the field update (docs/update.md; overrides [update]): "
                        "the running version and the update's "
                        "events go into critical memory, and a trial slot is committed once attract is reached "
                        "with the self-tests passed (rolled back if they fail)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from firmware.commands._common import checked_state_dir, default_state_dir, load_terminal_config
    from firmware.errors import UsageError
    from firmware.games.registry import available

    if args.sim_door_open and not args.sim:
        raise UsageError("--sim-door-open needs --sim (it opens a door of the simulated I/O board)")
    cfg = _with_sas_options(load_terminal_config(args.config), args)
    if args.sim_door_open and "io_board" not in _device_specs(cfg, sim=True):
        raise UsageError("--sim-door-open needs the I/O board ([devices] io_board is none)")
    path = Path(args.state_dir) if args.state_dir else default_state_dir(cfg.terminal.id)
    checked_state_dir(path, create=True)           # before the self-test: a bad one wastes no start-up
    if args.game and args.game not in cfg.games.enabled:
        raise UsageError(f"game {args.game!r} is not enabled; enabled: {', '.join(cfg.games.enabled)}")
    if args.autoplay is not None and args.autoplay < 0:
        raise UsageError("--autoplay takes a number of rounds >= 0")
    if cfg.sas.enabled and cfg.sas.port != "pty" and not Path(cfg.sas.port).exists():
        # before the self-test and the power-up: a missing port wastes no start and records nothing
        raise UsageError(f"sas: cannot open the SAS port {cfg.sas.port}: No such file or directory")
    from firmware.ui.layout import SizeError, parse_size

    try:
        args.size = parse_size(args.size)
    except SizeError as exc:
        raise UsageError(str(exc)) from None
    built = set(available())
    playable = [g for g in cfg.games.enabled if g in built]
    game_id = args.game or (cfg.games.default if cfg.games.default in built else playable[0])

    from firmware.cabinet.readiness import ServiceNotifications
    from firmware.cabinet.sd_notify import Notifier

    # systemd (deploy/cabinet/egm-terminal.service): READY=1 at attract, watchdog pings, STATUS=
    notify = ServiceNotifications(Notifier.from_environment())
    notify.notifier.status("power-up self-test")     # no ping yet: TimeoutStartSec= covers the power-up
    try:
        return _start(cfg, args, path, game_id, playable, notify)
    finally:
        notify.stopping()


def _start(cfg, args, path: Path, game_id: str, playable: list[str], notify) -> int:
    out = sys.stdout
    out.write(f"egm terminal {cfg.terminal.id} at {cfg.terminal.venue}\n")
    out.write("power-up self-test:\n")
    out.write(f"  {'configuration':<24s} ok\n")
    rng_results = _rng_power_up_test(cfg)
    for name, verdict in rng_results:
        out.write(f"  {name:<24s} {verdict}\n")
    _math_check(cfg, out, args.state_dir)
    out.write(f"games: {', '.join(playable)} playable\n")
    out.flush()
    while (halted := _terminal(cfg, args, game_id, rng_results, path, out, notify)) is not None:
        # Critical memory failed while the terminal ran (a write failed, or the host's witness
        # showed it behind): everything is closed; the cabinet stays up in the lock, as at power-up.
        if not _memory_lock(cfg, args, path, halted, out, notify):
            raise halted
        out.write("critical memory: RAM cleared by a technician; the terminal starts\n")
        out.flush()
    return 0


def _with_sas_options(cfg, args):
    """``cfg`` with ``--sas`` / ``--sas-address`` applied (validated as the [sas] section is)."""
    if args.sas is None and args.sas_address is None:
        return cfg
    from pydantic import ValidationError

    from firmware.config.schema import SasSection
    from firmware.errors import UsageError

    changes = {"enabled": True, "port": args.sas} if args.sas is not None else {}
    if args.sas_address is not None:
        changes["address"] = args.sas_address
    try:
        sas = SasSection.model_validate({**cfg.sas.model_dump(), **changes})
    except ValidationError as exc:
        first = exc.errors()[0]
        option = "--sas-address" if first["loc"] == ("address",) else "--sas"
        raise UsageError(f"{option}: {first['msg']}") from None
    return cfg.model_copy(update={"sas": sas})


def _device_specs(cfg, *, sim: bool) -> dict:
    from firmware.config.schema import DEVICE_FIELDS
    from hal.registry import BackendSpec, parse_spec

    specs = {}
    for slot, device_class in DEVICE_FIELDS.items():
        spec = parse_spec(device_class, getattr(cfg.devices, slot))
        if spec.backend is None:
            continue
        if sim and not spec.simulated:
            spec = BackendSpec(device_class, spec.backend, True)
        specs[slot] = spec
    return specs


def _terminal(cfg, args, game_id: str, rng_results, path: Path, out, notify):
    """Run the terminal until it stops (None) or critical memory fails while it runs (the
    :class:`~firmware.ledger.errors.CriticalMemoryError`, once every device and the host link are
    closed)."""
    from firmware.cabinet.autoplay import Autoplay
    from firmware.cabinet.control import ControlServer, socket_path
    from firmware.cabinet.selftest import check_software, run_self_test, terminal_rng
    from firmware.cabinet.service import ServiceApi
    from firmware.cabinet.sim_rng import SimRng
    from firmware.cabinet.terminal import Devices, Terminal
    from firmware.cashless.vouchers import VoucherBook
    from firmware.errors import EgmError
    from firmware.ledger.errors import CriticalMemoryError
    from firmware.rng.switchable import SwitchableSource
    from hal import registry
    from hal.events import Door
    from sim_hardware.rig import SimRig
    from sim_hardware.twins import SIMULATORS

    specs = _device_specs(cfg, sim=args.sim)
    problems: dict[str, str] = {}
    twins = {s: sp for s, sp in specs.items() if sp.simulated}
    for slot, spec in list(twins.items()):
        if (spec.device_class, spec.backend) not in SIMULATORS:      # evdev: no pty twin
            problems[slot] = f"{spec.backend} has no simulated twin; the device is left out"
            del twins[slot]
    # --sim: the RNG reads an entropy source a test can make stuck (`simctl rng entropy stuck`)
    entropy_source = SwitchableSource() if args.sim else os.urandom
    rng = terminal_rng(cfg, entropy_source)
    with contextlib.ExitStack() as stack:
        rig = SimRig(twins, cfg.devices.settings, doors_open=[Door(d) for d in args.sim_door_open])
        stack.callback(rig.close)
        devices = Devices()
        for slot, spec in specs.items():
            if slot in twins:
                setattr(devices, slot, rig.device(slot))
            elif not spec.simulated:
                try:
                    device = registry.create(spec.device_class, spec.backend, slot, cfg.devices.settings.get(slot, {}))
                except EgmError as exc:
                    problems[slot] = str(exc)
                    continue
                stack.callback(device.close)
                setattr(devices, slot, device)
        ledger = stack.enter_context(_open_ledger(cfg, args, path, out, notify))
        for problem in ledger.repairs:
            out.write(f"critical memory repaired: {problem}\n")
        vouchers = VoucherBook(ledger, terminal_id=cfg.terminal.id, expiry_days=cfg.money.voucher_expiry_days,
                               offline_redemption=cfg.money.offline_redemption)

        def self_test(terminal: Terminal) -> dict[str, str]:
            report = run_self_test(software=lambda: check_software(cfg), ledger=ledger,
                                   rng_results=rng_results, device_problems=problems,
                                   doors_opened_while_off=terminal.doors_opened_while_off,
                                   devices_not_connected=terminal.devices_not_connected())
            software = report.results["software_signature"]
            service.set_software_result({"ok": software is None, "reason": software or "verified"})
            for name, verdict in report.lines():
                if name != "rng_health":
                    out.write(f"  {name.replace('_', ' '):<24s} {verdict}\n")
            for note in report.notes:
                out.write(f"    {note}\n")
            return report.failures

        def show(record) -> None:
            out.write(f"  round {record['round_id'][:12]} {record['game']}: net {record['net']:+d}\n")
            out.flush()

        autoplay = None
        if args.autoplay is not None:
            if "bill_validator" not in twins:
                raise EgmError("--autoplay needs the simulated bill validator (run with --sim)")
            validator = rig.simulator("bill_validator")
            autoplay = Autoplay(args.autoplay, validator.insert_note,
                                cashout_every=cfg.cabinet.autoplay_cashout_every,
                                note_values=list(cfg.money.notes_cents), clock=time.monotonic)
        on_step = autoplay
        update_watch = None
        if args.update_dir or cfg.update.backend != "none":
            from firmware.commands._update_watch import UpdateWatch
            from firmware.update.backend import make_backend

            backend = make_backend("directory", args.update_dir) if args.update_dir else \
                make_backend(cfg.update.backend, cfg.update.dir)
            on_step = update_watch = UpdateWatch(backend, then=autoplay)
        hosted = None
        if cfg.host.enabled:
            from firmware.commands import _hostlink

            hosted = _hostlink.HostSide(cfg, path, ledger)
        # The composition root: everything the terminal works with is passed in here
        # (docs/architecture.md, "The composition root").
        terminal = Terminal(cfg, ledger, rng, devices, vouchers, self_test=self_test, game=game_id,
                            service=ServiceApi.from_config, hostlink=hosted.link if hosted else None,
                            sas=_sas_factory(cfg, args), capture=_headless_capture(args),
                            on_round=show, on_step=_each_step(notify.step, on_step),
                            entropy_source=entropy_source)
        service = terminal.service
        service.apply_stored_config()
        if isinstance(entropy_source, SwitchableSource):
            rig.add_control("rng", SimRng(terminal, entropy_source).control)
        terminal.register(sim=lambda words: rig.control(words))
        _signals(terminal)                 # before the socket: a SIGTERM once it exists is a power-down
        server = ControlServer(terminal, socket_path(path)).start()
        stack.callback(server.close)
        started = time.monotonic()
        failures = terminal.power_up()
        if update_watch is not None:
            update_watch.power_up(terminal, failures, out)
        notify.step(terminal)              # READY=1 now if the self-test passed and attract is reached
        out.write(f"cabinet: {terminal.cabinet.state.name}"
                  f"{'; tilts: ' + ', '.join(t.key for t in terminal.cabinet.active_tilts) if terminal.cabinet.active_tilts else ''}"
                  f" ({time.monotonic() - started:.2f} s from power-up); control: egm simctl --state-dir {path}\n")
        if terminal.sas is not None:
            stack.callback(terminal.sas.close)
            where = terminal.sas.status()["port"]
            if cfg.sas.port == "pty":
                out.write(f"sas: {where}\n")
                out.flush()
        if hosted is not None:
            link = terminal.hostlink
            _hostlink.start(hosted, link, stack)
            where = f"embedded host in {hosted.host_dir}" if hosted.host_dir else "host elsewhere"
            out.write(f"host link: {hosted.broker_url} ({where}); reports outstanding: "
                      f"{len(link.outbox)}\n")
        if terminal.table is not None:
            _table_link(cfg, terminal, path, stack, out)
        from firmware.ui.service.calibration import apply_stored_calibration

        if apply_stored_calibration(terminal) is not None:
            out.write("touchscreen: the stored calibration applied\n")
        screens = _screens(terminal, args, rig if twins else None, out)
        _print_started(out, cfg, specs, rig, problems, hosted, path, socket_path(path), screens, args,
                       terminal.sas)
        out.flush()
        if args.autoplay == 0:
            terminal.stop()
        idle_wait = 0.001 if args.autoplay else 0.02
        try:
            if screens is None:
                terminal.run(idle_wait=idle_wait)
            else:
                _run_with_screens(terminal, screens, args, idle_wait)
        except CriticalMemoryError as exc:
            out.write(f"critical memory: HALTED: {exc}\n")
            out.flush()
            return exc
        terminal.ledger.event("power_down")
        report = ledger.meters_report()
        if args.autoplay is not None:
            from firmware.ledger.ledger import accounting_difference

            difference = accounting_difference(ledger.meters)
            out.write(f"autoplay: {terminal.rounds_played} round(s) of {game_id}; "
                      f"{terminal.notes_stacked} note(s) in, {terminal.tickets_printed} ticket(s) out; "
                      f"credits {report['credits']} cents; accounting identity "
                      f"{'holds' if difference == 0 else f'OFF BY {difference} cents'}; "
                      f"critical memory in {path}\n")
            if difference:
                raise EgmError(f"the accounting identity is off by {difference} cents")


def _table_link(cfg, terminal, path: Path, stack, out) -> None:
    """A player station (``[table] controller`` set): its link to the table controller
    (``firmware.table``), the port of the terminal's table rounds, started once it is powered up."""
    from firmware.commands._hostlink import pki_dir
    from firmware.table.client import TableClient

    table = cfg.table
    client = TableClient(terminal.table, station_id=cfg.terminal.id,
                         pki_dir=Path(table.pki) if table.pki else pki_dir(cfg, path), controller=table.controller,
                         controller_name=table.controller_name, table_id=table.table_id, seat=table.seat,
                         link_timeout_s=table.link_timeout_s)
    terminal.connect_table(client)
    client.start()
    stack.callback(client.stop)
    out.write(f"table link: {table.table_id} at {table.controller} as {cfg.terminal.id}\n")


def _headless_capture(args):
    """The terminal's screenshot while no screens are open (``firmware.ui.live``)."""
    from functools import partial

    from firmware.ui.live import headless_capture

    return partial(headless_capture, par_cache=_par_cache(args.state_dir))


def _sas_factory(cfg, args):
    """The terminal's SAS port (``[sas]``), opened at the end of its power-up; None: SAS is off."""
    if not cfg.sas.enabled:
        return None
    from functools import partial

    from firmware.cabinet.sas_port import open_sas

    return partial(open_sas, cfg=cfg, par_cache=_par_cache(args.state_dir))


def _each_step(*calls):
    """One ``on_step`` calling each of ``calls`` (None left out) in turn."""
    present = [c for c in calls if c is not None]

    def step(terminal) -> None:
        for call in present:
            call(terminal)

    return step


def _open_ledger(cfg, args, path: Path, out, notify):
    """Critical memory, verified; if it fails verification the cabinet comes up locked
    (:class:`~firmware.cabinet.memory_lock.MemoryLock`): the error on the screens and through the
    control socket, until a technician's RAM clear (then the new, empty memory is opened) or the
    cabinet is turned off (then the error is raised: ``egm run`` fails with it)."""
    from firmware.ledger.errors import CriticalMemoryError
    from firmware.ledger.ledger import Ledger

    try:
        return Ledger.open(path, denomination=cfg.terminal.denomination)
    except CriticalMemoryError as exc:
        error = exc
    if not _memory_lock(cfg, args, path, error, out, notify):
        raise error
    out.write("critical memory: RAM cleared by a technician; the terminal starts\n")
    return Ledger.open(path, denomination=cfg.terminal.denomination)


def _memory_lock(cfg, args, path: Path, error, out, notify) -> bool:
    """Hold the cabinet in the critical-memory lock (the error on the screens and the control
    socket) until a technician's RAM clear (True) or the cabinet is turned off (False)."""
    from firmware.cabinet.control import ControlServer, socket_path
    from firmware.cabinet.memory_lock import MemoryLock

    lock = MemoryLock(cfg, path, error, on_step=lambda _lock: notify.waiting("critical memory LOCKED"))
    _signals(lock)
    server = ControlServer(lock, socket_path(path)).start()
    try:
        out.write(f"critical memory: LOCKED: {error}\n"
                  f"  egm simctl --state-dir {path} status shows it; a technician clears it with "
                  "service login technician PIN, then service ram-clear CLEAR REASON\n")
        out.flush()
        screens = _screens(lock, args, None, out)
        if screens is None:
            lock.run()
        else:
            _run_with_screens(lock, screens, args, 0.05)
    finally:
        server.close()
    return lock.cleared is not None


def _print_started(out, cfg, specs, rig, problems, hosted, path: Path, control: Path, screens, args,
                   sas=None) -> None:
    """What this start-up started, as one table: each device (its protocol, and its port: a
    simulated twin's pty), the host link (the broker, the embedded host's store), the SAS port,
    critical memory, the control socket and the screens."""
    from firmware.commands._tables import console, records_table
    from firmware.config.schema import DEVICE_FIELDS

    rows = []
    for slot in DEVICE_FIELDS:
        spec = specs.get(slot)
        if spec is None:
            rows.append({"part": slot, "what": "not fitted (none)", "where": "-"})
            continue
        twin = rig.twins.get(slot)
        where = twin.link.path if twin is not None and twin.link is not None else \
            cfg.devices.settings.get(slot, {}).get("port", "-")
        what = f"{'simulated ' if spec.simulated else ''}{spec.backend}"
        rows.append({"part": slot, "what": what + (f" (left out: {problems[slot]})" if slot in problems else ""),
                     "where": str(where)})
    if hosted is None:
        rows.append({"part": "host link", "what": "off (host.enabled = false)", "where": "-"})
    else:
        rows.append({"part": "host link", "what": "MQTT over TLS to the embedded broker" if hosted.host_dir
                     else "MQTT over TLS to the casino broker", "where": hosted.broker_url})
        if hosted.host_dir:
            rows.append({"part": "embedded host", "what": "reference host (egm host)", "where": str(hosted.host_dir)})
    if sas is None:
        rows.append({"part": "sas", "what": "off (sas.enabled = false)", "where": "-"})
    else:
        rows.append({"part": "sas", "what": f"SAS 6.02, address {cfg.sas.address} (egm sim sas-host)",
                     "where": sas.status()["port"]})
    rows.append({"part": "critical memory", "what": "state dir (egm meters, recall, events)", "where": str(path)})
    rows.append({"part": "control socket", "what": "egm simctl", "where": str(control)})
    if screens is None:
        rows.append({"part": "screens", "what": "off (headless)", "where": "-"})
    else:
        w, h = args.size
        rows.append({"part": "screens", "what": f"{w}x{h}{' full screen' if args.fullscreen else ''}",
                     "where": display_driver() or "-"})
    out.flush()
    console().print(records_table(rows, "started", columns=("part", "what", "where")))


def display_driver() -> str | None:
    """The display the screens can open, or None: ``SDL_VIDEODRIVER`` when set (``kmsdrm`` on a
    cabinet without a desktop, ``dummy`` in tests), else a desktop session's."""
    import os

    driver = os.environ.get("SDL_VIDEODRIVER", "").strip()
    if driver:
        return driver
    if os.environ.get("WAYLAND_DISPLAY"):
        return "wayland"
    if os.environ.get("DISPLAY"):
        return "x11"
    return None


def _screens(terminal, args, rig, out):
    """The player's screens (hosting the service menu) for this run, or None (headless)."""
    if args.headless:
        out.write("screens: off (--headless)\n")
        return None
    driver = display_driver()
    if driver is None:
        out.write("screens: no display (set DISPLAY, WAYLAND_DISPLAY or SDL_VIDEODRIVER); running headless\n")
        return None
    from firmware.ui.app import UiApp
    from firmware.ui.games import NoScreenError

    try:
        app = UiApp(terminal, size=args.size, drive_terminal=False, par_cache=_par_cache(args.state_dir))
    except NoScreenError as exc:
        out.write(f"screens: off ({exc})\n")
        return None
    w, h = args.size
    if rig is not None:
        from firmware.ui.simpanel import PanelledApp, SimPanel

        out.write(f"screens: {w}x{h} on {driver}, with the simulator panel\n")
        return PanelledApp(app, SimPanel(terminal, rig))
    out.write(f"screens: {w}x{h} on {driver}{' full screen' if args.fullscreen else ''}\n")
    return app


def _run_with_screens(terminal, screens, args, idle_wait: float) -> None:
    """The terminal on its own thread, the window on this one (SDL wants the main thread); the
    window closed stops the terminal, the terminal stopped closes the window. A critical-memory
    failure ends the terminal's loop but not the window: it shows the lockup (HALTED) until the
    cabinet is turned off (the window closed, SIGTERM), then ``egm run`` fails with the reason."""
    import threading

    from firmware.ledger.errors import CriticalMemoryError
    from firmware.ui.messages import text
    from firmware.ui.window import run_window

    failure: list[BaseException] = []

    def cabinet() -> None:
        try:
            terminal.run(idle_wait=idle_wait)
        except CriticalMemoryError as exc:        # the window stays, locked, until the cabinet is turned off
            failure.append(exc)
        except BaseException as exc:              # shown by the main thread
            failure.append(exc)
            terminal.stop()

    worker = threading.Thread(target=cabinet, name="terminal", daemon=True)
    worker.start()
    try:
        run_window(screens, caption=text("window.caption"), stopping=lambda: terminal.stopping,
                   fullscreen=args.fullscreen, on_close=terminal.stop)
    finally:
        terminal.stop()
        worker.join()
    if failure:
        raise failure[0]


def _par_cache(state_dir: str | None) -> Path:
    import platformdirs

    return (Path(state_dir) if state_dir else Path(platformdirs.user_cache_dir("egm"))) / "par"


def _signals(terminal) -> None:
    def stop(signum, frame) -> None:
        terminal.stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):         # not the main thread (tests)
            signal.signal(sig, stop)


def _math_check(cfg, out, state_dir: str | None) -> None:
    """Every enabled game's PAR against the jurisdiction profile; a refused wager stops the start."""


    from firmware.errors import EgmError
    from firmware.math.profile import check_configuration, load_profile

    profile = load_profile(cfg.math.profile)
    cache_dir = _par_cache(state_dir)
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
    from firmware.cabinet.selftest import rng_power_up_test

    return rng_power_up_test(cfg)
