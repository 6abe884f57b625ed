"""``egm sim sas-host [ACTION] --port PATH [--address N] [--json]``: a small SAS host.

The action word comes right after ``sas-host`` (argparse reads the positionals before the options).

For technicians and tests: it polls the gaming machine on ``PATH`` (a serial device, or the pty
``egm run --sas pty`` printed) through ``drivers.sas.host.SasHost``, the same codec as the
machine's. Actions (:data:`ACTIONS`, one function each taking the host and the options):

- ``poll``: general polls, each exception printed as it comes, until interrupted (Ctrl-C) or
  ``--count`` polls; the spare address is polled in between so each acknowledges the last.
- ``meters``: the meter polls 0x0F-0x1E and 0x20 (credits of the accounting denomination, counts).
- ``info``: machine ID and information (0x1F), SAS version and serial number (0x54).
- ``enable`` / ``disable``: enable or disable play (0x02 / 0x01).
- ``rom-signature --seed S``: the ROM signature from seed S (0x21).

A ticket redemption and an AFT transfer are actions of their own modules: each adds its entry to
:data:`ACTIONS` (and its options in :func:`add_options`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from drivers.sas.codec import Ack, Nack, Reply
from drivers.sas.exceptions import exception_name
from drivers.sas.host import SasHost, SasHostError
from drivers.sas.messages import (
    METER_LAYOUTS,
    MachineInfo,
    Meters,
    RomSignature,
    RomSignatureRequest,
    SasVersion,
)
from firmware.errors import EgmError, UsageError

#: How long ``poll`` waits between general polls (seconds; hosts poll every 40-200 ms).
POLL_INTERVAL_S = 0.05

#: An action: the host and the parsed options in, a JSON-able result out (printed at the end),
#: or None when the action printed as it went.
Action = Callable[[SasHost, argparse.Namespace], Any]


def add_options(p: argparse.ArgumentParser) -> None:
    """The sas-host options on ``egm sim``'s parser (``--port`` is the simulators' own)."""
    p.add_argument("action", nargs="?", metavar="ACTION",
                   help=f"sas-host only: {', '.join(ACTIONS)} (default: poll)")
    p.add_argument("--address", type=int, default=1, metavar="N", help="sas-host: the machine's SAS address (1)")
    p.add_argument("--json", action="store_true", help="sas-host: one JSON document on stdout")
    p.add_argument("--count", type=int, metavar="N", help="sas-host poll: stop after N general polls")
    p.add_argument("--seed", type=lambda v: int(v, 0), metavar="S", help="sas-host rom-signature: the seed (0-0xFFFF)")


def run(args: argparse.Namespace) -> int:
    if args.pty or not args.port:
        raise UsageError("sas-host polls a machine: give its port with --port PATH (egm run --sas pty prints it)")
    action = ACTIONS.get(args.action or "poll")
    if action is None:
        raise UsageError(f"unknown sas-host action {args.action!r}; actions: {', '.join(ACTIONS)}")
    if not 1 <= args.address <= 127:
        raise UsageError(f"--address {args.address}: a SAS address is 1-127")
    try:
        host = SasHost(args.port, args.address)
    except OSError as exc:
        raise UsageError(f"cannot open {args.port}: {exc}") from None
    try:
        result = action(host, args)
    except SasHostError as exc:
        raise EgmError(str(exc)) from None
    except KeyboardInterrupt:
        result = None
    finally:
        host.close()
    if result is not None:
        sys.stdout.write((json.dumps(result) if args.json else _text(result)) + "\n")
    return 0


def _text(result: dict[str, Any]) -> str:
    return "\n".join(f"{key:<28s} {value}" for key, value in result.items())


# -- the actions ----------------------------------------------------------------------------------
def poll(host: SasHost, args: argparse.Namespace) -> dict[str, Any] | None:
    if args.count is not None and args.count < 1:
        raise UsageError("--count: at least 1 poll")
    seen: list[dict[str, Any]] = []
    polls = 0
    while args.count is None or polls < args.count:
        code = host.general_poll()
        polls += 1
        if code is None:
            raise SasHostError(f"no reply to the general poll within {host.timeout} s")
        if code:
            seen.append({"code": f"0x{code:02X}", "exception": exception_name(code)})
            if not args.json:
                sys.stdout.write(f"0x{code:02X} {exception_name(code)}\n")
                sys.stdout.flush()
        time.sleep(POLL_INTERVAL_S)
    return {"polls": polls, "exceptions": seen} if args.json else None


def meters(host: SasHost, args: argparse.Namespace) -> dict[str, Any]:
    values: dict[str, int] = {}
    for command in sorted(METER_LAYOUTS):
        body = host.read(command)
        assert isinstance(body, Meters)
        values.update(body.values)
    return values


def info(host: SasHost, args: argparse.Namespace) -> dict[str, Any]:
    machine, version = host.read(0x1F), host.read(0x54)
    assert isinstance(machine, MachineInfo) and isinstance(version, SasVersion)
    return {"game_id": machine.game_id, "additional_id": machine.additional_id,
            "denomination_code": machine.denomination, "max_bet": machine.max_bet,
            "progressive_group": machine.progressive_group, "game_options": machine.game_options,
            "paytable_id": machine.paytable_id, "base_percent": machine.base_percent,
            "sas_version": version.version, "serial": version.serial}


def _acked(host: SasHost, command: int, what: str) -> dict[str, Any]:
    reply = host.long_poll(command)
    if isinstance(reply, Nack):
        raise SasHostError(f"the machine refused to {what} (NACK)")
    if not isinstance(reply, Ack | Reply):
        raise SasHostError(f"unexpected reply to 0x{command:02X}: {reply}")
    return {what: "acknowledged"}


def enable(host: SasHost, args: argparse.Namespace) -> dict[str, Any]:
    return _acked(host, 0x02, "enable")


def disable(host: SasHost, args: argparse.Namespace) -> dict[str, Any]:
    return _acked(host, 0x01, "disable")


def rom_signature(host: SasHost, args: argparse.Namespace) -> dict[str, Any]:
    if args.seed is None or not 0 <= args.seed <= 0xFFFF:
        raise UsageError("rom-signature needs --seed S, 0-0xFFFF")
    body = host.read(0x21, RomSignatureRequest(args.seed).encode())
    assert isinstance(body, RomSignature)
    return {"seed": f"0x{args.seed:04X}", "signature": f"0x{body.signature:04X}"}


#: The actions by name; TITO's ticket redemption and AFT's transfer add theirs here.
ACTIONS: dict[str, Action] = {
    "poll": poll, "meters": meters, "info": info, "enable": enable, "disable": disable,
    "rom-signature": rom_signature,
}
