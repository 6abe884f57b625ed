"""``egm package build|verify``: the code signer's game packages (docs/packages.md).

``build`` signs a package of game options (``options.toml``, a table per game id) and any other
files with the code signer's Ed25519 key and certificate; ``verify`` checks one against a casino PKI
exactly as a terminal does before it installs it (exit 0 only if it would be accepted).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from firmware.commands._common import emit_json, json_argument, read_limited


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("package", help="game packages: build and sign one, verify one")
    psub = p.add_subparsers(dest="package_command", metavar="ACTION")
    psub.required = True

    b = psub.add_parser("build", help="sign a package of game options with the code signer's key")
    b.add_argument("--name", required=True, help="the package name (a-z 0-9 . _ -)")
    b.add_argument("--version", required=True, help="its version (e.g. 1.2.0)")
    b.add_argument("--description", default="", help="a line saying what the package changes")
    b.add_argument("--options", required=True, metavar="OPTIONS.toml",
                   help="the game options: a table per game id, e.g. [baccarat-war] decks = 6")
    b.add_argument("--file", action="append", default=[], metavar="PATH=SOURCE",
                   help="another file to carry, stored as PATH (repeatable)")
    b.add_argument("--key", required=True, help="the code signer's private key (PEM)")
    b.add_argument("--cert", required=True, help="the code signer's certificate (PEM)")
    b.add_argument("--password-env", metavar="VAR", help="environment variable holding the key's passphrase")
    b.add_argument("--out", required=True, help="the .egmpkg file to write")
    json_argument(b)
    b.set_defaults(func=_build)

    v = psub.add_parser("verify", help="verify a package against a casino PKI (exit 0 only if accepted)")
    v.add_argument("package", metavar="PACKAGE", help="the package file to verify")
    v.add_argument("--pki", required=True, help="the PKI directory (its CA and CRL)")
    json_argument(v)
    v.set_defaults(func=_verify)


def _build(args: argparse.Namespace) -> int:
    from cryptography.hazmat.primitives import serialization

    from egmproto import package_format as pf
    from egmproto.pki import PkiError, load_certificate
    from firmware.cabinet.packages import accept_game_options
    from firmware.errors import UsageError

    files = {pf.OPTIONS_FILE: read_limited(args.options, "options", pf.MAX_PACKAGE_BYTES)}
    for spec in args.file:
        path, sep, source = spec.partition("=")
        if not sep or not path or not source:
            raise UsageError(f"--file {spec!r}: expected PATH=SOURCE")
        if path in files:
            raise UsageError(f"--file {path}: given twice")
        files[path] = read_limited(source, "file", pf.MAX_PACKAGE_BYTES)
    password = None
    if args.password_env:
        if args.password_env not in os.environ:
            raise UsageError(f"--password-env: the environment variable {args.password_env} is not set")
        password = os.environ[args.password_env].encode("utf-8")
    try:
        key = serialization.load_pem_private_key(read_limited(args.key, "key", 65536), password=password)
        cert = load_certificate(Path(args.cert))
    except (ValueError, TypeError, PkiError) as exc:
        raise UsageError(f"the code signer's key or certificate: {exc}") from None
    try:
        data = pf.build(args.name, args.version, files, signing_key=key, certificate=cert,  # type: ignore[arg-type]
                        description=args.description)
        summary = pf.parse(data).summary()
        pf.parse(data).checked_options(accept_game_options)
    except pf.PackageRejected as exc:
        raise UsageError(str(exc)) from None
    try:
        Path(args.out).write_bytes(data)
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    if args.json:
        emit_json({"out": args.out, **summary})
    else:
        sys.stdout.write(f"{args.out}: {summary['name']} {summary['version']}, {len(summary['files'])} files, "
                         f"signed by {summary['signer']}; sha256 {summary['sha256']}\n")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from egmproto import package_format as pf
    from egmproto.errors import HostLinkError
    from egmproto.identity import Trust
    from firmware.cabinet.packages import accept_game_options
    from firmware.errors import UsageError

    data = read_limited(args.package, "package", pf.MAX_PACKAGE_BYTES + 1)
    try:
        trust = Trust(args.pki)
    except HostLinkError as exc:
        raise UsageError(str(exc)) from None
    try:
        package = pf.load(data, lambda cert: trust.check(cert, "code-signer"))
        package.checked_options(accept_game_options)
    except pf.PackageRejected as exc:
        if args.json:
            emit_json({"ok": False, "reason": exc.reason, "detail": exc.detail})
        else:
            sys.stdout.write(f"{args.package}: REJECTED ({exc.reason}): {exc.detail}\n")
        return 1
    if args.json:
        emit_json({"ok": True, **package.summary(), "games": sorted(package.options())})
    else:
        sys.stdout.write(f"{args.package}: ok: {package.name} {package.version} signed by "
                         f"{pf.signer_name(package.certificate)}; games {', '.join(sorted(package.options()))}\n")
    return 0
