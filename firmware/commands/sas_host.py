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
- ``redeem --amount CENTS [--validation N]``: redeem the ticket in the machine's escrow (0x70,
  0x71; ``drivers/sas/host_tito.py``).
- ``aft-in`` / ``aft-out --amount CENTS --transaction ID [--asset N]``: an AFT transfer of
  in-house cashable credit to or from the machine, exactly once (0x72 and its interrogation;
  ``drivers/sas/host_aft.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from drivers.sas.codec import Ack, EgmDecoder, EventReply, LongPoll, Nack, Reply, encode_reply
from drivers.sas.exceptions import exception_name
from drivers.sas.host import SasHost, SasHostError
from drivers.sas.host_aft import HostAftError, aft_transfer
from drivers.sas.host_tito import RedemptionError, redeem_ticket
from drivers.sas.messages import (
    METER_LAYOUTS,
    AftTransferReply,
    MachineInfo,
    Meters,
    RomSignature,
    RomSignatureRequest,
    SasVersion,
    parse_reply,
)
from drivers.sas.validation import validation_from_bcd
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
    p.add_argument("--rte", action="store_true",
                   help="sas-host poll: real-time event reporting on while polling (events with their data; off after)")
    p.add_argument("--seed", type=lambda v: int(v, 0), metavar="S", help="sas-host rom-signature: the seed (0-0xFFFF)")
    p.add_argument("--amount", type=int, metavar="CENTS", help="sas-host redeem, aft-in, aft-out: the amount in cents")
    p.add_argument("--validation", metavar="N", help="sas-host redeem: the ticket expected in escrow")
    p.add_argument("--transaction", metavar="ID", help="sas-host aft-in, aft-out: the transaction ID (1-20 characters)")
    p.add_argument("--asset", type=int, default=1, metavar="N", help="sas-host aft-in, aft-out: the machine's asset number (1)")


def run(args: argparse.Namespace) -> int:
    if args.pty or not args.port:
        raise UsageError("sas-host polls a machine: give its port with --port PATH (egm run --sas pty prints it)")
    action = ACTIONS.get(args.action or "poll")
    if action is None:
        raise UsageError(f"unknown sas-host action {args.action!r}; actions: {', '.join(ACTIONS)}")
    if not 1 <= args.address <= 127:
        raise UsageError(f"--address {args.address}: a SAS address is 1-127")
    _check_options(args.action or "poll", args)          # before the port is opened
    try:
        host = SasHost(args.port, args.address)
    except OSError as exc:
        raise UsageError(exc.strerror or str(exc)) from None
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


def _check_options(action: str, args: argparse.Namespace) -> None:
    """The options ``action`` needs, checked (a UsageError names the one missing or wrong)."""
    if action == "poll" and args.count is not None and args.count < 1:
        raise UsageError("--count: at least 1 poll")
    if action == "rom-signature":
        _seed(args)
    if action in ("redeem", "aft-in", "aft-out"):
        _amount(args)
    if action in ("aft-in", "aft-out"):
        _transaction(args)


def _seed(args: argparse.Namespace) -> int:
    if args.seed is None or not 0 <= args.seed <= 0xFFFF:
        raise UsageError("rom-signature needs --seed S, 0-0xFFFF")
    return int(args.seed)


def _transaction(args: argparse.Namespace) -> str:
    if not args.transaction or len(args.transaction) > 20:
        raise UsageError(f"{args.action} needs --transaction ID, 1-20 characters")
    return str(args.transaction)


def _text(result: dict[str, Any]) -> str:
    return "\n".join(f"{key:<28s} {value}" for key, value in result.items())


# -- the actions ----------------------------------------------------------------------------------
def poll(host: SasHost, args: argparse.Namespace) -> dict[str, Any] | None:
    if not args.rte:
        return _poll(host, args)
    host.real_time_events(True)
    try:
        return _poll(host, args)
    finally:
        host.real_time_events(False)


def _poll(host: SasHost, args: argparse.Namespace) -> dict[str, Any] | None:
    seen: list[dict[str, Any]] = []
    polls = 0
    while args.count is None or polls < args.count:
        reply = host.general_poll()
        polls += 1
        if reply is None:
            raise SasHostError(f"no reply to the general poll within {host.timeout} s")
        code, data = (reply.code, reply.data.hex()) if isinstance(reply, EventReply) else (reply, "")
        if code:
            seen.append({"code": f"0x{code:02X}", "exception": exception_name(code),
                         **({"data": data} if data else {})})
            if not args.json:
                sys.stdout.write(f"0x{code:02X} {exception_name(code)}{' ' + data if data else ''}\n")
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
    body = host.read(0x21, RomSignatureRequest(_seed(args)).encode())
    assert isinstance(body, RomSignature)
    return {"seed": f"0x{args.seed:04X}", "signature": f"0x{body.signature:04X}"}


def _amount(args: argparse.Namespace) -> int:
    if args.amount is None or args.amount <= 0:
        raise UsageError(f"{args.action} needs --amount CENTS, a positive number")
    return int(args.amount)


def _typed(host: SasHost, poll: LongPoll) -> object | None:
    """The typed body of the reply to ``poll``, None if none came (TITO's ``transact``)."""
    reply = host.ask(poll)
    return parse_reply(poll.command, reply.data) if isinstance(reply, Reply) else None


def _wire(host: SasHost, wire: bytes) -> bytes:
    """Send the poll ``wire`` encodes; the reply's bytes (AFT's ``exchange``; b"": none)."""
    decoder = EgmDecoder(host.address)
    decoder.receive_data(wire)
    polls = [event for event in decoder.events() if isinstance(event, LongPoll)]
    reply = host.ask(polls[0]) if polls else None
    return encode_reply(reply) if isinstance(reply, Reply | Ack | Nack) else b""


def _pause(host: SasHost) -> None:
    """Between two status queries of a redemption: a general poll (so the next query is no retry)
    and time for the validator to stack the ticket."""
    host.general_poll()
    time.sleep(POLL_INTERVAL_S * 2)


def redeem(host: SasHost, args: argparse.Namespace) -> dict[str, Any]:
    try:
        reply = redeem_ticket(lambda poll: _typed(host, poll), host.address, _amount(args),
                              validation=args.validation, between=lambda: _pause(host), tries=50)
    except RedemptionError as exc:
        raise SasHostError(str(exc)) from None
    return {"status": f"0x{reply.status:02X}", "amount_cents": reply.amount,
            "validation": validation_from_bcd(reply.validation_data) if reply.validation_data else ""}


def _aft(host: SasHost, args: argparse.Namespace, *, to_machine: bool) -> dict[str, Any]:
    try:
        reply = aft_transfer(lambda wire: _wire(host, wire), host.address, cents=_amount(args),
                             transaction_id=_transaction(args), asset_number=args.asset, to_machine=to_machine)
    except HostAftError as exc:
        raise SasHostError(str(exc)) from None
    result: dict[str, Any] = {"transaction": args.transaction,
                              "transfer_status": f"0x{reply.transfer_status:02X}"}
    if isinstance(reply, AftTransferReply):
        result["cashable_cents"] = reply.cashable
    return result


def aft_in(host: SasHost, args: argparse.Namespace) -> dict[str, Any]:
    return _aft(host, args, to_machine=True)


def aft_out(host: SasHost, args: argparse.Namespace) -> dict[str, Any]:
    return _aft(host, args, to_machine=False)


#: The actions by name.
ACTIONS: dict[str, Action] = {
    "poll": poll, "meters": meters, "info": info, "enable": enable, "disable": disable,
    "rom-signature": rom_signature, "redeem": redeem, "aft-in": aft_in, "aft-out": aft_out,
}
