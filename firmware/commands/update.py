"""``egm update init|bundle|install|boot|status|commit|rollback``: field update with A/B slots.

``bundle`` makes a signed RAUC bundle of an application tree; ``install`` checks one and writes it
into the inactive slot on trial; ``boot`` is the boot step run before the terminal (it uses a
trial's boot attempts and falls back when they are spent); ``status`` shows the pair; ``commit``
and ``rollback`` are the technician's. With ``--state-dir`` the update's events are written into
that critical memory at once; otherwise the terminal writes them at its next power-up
(``egm run --update-dir``). See ``docs/update.md``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from firmware.update.slots import SlotStore

from firmware.commands._common import json_argument

DEFAULT_DIR = "/var/lib/egm/update"
DEFAULT_KEYRING = "/var/lib/egm/pki/ca.cert.pem"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("update", help="field update: signed bundles, A/B slots, trial boot, rollback")
    usub = p.add_subparsers(dest="update_command", metavar="ACTION")
    usub.required = True

    i = usub.add_parser("init", help="start an A/B pair: slot A good at --version (the factory install)")
    _dir(i)
    i.add_argument("--version", required=True, help="the installed version (PEP 440)")
    i.add_argument("--tree", help="the installed application tree, copied into slot A")
    json_argument(i)
    i.set_defaults(func=_init)

    b = usub.add_parser("bundle", help="make a signed RAUC bundle of an application tree")
    b.add_argument("--tree", required=True, help="the application tree (e.g. the /opt/egm tree)")
    b.add_argument("--version", required=True, help="the bundle's version (PEP 440)")
    b.add_argument("--signer", required=True, help="the update-signer certificate (egm certs issue --kind update-signer)")
    b.add_argument("--key", required=True, help="the update-signer's private key")
    b.add_argument("--ca", required=True, help="the casino CA certificate the signature is checked against")
    b.add_argument("-o", "--out", required=True, help="the bundle to write (.raucb)")
    json_argument(b)
    b.set_defaults(func=_bundle)

    n = usub.add_parser("install", help="check a bundle and write it into the inactive slot on trial")
    n.add_argument("bundle", metavar="BUNDLE", help="the .raucb file")
    _dir(n)
    n.add_argument("--keyring", default=DEFAULT_KEYRING, help=f"the casino CA (default {DEFAULT_KEYRING})")
    n.add_argument("--attempts", type=int, default=3, help="boot attempts of the trial (default 3)")
    _state(n)
    json_argument(n)
    n.set_defaults(func=_install)

    o = usub.add_parser("boot", help="the boot step: choose the slot this boot runs (before the terminal)")
    _dir(o)
    _state(o)
    json_argument(o)
    o.set_defaults(func=_boot)

    s = usub.add_parser("status", help="the slots, their versions and states, the next boot")
    _dir(s)
    json_argument(s)
    s.set_defaults(func=_status)

    for name, helptext, func in (("commit", "commit the trial slot that runs now (technician)", _commit),
                                 ("rollback", "roll back the trial: the next boot runs the other slot", _rollback)):
        c = usub.add_parser(name, help=helptext)
        _dir(c)
        _state(c)
        json_argument(c)
        c.set_defaults(func=func)


def _dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dir", default=DEFAULT_DIR, help=f"the A/B pair's directory (default {DEFAULT_DIR})")


def _state(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state-dir", help="write the update's events into this critical memory now "
                                       "(default: the terminal writes them at its next power-up)")


def _store(args: argparse.Namespace) -> SlotStore:
    from firmware.update.slots import SlotStore

    return SlotStore(args.dir)


def _out(args: argparse.Namespace, doc: dict[str, Any], text: str) -> None:
    from firmware.commands._common import emit_json

    if args.json:
        emit_json(doc)
    else:
        print(text)


def _check_state(args: argparse.Namespace) -> None:
    """Refuse a bad --state-dir before anything changes."""
    if getattr(args, "state_dir", None):
        from firmware.commands._common import checked_state_dir

        checked_state_dir(args.state_dir, write=True)


def _flush(args: argparse.Namespace, store: SlotStore) -> None:
    """With --state-dir: the pending events into critical memory now."""
    if not getattr(args, "state_dir", None):
        return
    from firmware.commands._common import checked_state_dir
    from firmware.ledger.ledger import Ledger
    from firmware.update.journal import flush

    with Ledger.open(checked_state_dir(args.state_dir, write=True)) as ledger:
        flush(store, ledger.event)


def _init(args: argparse.Namespace) -> int:
    from firmware.update.version import parse

    parse(args.version)
    store = _store(args)
    state = store.init(args.version, Path(args.tree) if args.tree else None)
    _out(args, state.to_json(), f"{store.dir}: slot A good at {args.version}, slot B empty")
    return 0


def _bundle(args: argparse.Namespace) -> int:
    from firmware.update.bundle import make

    info = make(Path(args.tree), args.version, Path(args.signer), Path(args.key), Path(args.ca), Path(args.out))
    _out(args, {"bundle": args.out, "version": info.version, "compatible": info.compatible,
                "payload_sha256": info.payload_sha256, "payload_size": info.payload_size, "signer": info.signer},
         f"{args.out}: {info.compatible} {info.version}, payload {info.payload_size} bytes, signed by {info.signer}")
    return 0


def _install(args: argparse.Namespace) -> int:
    _check_state(args)
    from firmware.update.errors import UpdateRefused
    from firmware.update.install import install

    store = _store(args)
    try:
        done = install(store, Path(args.bundle), Path(args.keyring), attempts=args.attempts)
    except UpdateRefused:
        _flush(args, store)                  # the refusal is an event too
        raise
    _flush(args, store)
    _out(args, {"slot": done.slot, "version": done.version, "previous": done.previous,
                "attempts": done.attempts, "signer": done.signer},
         f"{done.version} installed into slot {done.slot} on trial ({done.attempts} boot attempts; "
         f"was {done.previous}): reboot to try it")
    return 0


def _boot(args: argparse.Namespace) -> int:
    _check_state(args)
    from firmware.update.boot import boot

    store = _store(args)
    b = boot(store)
    _flush(args, store)
    _out(args, {"slot": b.slot, "version": b.version, "state": b.state, "attempts_left": b.attempts_left,
                "rolled_back": b.rolled_back},
         f"boot slot {b.slot} ({b.version}, {b.state}{', rolled back' if b.rolled_back else ''}"
         f"{f', {b.attempts_left} attempt(s) left' if b.state == 'trial' else ''})")
    return 0


def _status(args: argparse.Namespace) -> int:
    store = _store(args)
    state = store.load()
    doc = state.to_json()
    doc["inactive"] = state.inactive
    lines = [f"slot {name}: {s.state:<10} {s.version or '-'}"
             f"{'  (booted)' if state.booted == name else ''}{'  (next boot)' if state.primary == name else ''}"
             for name, s in state.slots.items()]
    lines.append(f"boot attempts left: {state.attempts}; events not yet in critical memory: {len(state.pending)}")
    _out(args, doc, "\n".join(lines))
    return 0


def _commit(args: argparse.Namespace) -> int:
    from firmware.update.boot import commit

    slot = _technician(args, commit)
    _out(args, {"committed": slot}, f"slot {slot} committed")
    return 0


def _rollback(args: argparse.Namespace) -> int:
    from firmware.update.boot import rollback

    slot = _technician(args, rollback)
    _out(args, {"next_boot": slot}, f"rolled back: the next boot runs slot {slot}")
    return 0


def _technician(args: argparse.Namespace, action: Callable[[SlotStore], str]) -> str:
    """Run the technician's ``action`` on the pair; its events into --state-dir if given."""
    _check_state(args)
    store = _store(args)
    slot = action(store)
    _flush(args, store)
    return slot
