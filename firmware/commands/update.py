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
    from firmware.update.backend import Backend
    from firmware.update.slots import SlotStore

from firmware.commands._common import json_argument

DEFAULT_DIR = "/var/lib/egm/update"
DEFAULT_KEYRING = "/var/lib/egm/pki/ca.cert.pem"
DEFAULT_CRL = "/var/lib/egm/pki/crl.pem"


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
    crl = n.add_mutually_exclusive_group()
    crl.add_argument("--crl", help=f"the casino CA's CRL: a revoked signer is refused (default: [update] crl, {DEFAULT_CRL})")
    crl.add_argument("--no-crl", action="store_true", help="check no CRL (a lab without one)")
    _backend(n)
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
    _backend(s)
    json_argument(s)
    s.set_defaults(func=_status)

    for name, helptext, func in (("commit", "commit the trial slot that runs now (technician)", _commit),
                                 ("rollback", "roll back the trial: the next boot runs the other slot", _rollback)):
        c = usub.add_parser(name, help=helptext)
        _dir(c)
        _backend(c)
        _state(c)
        json_argument(c)
        c.set_defaults(func=func)


def _dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dir", help=f"the A/B pair's directory; with rauc, its pending events (default: [update] dir, "
                                 f"{DEFAULT_DIR})")


def _backend(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=("directory", "rauc"),
                   help="the A/B slots: a directory of trees, or RAUC's partitions (default: [update] backend of "
                        "--config, else directory)")
    p.add_argument("--config", help="the terminal's configuration, for its [update] section (e.g. /etc/egm/terminal.toml)")


def _settings(args: argparse.Namespace) -> tuple[str, str, str]:
    """(backend, dir, crl) from the options, else --config's [update], else the defaults."""
    backend, directory, crl = "directory", DEFAULT_DIR, DEFAULT_CRL
    if getattr(args, "config", None):
        from firmware.commands._common import load_terminal_config

        cfg = load_terminal_config(args.config).update
        backend = cfg.backend if cfg.backend != "none" else backend
        directory, crl = cfg.dir, cfg.crl
    return getattr(args, "backend", None) or backend, args.dir or directory, crl


def _backend_of(args: argparse.Namespace) -> Backend:
    from firmware.update.backend import make_backend

    kind, directory, _ = _settings(args)
    return make_backend(kind, directory)


def _state(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state-dir", help="write the update's events into this critical memory now "
                                       "(default: the terminal writes them at its next power-up)")


def _store(args: argparse.Namespace) -> SlotStore:
    from firmware.update.slots import SlotStore

    return SlotStore(args.dir or DEFAULT_DIR)


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


def _flush(args: argparse.Namespace, backend: Backend) -> None:
    """With --state-dir: the pending events into critical memory now."""
    if not getattr(args, "state_dir", None):
        return
    from firmware.commands._common import checked_state_dir
    from firmware.ledger.ledger import Ledger

    with Ledger.open(checked_state_dir(args.state_dir, write=True)) as ledger:
        backend.flush(ledger.event)


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

    backend = _backend_of(args)
    crl = None if args.no_crl else Path(args.crl or _settings(args)[2])
    try:
        done = backend.install(Path(args.bundle), Path(args.keyring), crl=crl, attempts=args.attempts)
    except UpdateRefused:
        _flush(args, backend)                # the refusal is an event too
        raise
    _flush(args, backend)
    attempts = f"{done.attempts} boot attempts" if backend.name == "directory" else "the bootloader's boot counter"
    _out(args, {"slot": done.slot, "version": done.version, "previous": done.previous,
                "attempts": done.attempts, "signer": done.signer, "backend": backend.name},
         f"{done.version} installed into slot {done.slot} on trial ({attempts}; "
         f"was {done.previous}): reboot to try it")
    return 0


def _boot(args: argparse.Namespace) -> int:
    _check_state(args)
    from firmware.update.backend import DirectoryBackend
    from firmware.update.boot import boot

    backend = DirectoryBackend(args.dir or DEFAULT_DIR)
    b = boot(backend.store)
    _flush(args, backend)
    _out(args, {"slot": b.slot, "version": b.version, "state": b.state, "attempts_left": b.attempts_left,
                "rolled_back": b.rolled_back},
         f"boot slot {b.slot} ({b.version}, {b.state}{', rolled back' if b.rolled_back else ''}"
         f"{f', {b.attempts_left} attempt(s) left' if b.state == 'trial' else ''})")
    return 0


def _status(args: argparse.Namespace) -> int:
    doc, text = _backend_of(args).status()
    _out(args, doc, text)
    return 0


def _commit(args: argparse.Namespace) -> int:
    slot = _technician(args, lambda backend: backend.commit())
    _out(args, {"committed": slot}, f"slot {slot} committed")
    return 0


def _rollback(args: argparse.Namespace) -> int:
    slot = _technician(args, lambda backend: backend.rollback())
    _out(args, {"next_boot": slot}, f"rolled back: the next boot runs slot {slot}")
    return 0


def _technician(args: argparse.Namespace, action: Callable[[Backend], str]) -> str:
    """Run the technician's ``action`` on the slots; its events into --state-dir if given."""
    _check_state(args)
    backend = _backend_of(args)
    slot = action(backend)
    _flush(args, backend)
    return slot
