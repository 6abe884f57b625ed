"""``egm sim DEVICE [--port PATH | --pty] [--protocol P]``: run one simulated device.

``egm sim sas-host --port PATH [ACTION]`` is the other side of a line: a small SAS host polling a
gaming machine (``firmware/commands/sas_host.py``).

The simulator speaks the device's real wire protocol (the device role of the same codec the
driver uses) on a pseudo-terminal (``--pty``: its path is the first line printed) or on a real
serial port (``--port``), so a lab can wire the terminal, or any host, to it. Commands on standard
input drive it, one per line (``help`` lists them): a player inserting a note, a jam, a repeated
frame. At the end of standard input it keeps serving until interrupted (Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from firmware.errors import UsageError

if TYPE_CHECKING:
    from sim_hardware.id003_validator import Id003Simulator
    from sim_hardware.link_device import LinkDeviceSimulator
    from sim_hardware.pty_link import BytePort, Serves
    from sim_hardware.ssp_validator import SspSimulator

#: The console's commands by name: each takes the words after the name; its result is printed.
Commands = dict[str, Callable[..., object]]

#: device -> protocols built, the first is the default.
DEVICES: dict[str, tuple[str, ...]] = {
    "bill-validator": ("id003", "ssp"),
    "printer": ("tcl",),
    "touch": ("evdev", "microtouch"),   #: --pty: microtouch (evdev writes a FIFO, no pty)
    "shoe": ("shoe",),
    "io": ("io",),
    "sas-host": ("sas",),               #: not a device: a SAS host polling a machine (--port)
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sim", help="run one simulated device on a pty or a serial port")
    p.add_argument("device", choices=list(DEVICES), metavar="DEVICE",
                   help=f"one of {', '.join(DEVICES)}")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--pty", action="store_true", help="serve on a new pseudo-terminal")
    where.add_argument("--port", metavar="PATH", help="serve on this serial port (sas-host: the machine's port)")
    p.add_argument("--protocol", metavar="P", help="wire protocol (bill-validator: id003, ssp; printer: tcl; "
                   "touch: evdev (--port FIFO), microtouch (the default with --pty); shoe: shoe; io: io)")
    from firmware.commands import sas_host

    sas_host.add_options(p)
    p.set_defaults(func=_sim)


def _sim(args: argparse.Namespace) -> int:
    if args.device == "sas-host":
        from firmware.commands import sas_host

        return sas_host.run(args)
    if args.action is not None:
        raise UsageError(f"{args.device} takes no action word ({args.action!r}); its commands come on standard input")
    built = DEVICES[args.device]
    default = "microtouch" if args.device == "touch" and args.pty else built[0]
    protocol = args.protocol or default
    if protocol not in built:
        raise UsageError(f"{args.device} protocols built: {', '.join(built)}; not {protocol!r}")
    if args.device == "touch" and protocol == "evdev":
        return _touch(args)
    if args.device == "touch":
        simulator, commands, serial_settings = _microtouch()
    elif args.device == "io":
        simulator, commands, serial_settings = _io()
    elif args.device == "shoe":
        simulator, commands, serial_settings = _shoe()
    elif args.device == "printer":
        simulator, commands, serial_settings = _tcl()
    elif protocol == "ssp":
        simulator, commands, serial_settings = _ssp()
    else:
        simulator, commands, serial_settings = _id003()
    return _serve(simulator, commands, serial_settings, args)


def _ssp() -> tuple[Serves, Commands, dict[str, Any]]:
    """ITL SSP; eSSP when ``EGM_SIM_SSP_FIXED_KEY`` holds the fixed key (16 hex digits)."""
    import os

    from drivers.ssp.codec import SERIAL
    from drivers.ssp.essp import parse_fixed_key
    from sim_hardware.ssp_validator import SspSimulator

    key = os.environ.get("EGM_SIM_SSP_FIXED_KEY", "")
    try:
        sim = SspSimulator(encryption=bool(key), fixed_key=parse_fixed_key(key) if key else 0)
    except ValueError as exc:
        raise UsageError(f"EGM_SIM_SSP_FIXED_KEY: {exc}") from None
    commands: Commands = {
        **_validator_commands(sim),
        "unsafe-jam": lambda: sim.jam(safe=False),
        "fraud": lambda: sim.fraud(),
        "remove-cashbox": lambda: sim.remove_cashbox(),
        "lose-command": lambda: sim.lose_next_command(),
        "encrypted": lambda: "yes" if sim.keyed else "no",
    }
    return sim, commands, dict(SERIAL)


def _validator_commands(sim: SspSimulator | Id003Simulator) -> Commands:
    """What a player, the hardware and the wire do to either bill validator (ID-003, SSP)."""
    return {
        "note": lambda value: sim.insert_note(int(value)),
        "ticket": lambda barcode: sim.insert_ticket(barcode),
        "bad-note": lambda: sim.insert_bad_note(),
        "jam": lambda: sim.jam(),
        "stacker-full": lambda: sim.stacker_full(),
        "clear": lambda: sim.clear_fault(),
        "corrupt-crc": lambda: sim.corrupt_next_crc(),
        "drop-reply": lambda: sim.drop_next_reply(),
        "repeat": lambda on="on": sim.repeat_replies(on == "on"),
        "power-off": lambda: sim.power_off(),
        "power-on": lambda: sim.power_on(),
        "state": lambda: sim.state.name.lower(),
        "cashbox": lambda: len(sim.cashbox),
    }


def _link_wire_commands(sim: LinkDeviceSimulator) -> Commands:
    """The wire faults every product-link simulator (shoe, I/O board) takes."""
    return {
        "corrupt-crc": lambda n="1": sim.corrupt_next_crc(int(n)),
        "drop": lambda n="1": sim.drop_next(int(n)),
        "repeat": lambda on="on": sim.repeat(on == "on"),
        "unplug": lambda: sim.unplug(close_port=False),
        "replug": lambda: sim.replug(),
        "power-off": lambda: sim.power_off(),
        "power-on": lambda: sim.power_on(),
        "power-cycle": lambda: sim.power_cycle(),
    }


def _id003() -> tuple[Serves, Commands, dict[str, Any]]:
    from drivers.id003.codec import SERIAL
    from sim_hardware.id003_validator import Id003Simulator

    sim = Id003Simulator()
    commands: Commands = {
        **_validator_commands(sim),
        "stacker-jam": lambda: sim.jam(in_stacker=True),
        "remove-stacker": lambda: sim.remove_stacker(),
        "cheat": lambda: sim.cheat(),
        "fail": lambda: sim.fail(),
        "power-loss": lambda: sim.power_loss_mid_frame(),
    }
    return sim, commands, dict(SERIAL)


def _tcl() -> tuple[Serves, Commands, dict[str, Any]]:
    """The TCL ticket printer: paper, mechanism and wire faults; ``last`` shows the last ticket."""
    from drivers.tcl.codec import SERIAL
    from drivers.tcl.voucher import texts
    from sim_hardware.tcl_printer import MidTicket, TclPrinterSimulator

    sim = TclPrinterSimulator()

    def last() -> str:
        if not sim.printed:
            return "none"
        ticket = sim.printed[-1]
        try:
            voucher = ticket.voucher()
        except ValueError as exc:
            return f"unreadable: {exc}"
        return f"{voucher.validation} {voucher.amount_cents} {' | '.join(texts(voucher).values())}"

    commands: Commands = {
        "paper-low": lambda on="on": sim.paper_low(on == "on"),
        "paper-out": lambda: sim.paper_out(),
        "load-paper": lambda tickets="500": sim.load_paper(int(tickets)),
        "jam": lambda: sim.jam(),
        "clear-jam": lambda: sim.clear_jam(),
        "open": lambda: sim.open_chassis(),
        "close": lambda: sim.close_chassis(),
        "mid-ticket": lambda fault: sim.fail_mid_ticket(MidTicket(fault.replace("-", "_"))),
        "power-off": lambda: sim.power_off(),
        "power-on": lambda: sim.power_on(),
        "corrupt-reply": lambda: sim.corrupt_next_reply(),
        "drop-reply": lambda: sim.drop_next_reply(),
        "repeat": lambda on="on": sim.repeat_replies(on == "on"),
        "lose": lambda kind="P": sim.lose_next(kind),
        "status": lambda: repr(sim.flags),
        "printed": lambda: len(sim.printed),
        "last": last,
    }
    return sim, commands, dict(SERIAL)


def _shoe() -> tuple[Serves, Commands, dict[str, Any]]:
    from drivers.link.codec import SERIAL
    from drivers.shoe.messages import MisreadReason
    from sim_hardware.shoe import ShoeSimulator

    sim = ShoeSimulator(seed=0)
    commands: Commands = {
        "draw": lambda n="1": " ".join(str(sim.draw()) for _ in range(int(n))),
        "burn": lambda: str(sim.burn()),
        "misread": lambda reason="3": sim.misread_next(MisreadReason(int(reason))),
        "cut-card": lambda: sim.cut_card(),
        "door": lambda state="open": sim.open_door() if state == "open" else sim.close_door(),
        "shuffle": lambda seed, decks="8": len(sim.shuffle(int(seed), decks=int(decks))),
        "load": lambda *cards: sim.load(cards),
        **_link_wire_commands(sim),
        "left": lambda: sim.left,
        "dealt": lambda: " ".join(str(c) for c in sim.dealt) or "-",
    }
    return sim, commands, dict(SERIAL)


def _microtouch() -> tuple[Serves, Commands, dict[str, Any]]:
    """The 3M MicroTouch serial controller: touches at screen pixels through its sensor, faults."""
    from drivers.touch.microtouch_codec import SERIAL
    from sim_hardware.touch_microtouch import MicroTouchSimulator

    sim = MicroTouchSimulator()

    def raw(point: tuple[int, int]) -> str:
        return f"{point[0]} {point[1]}"

    commands: Commands = {
        "touch": lambda x, y: raw(sim.touch(int(x), int(y))),
        "raw": lambda x, y: sim.touch_raw(int(x), int(y)),
        "drag": lambda x1, y1, x2, y2, steps="8": raw(
            sim.drag((int(x1), int(y1)), (int(x2), int(y2)), int(steps))[-1]),
        "hold": lambda n="1": sim.hold(int(n)),
        "lift": lambda: sim.lift(),
        "tap": lambda x, y: raw(sim.tap(int(x), int(y))),
        "garbage": lambda hex_bytes="": sim.garbage(bytes.fromhex(hex_bytes)) if hex_bytes
        else sim.garbage(),
        "tear": lambda keep="3": sim.tear_next(int(keep)),
        "split": lambda step="1": sim.split(int(step)),
        "repeat": lambda on="on": sim.repeat_replies(on == "on"),
        "unplug": lambda: sim.unplug(),
        "state": lambda: f"{'touching' if sim.touching else 'up'} {raw(sim.point)}",
        "reports": lambda: sim.reports_sent,
        "commands": lambda: " ".join(sim.commands) or "-",
    }
    return sim, commands, dict(SERIAL)


def _touch(args: argparse.Namespace) -> int:
    """The evdev touchscreen: records into the FIFO ``--port`` names (created if missing).

    ``--pty`` is the 3M MicroTouch serial simulator (``--protocol microtouch``): evdev has no pty.
    """
    from sim_hardware.touch_evdev import EvdevTouchSimulator, make_fifo

    if args.pty:
        raise UsageError("the evdev touch simulator writes a FIFO: egm sim touch --port FIFO_PATH "
                         "(--pty is the 3M MicroTouch serial one: --protocol microtouch)")
    try:
        path = make_fifo(args.port)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot make the FIFO {args.port}: {exc}") from None
    sim = EvdevTouchSimulator(path)

    def connected() -> EvdevTouchSimulator:
        if not sim.connected:
            sim.connect(timeout=5.0)
        return sim

    commands: Commands = {
        "down": lambda x, y, slot="0": connected().down(int(x), int(y), int(slot)),
        "move": lambda x, y, slot="0": connected().move(int(x), int(y), int(slot)),
        "up": lambda slot="0": connected().up(int(slot)),
        "tap": lambda x, y: connected().tap(int(x), int(y)),
        "two-finger": lambda x1, y1, x2, y2: connected().two_finger((int(x1), int(y1)),
                                                                    (int(x2), int(y2))),
        "screen": lambda x, y: " ".join(map(str, connected().touch_screen(int(x), int(y)))),
        "syn-dropped": lambda: connected().syn_dropped(),
        "unplug": lambda: sim.unplug(),
        "records": lambda: sim.records_written,
    }
    out = sys.stdout
    out.write(f"{path}\n")
    out.flush()
    try:
        for line in sys.stdin:
            try:
                reply = _command(commands, line)
            except OSError as exc:                   # TimeoutError: no reader; EPIPE: it left
                reply = f"error: {exc}"
            if reply is not None:
                out.write(f"{reply}\n")
                out.flush()
            if reply == "bye":
                break
    finally:
        sim.close()
    return 0


def _io() -> tuple[Serves, Commands, dict[str, Any]]:
    """The I/O board: doors, keys, buttons; ``tower``, ``lamps`` and ``meters`` show the outputs."""
    from drivers.link.codec import SERIAL
    from hal.events import Button, Door, KeySwitch
    from sim_hardware.io_board import IoBoardSimulator

    sim = IoBoardSimulator()
    commands: Commands = {
        "open": lambda door: sim.open_door(Door(door)),
        "close": lambda door: sim.close_door(Door(door)),
        "key": lambda key, state="on": sim.turn_key(KeySwitch(key), state == "on"),
        "press": lambda *buttons: all(sim.press(Button(b)) for b in buttons),
        "tower": lambda: " ".join(f"{t}:{p.name.lower()}" for t, p in sorted(sim.tower.items()))
        or "-",
        "lamps": lambda: " ".join(sorted(b.value for b in sim.lamps)) or "-",
        "meters": lambda: " ".join(f"{m}:{n}" for m, n in sorted(sim.meters.items())) or "-",
        **_link_wire_commands(sim),
    }
    return sim, commands, dict(SERIAL)


def _serve(simulator: Serves, commands: Commands, serial_settings: dict[str, Any],
           args: argparse.Namespace) -> int:
    from sim_hardware.pty_link import PtyLink, SerialPort, ServeThread

    out = sys.stdout
    link = None
    if args.pty:
        link = PtyLink()
        port: BytePort = link.port
        out.write(f"{link.path}\n")
    else:
        try:
            port = SerialPort(args.port, **serial_settings)
        except Exception as exc:   # pyserial's SerialException, OSError, ValueError
            raise UsageError(f"cannot open {args.port}: {exc}") from None
        out.write(f"{args.port}\n")
    out.flush()
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    thread = ServeThread(simulator.serve, port, name=f"sim-{args.device}").start()
    try:
        for line in sys.stdin:
            if done.is_set():
                break
            reply = _command(commands, line)
            if reply is not None:
                out.write(f"{reply}\n")
                out.flush()
            if reply == "bye":
                done.set()
                break
        done.wait()
    finally:
        thread.stop()
        if link is not None:
            link.close()
        else:
            port.close()
    return 0


def _command(commands: Commands, line: str) -> str | None:
    try:
        words = shlex.split(line)
    except ValueError as exc:
        return f"error: {exc}"
    if not words:
        return None
    name, rest = words[0].lower(), words[1:]
    if name in ("quit", "exit"):
        return "bye"
    if name == "help":
        return "commands: " + ", ".join(sorted(commands)) + ", quit"
    command = commands.get(name)
    if command is None:
        return f"error: unknown command {name!r}; try help"
    try:
        result = command(*rest)
    except (TypeError, ValueError, OSError) as exc:     # OSError: the simulator is unplugged
        return f"error: {name}: {exc}"
    return "ok" if result is None or result is True else ("refused" if result is False else str(result))
