"""``egm sim DEVICE [--port PATH | --pty] [--protocol P]``: run one simulated device.

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
from typing import Any

from firmware.errors import UsageError

#: device -> protocols built, the first is the default.
DEVICES: dict[str, tuple[str, ...]] = {
    "bill-validator": ("id003",),
    "printer": (),
    "touch": (),
    "shoe": (),
    "io": (),
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sim", help="run one simulated device on a pty or a serial port")
    p.add_argument("device", choices=list(DEVICES), metavar="DEVICE",
                   help=f"one of {', '.join(DEVICES)}")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--pty", action="store_true", help="serve on a new pseudo-terminal")
    where.add_argument("--port", metavar="PATH", help="serve on this serial port")
    p.add_argument("--protocol", metavar="P", help="wire protocol (bill-validator: id003)")
    p.set_defaults(func=_sim)


def _sim(args: argparse.Namespace) -> int:
    built = DEVICES[args.device]
    if not built:
        raise UsageError(f"the {args.device} simulator is not built yet (devices issue)")
    protocol = args.protocol or built[0]
    if protocol not in built:
        raise UsageError(f"{args.device} protocols built: {', '.join(built)}; not {protocol!r}")
    simulator, commands, serial_settings = _id003()
    return _serve(simulator, commands, serial_settings, args)


def _id003() -> tuple[Any, dict[str, Callable[..., Any]], dict[str, Any]]:
    from drivers.id003.codec import SERIAL
    from sim_hardware.id003_validator import Id003Simulator

    sim = Id003Simulator()
    commands: dict[str, Callable[..., Any]] = {
        "note": lambda value: sim.insert_note(int(value)),
        "ticket": lambda barcode: sim.insert_ticket(barcode),
        "bad-note": lambda: sim.insert_bad_note(),
        "jam": lambda: sim.jam(),
        "stacker-jam": lambda: sim.jam(in_stacker=True),
        "stacker-full": lambda: sim.stacker_full(),
        "remove-stacker": lambda: sim.remove_stacker(),
        "cheat": lambda: sim.cheat(),
        "fail": lambda: sim.fail(),
        "clear": lambda: sim.clear_fault(),
        "corrupt-crc": lambda: sim.corrupt_next_crc(),
        "drop-reply": lambda: sim.drop_next_reply(),
        "repeat": lambda on="on": sim.repeat_replies(on == "on"),
        "power-loss": lambda: sim.power_loss_mid_frame(),
        "power-off": lambda: sim.power_off(),
        "power-on": lambda: sim.power_on(),
        "state": lambda: sim.state.name.lower(),
        "cashbox": lambda: len(sim.cashbox),
    }
    return sim, commands, dict(SERIAL)


def _serve(simulator: Any, commands: dict[str, Callable[..., Any]], serial_settings: dict[str, Any],
           args: argparse.Namespace) -> int:
    from sim_hardware.pty_link import PtyLink, SerialPort, ServeThread

    out = sys.stdout
    link = None
    if args.pty:
        link = PtyLink()
        port: Any = link.port
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


def _command(commands: dict[str, Callable[..., Any]], line: str) -> str | None:
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
    except (TypeError, ValueError) as exc:
        return f"error: {name}: {exc}"
    return "ok" if result is None or result is True else ("refused" if result is False else str(result))
