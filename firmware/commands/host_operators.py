"""``egm host operator add|list|disable|enable``: the people who log in to the floor page
(docs/floor-web.md). The password is read from a prompt (twice) or, with ``--password-stdin``, from
the first line of standard input; it is stored only as an argon2id hash."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from firmware.commands._common import emit_json, json_argument


def register_operators(hsub: argparse._SubParsersAction,
                       common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = hsub.add_parser("operator", help="the floor page's operators: add, list, disable, enable")
    osub = p.add_subparsers(dest="operator_command", metavar="ACTION")
    osub.required = True
    a = osub.add_parser("add", help="a new operator (password from a prompt or --password-stdin)")
    common(a)
    a.add_argument("name", metavar="NAME", help="1-32 letters, digits, '.', '_' or '-'")
    a.add_argument("--role", required=True, choices=("attendant", "floor-manager", "auditor"),
                   help="attendant: floor, terminals, vouchers, send meters; floor-manager: also disable, "
                        "enable, set time; auditor: reads everything incl. the operator log, no commands")
    a.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    json_argument(a)
    a.set_defaults(func=_add)
    ls = osub.add_parser("list", help="every operator: name, role, created, disabled")
    common(ls)
    json_argument(ls)
    ls.set_defaults(func=_list)
    for verb in ("disable", "enable"):
        d = osub.add_parser(verb, help=f"{verb} an operator's login (a disabled one is logged out at the next click)"
                            if verb == "disable" else "let a disabled operator log in again")
        common(d)
        d.add_argument("name", metavar="NAME", help="the operator's name")
        json_argument(d)
        d.set_defaults(func=_set_disabled, disabled=verb == "disable")


def _password(args: argparse.Namespace) -> str:
    from firmware.errors import UsageError

    if args.password_stdin:
        line = sys.stdin.readline()
        return line[:-1] if line.endswith("\n") else line
    import getpass

    first = getpass.getpass(f"password for {args.name}: ")
    if getpass.getpass("again: ") != first:
        raise UsageError("the two passwords differ; nothing changed")
    return first


def _operators(args: argparse.Namespace, write: bool = False):
    from firmware.commands.host import _store
    from host.store_operators import Operators

    store = _store(args, create=write, write=write)
    return store, Operators(store)


def _add(args: argparse.Namespace) -> int:
    from firmware.errors import UsageError
    from host.store_errors import HostStoreError
    from host.store_operators import check_name

    try:
        check_name(args.name)
    except HostStoreError as exc:
        raise UsageError(str(exc)) from None
    password = _password(args)
    store, operators = _operators(args, write=True)
    with store:
        try:
            added = operators.add(args.name, args.role, password)
        except HostStoreError as exc:
            raise UsageError(f"{exc}; nothing changed") from None
    doc = {"name": added.name, "role": added.role, "created_at": added.created_at, "disabled": False}
    if args.json:
        emit_json(doc)
    else:
        sys.stdout.write(f"operator {added.name} added ({added.role})\n")
    return 0


def _list(args: argparse.Namespace) -> int:
    store, operators = _operators(args)
    with store:
        rows = [{"name": o.name, "role": o.role, "created_at": o.created_at, "disabled": o.disabled}
                for o in operators.all()]
    if args.json:
        emit_json(rows)
        return 0
    for r in rows:
        sys.stdout.write(f"{r['name']:<20} {r['role']:<14} created {r['created_at'][:19]}"
                         f"{'  DISABLED' if r['disabled'] else ''}\n")
    if not rows:
        sys.stdout.write("no operator yet (egm host operator add NAME --role ROLE)\n")
    return 0


def _set_disabled(args: argparse.Namespace) -> int:
    from firmware.errors import UsageError
    from host.store_errors import HostStoreError

    store, operators = _operators(args, write=True)
    with store:
        try:
            operators.set_disabled(args.name, args.disabled)
        except HostStoreError as exc:
            raise UsageError(str(exc)) from None
    if args.json:
        emit_json({"name": args.name, "disabled": args.disabled})
    else:
        sys.stdout.write(f"operator {args.name} {'disabled' if args.disabled else 'enabled'}\n")
    return 0
