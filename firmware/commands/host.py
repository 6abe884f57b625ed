"""``egm host serve|meters|events|floor|sequence|rejections|vouchers|disable|enable|send-meters|set-time|offer-package|operator|loadtest|broker-config``.

``offer-package`` verifies a code-signed game package, keeps it in ``<state-dir>/packages`` and queues
the offer. ``serve`` runs the reference casino host (``host/``): with ``--listen PORT`` it also runs an embedded
MQTT broker (TLS with the host's certificate) in the same process; with ``--broker URL`` it connects
to the casino's broker; with ``--jetstream`` too, the reports come from the floor broker cluster's
JetStream stream (several ``serve`` processes share them) and MQTT is only the way out; with ``--web HOST:PORT``
it also serves the floor page (``host/web/``). The reports, meters, events, rounds, vouchers and refusals go to the store
(``<state-dir>/host.db``, or ``--db URL`` for PostgreSQL). The other actions read that store; the
commands (``disable`` ...) are queued in it and sent, signed, by the running ``serve``.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from firmware.commands._common import checked_state_dir, emit_json, positive_int, read_limited


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("host", help="the reference casino host: serve, and read what it stored")
    hsub = p.add_subparsers(dest="host_command", metavar="ACTION")
    hsub.required = True

    s = hsub.add_parser("serve", help="run the host (and with --listen an embedded broker)")
    _common(s)
    s.add_argument("--pki", help="PKI directory (default <state-dir>/pki; with --dev-pki made if missing)")
    s.add_argument("--dev-pki", metavar="TERMINAL", action="append", default=[],
                   help="create a development PKI in --pki with a certificate for TERMINAL (repeatable)")
    where = s.add_mutually_exclusive_group()
    where.add_argument("--listen", type=int, metavar="PORT", help="run an embedded broker on 127.0.0.1:PORT")
    where.add_argument("--broker", metavar="URL", help="connect to this broker (mqtt:// or mqtts://; a cluster: "
                       "mqtts://H1:P1,H2:P2,... tried in turn)")
    s.add_argument("--jetstream", metavar="URL[,URL...]",
                   help="take the terminals' reports from the floor broker cluster's JetStream (NATS client "
                        "URLs, tls://HOST:PORT,...) as one worker of the host's consumer group, and send to the "
                        "terminals through the same nodes (no --broker then; docs/floor-cluster.md)")
    s.add_argument("--plain", action="store_true", help="the embedded broker without TLS (tests, benchmarks)")
    s.add_argument("--name", default="egm-host", help="the host's certificate name in the PKI (default egm-host)")
    s.add_argument("--kem-name", default="egm-host.kem", help="the host's encryption certificate name")
    s.add_argument("--packages-bind", default="127.0.0.1:0", metavar="ADDR:PORT",
                   help="where the package server listens (HTTPS, terminal certificates required; "
                        "port 0: any free port)")
    s.add_argument("--packages-public-host", metavar="NAME",
                   help="the host name terminals use in package URLs (default: the bind address)")
    s.add_argument("--workers", type=positive_int, default=1, metavar="N",
                   help="run N host worker processes sharing the terminals' reports (an MQTT shared "
                        "subscription: needs --broker of a broker that has them, e.g. Mosquitto) and one "
                        "PostgreSQL --db (default 1)")
    s.add_argument("--worker", type=int, metavar="I",
                   help="this process is worker I of --workers (set by --workers for each process it starts)")
    s.add_argument("--web", metavar="HOST:PORT", help="also serve the floor page over HTTPS here (docs/floor-web.md)")
    s.add_argument("--web-cert", metavar="NAME", help="the floor page's certificate in the PKI (default: --name)")
    s.add_argument("--web-offline-after", type=positive_int, metavar="S",
                   help="the floor page shows a terminal offline after S seconds without a report (default 660)")
    s.set_defaults(func=_serve)

    from firmware.commands.host_operators import register_operators

    register_operators(hsub, _common)

    o = hsub.add_parser("offer-package", help="verify a signed game package and offer it to a terminal")
    _common(o)
    o.add_argument("terminal", metavar="TERMINAL", help="the terminal id the package is offered to")
    o.add_argument("package", help="the .egmpkg file (egm package build)")
    o.add_argument("--pki", help="PKI directory (default <state-dir>/pki)")
    o.add_argument("--json", action="store_true", help="print one JSON document (for machines) instead of text for people")
    o.set_defaults(func=_offer_package)

    for name, text in (("meters", "the meters each terminal last reported"),
                       ("events", "the events the host stored, newest first"),
                       ("rounds", "the round records the host stored, newest first")):
        q = hsub.add_parser(name, help=text)
        _common(q)
        q.add_argument("terminal", nargs="?", help="only this terminal")
        if name != "meters":
            q.add_argument("--last", type=positive_int, default=100, help="how many, newest first (default 100)")
        q.add_argument("--json", action="store_true", help="print one JSON document (for machines) instead of text for people")
        q.set_defaults(func=_query)

    f = hsub.add_parser("floor", help="every terminal: last report, credits, open tilts, disabled")
    _common(f)
    f.add_argument("--json", action="store_true", help="print one JSON document (for machines) instead of text for people")
    f.set_defaults(func=_query)

    q = hsub.add_parser("sequence", help="a terminal's stored report numbers: count, first, last, gaps")
    _common(q)
    q.add_argument("terminal", metavar="TERMINAL", help="the terminal id")
    q.add_argument("--json", action="store_true", help="print one JSON document (for machines) instead of text for people")
    q.set_defaults(func=_query)

    r = hsub.add_parser("rejections", help="messages the host refused, and why")
    _common(r)
    r.add_argument("--last", type=positive_int, default=100, help="how many, newest first (default 100)")
    r.add_argument("--json", action="store_true", help="print one JSON document (for machines) instead of text for people")
    r.set_defaults(func=_query)

    v = hsub.add_parser("vouchers", help="vouchers the host knows, and their state")
    _common(v)
    v.add_argument("terminal", nargs="?", metavar="TERMINAL", help="only this terminal's (default: every terminal's)")
    v.add_argument("--json", action="store_true", help="print one JSON document (for machines) instead of text for people")
    v.set_defaults(func=_query)

    for name, text in (("disable", "stop play on a terminal"), ("enable", "allow play again"),
                       ("send-meters", "ask a terminal for its meters now"),
                       ("set-time", "set a terminal's clock (default: the host's time now)")):
        c = hsub.add_parser(name, help=text)
        _common(c)
        c.add_argument("terminal", metavar="TERMINAL", help="the terminal id")
        if name == "disable":
            c.add_argument("--reason", default="disabled by the host", help="why, shown and logged (default: disabled by the host)")
        if name == "set-time":
            c.add_argument("--iso", help="ISO 8601 time with offset")
        c.add_argument("--json", action="store_true", help="print one JSON document (for machines) instead of text for people")
        c.set_defaults(func=_command, command=name)

    from firmware.commands._loadtest.cli import add_parser

    add_parser(hsub)

    from firmware.commands._broker_config import add_parser as add_broker_config

    add_broker_config(hsub)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state-dir", required=True, help="the host's state directory (host.db)")
    p.add_argument("--db", help="database URL (default sqlite in <state-dir>/host.db; postgresql://...)")


def _store(args: argparse.Namespace, create: bool = False, write: bool = False):
    """The host store: ``--db``, else ``<state-dir>/host.db`` (made only when ``create``)."""
    from firmware.errors import UsageError
    from host.store import HostStore

    if args.db:
        return HostStore.open(args.db)
    path = checked_state_dir(args.state_dir, write=write, create=create) / "host.db"
    if not create and not path.exists():
        raise UsageError(f"no host store in {args.state_dir} (host.db); is this a host's --state-dir?")
    path.parent.mkdir(parents=True, exist_ok=True)
    return HostStore.open(str(path))


def _bind(text: str) -> tuple[str, int]:
    from firmware.errors import UsageError

    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--packages-bind {text!r}: expected ADDRESS:PORT (port 0-65535)")
    return host, int(port)


def _serve(args: argparse.Namespace) -> int:
    import contextlib
    import signal
    import threading

    from egmproto.identity import HostIdentity
    from egmproto.pki import ensure_development_pki
    from firmware.errors import UsageError
    from host.runner import start_host

    state = checked_state_dir(args.state_dir, create=True)
    if args.workers > 1:
        from firmware.commands import _host_workers

        _host_workers.check(args)
    pki = Path(args.pki) if args.pki else state / "pki"
    if args.dev_pki and args.pki:
        raise UsageError("--dev-pki makes the development PKI in <state-dir>/pki; leave out --pki")
    if args.listen is None and args.broker is None and args.jetstream is None:
        raise UsageError("give --listen PORT (an embedded broker), --broker URL, or --jetstream URLs (the floor "
                         "broker cluster)")
    if args.jetstream is not None:
        from host.jetstream import parse_urls

        if args.listen is not None or args.broker is not None:
            raise UsageError("--jetstream: the host takes the reports from the floor broker cluster and sends "
                             "through its NATS nodes; leave out --listen and --broker")
        try:
            parse_urls(args.jetstream)
        except ValueError as exc:
            raise UsageError(f"--jetstream: {exc}") from None
    bind = _bind(args.packages_bind)
    if args.web:
        from host.web.serve import parse_bind

        try:
            parse_bind(args.web)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    for terminal in args.dev_pki:
        ensure_development_pki(state, terminal)
    HostIdentity(pki, name=args.name, kem_name=args.kem_name)       # the PKI is usable: else one clear error
    state.mkdir(parents=True, exist_ok=True)
    if args.workers > 1:
        return _host_workers.supervise(args)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):
            signal.signal(sig, lambda *_: stop.set())
    issued = pki / "issued"
    with contextlib.ExitStack() as stack:
        if args.listen is not None:
            from firmware.hostlink.broker import EmbeddedBroker

            tls = (issued / f"{args.name}.cert.pem", issued / f"{args.name}.key.pem", pki / "ca.cert.pem")
            broker = EmbeddedBroker("127.0.0.1", args.listen, tls=None if args.plain else tls,
                                    crl=None if args.plain else pki / "crl.pem")
            broker.start()
            stack.callback(broker.stop)
            url = broker.url
        else:
            url = args.broker or ""
        store = _store(args, create=True)
        stack.callback(store.close)
        host = start_host(stack, store=store, pki=pki, broker_url=url, name=args.name, kem_name=args.kem_name,
                          packages_dir=None if args.plain else state / "packages", packages_bind=bind,
                          packages_public_host=args.packages_public_host, worker=args.worker,
                          jetstream_urls=args.jetstream)
        packages = "" if host.packages is None else f"; packages {host.packages.base_url}"
        if args.web:
            from host.web.serve import start_web

            web = start_web(stack, store=store, state_dir=state, pki=pki, cert_name=args.web_cert or args.name,
                            bind=args.web, offline_after_s=args.web_offline_after)
            packages += f"; floor {web.url}"
        via = f"; reports from JetStream {args.jetstream}" if args.jetstream else ""
        sys.stdout.write(f"egm host: {url}{via}; store {args.db or state / 'host.db'}; pki {pki}{packages}\n")
        sys.stdout.flush()
        while not stop.wait(0.2):
            pass
        sys.stdout.write(f"egm host: stopped; {dict(host.server.stats)}\n")
        sys.stdout.flush()          # now: a worker whose shutdown overruns --workers' stop time is killed
    return 0


def _offer_package(args: argparse.Namespace) -> int:
    from egmproto.errors import HostLinkError
    from egmproto.identity import Trust
    from egmproto.package_format import MAX_PACKAGE_BYTES, PackageRejected
    from egmproto.pki import PkiError, validate_name
    from firmware.cabinet.packages import accept_game_options
    from firmware.errors import UsageError
    from host.packages import PackageDepot

    try:
        validate_name(args.terminal, "terminal id")
    except PkiError as exc:
        raise UsageError(str(exc)) from None
    data = read_limited(args.package, "package", MAX_PACKAGE_BYTES)
    state = checked_state_dir(args.state_dir, write=True)
    try:
        trust = Trust(Path(args.pki) if args.pki else state / "pki")
    except HostLinkError as exc:
        raise UsageError(str(exc)) from None
    with _store(args, write=True) as store:            # no host store: nothing kept in packages/ either
        try:
            package = PackageDepot(state / "packages").add(data, lambda cert: trust.check(cert, "code-signer"),
                                                           accept_game_options)
        except PackageRejected as exc:
            raise UsageError(f"{args.package}: not offered: {exc}") from None
        body = {"name": package.name, "version": package.version, "sha256": package.sha256}
        command_id = store.queue_command(args.terminal, "package_offer", body)
    return _print(args, {"queued": command_id, "terminal": args.terminal, "type": "package_offer",
                         "body": body, "package": package.summary()})


def _print(args: argparse.Namespace, doc) -> int:
    if getattr(args, "json", False):
        emit_json(doc)
    else:
        import json

        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    return 0


#: The read-only actions: what each asks the store (every one prints JSON; ``floor`` also a table).
QUERIES = {
    "meters": lambda store, a: store.meters(a.terminal),
    "events": lambda store, a: store.events(a.terminal, last=a.last),
    "rounds": lambda store, a: store.rounds(a.terminal, last=a.last),
    "floor": lambda store, a: store.terminals(),
    "sequence": lambda store, a: store.sequence(a.terminal),
    "rejections": lambda store, a: store.rejections(last=a.last),
    "vouchers": lambda store, a: store.vouchers(a.terminal),
}


def _query(args: argparse.Namespace) -> int:
    with _store(args) as store:
        doc = QUERIES[args.host_command](store, args)
    if args.host_command != "floor" or args.json:
        return _print(args, doc)
    for t in doc:
        tilts = ", ".join(t["open_tilts"]) or "-"
        credits = "-" if t["credits"] is None else f"{t['credits']} cents"
        sys.stdout.write(f"{t['terminal']:<16} last report {t['last_seq']:>7} at {t['last_seen']}  "
                         f"credits {credits:<14} tilts {tilts}{'  DISABLED' if t['disabled'] else ''}\n")
    return 0


def _command(args: argparse.Namespace) -> int:
    from firmware.errors import UsageError

    body: dict = {}
    if args.command == "disable":
        body = {"reason": args.reason}
    elif args.command == "set-time":
        iso = args.iso or datetime.now(UTC).isoformat()
        try:
            if datetime.fromisoformat(iso).tzinfo is None:
                raise ValueError
        except ValueError:
            raise UsageError(f"--iso {iso!r} is not an ISO 8601 time with an offset") from None
        body = {"iso": iso}
    from egmproto.pki import PkiError, validate_name

    try:
        validate_name(args.terminal, "terminal id")
    except PkiError as exc:
        raise UsageError(str(exc)) from None
    type_ = args.command.replace("-", "_")
    with _store(args, write=True) as store:
        command_id = store.queue_command(args.terminal, type_, body)
    return _print(args, {"queued": command_id, "terminal": args.terminal, "type": type_, "body": body})
