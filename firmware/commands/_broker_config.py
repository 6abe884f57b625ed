"""``egm host broker-config``: the ``nats-server`` configuration of one floor broker node
(``host/local/nats_config.py``, the same shape ``NatsCluster`` runs), for ``egm-broker@.service``
(deploy/host/) and the compose floor (deploy/compose/)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from firmware.commands._common import emit_json

PORTS = {"client": 4222, "mqtt": 8883, "route": 6222, "http": 8222}


def add_parser(hsub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = hsub.add_parser("broker-config", help="the nats-server configuration of one floor broker node")
    p.add_argument("--nodes", required=True, metavar="NAME=HOST,...",
                   help="every node of the cluster: its name and the address the others reach it at")
    p.add_argument("--node", required=True, metavar="NAME", help="the node this configuration is for")
    p.add_argument("--pki", required=True, type=Path, metavar="DIR",
                   help="the PKI directory on the node (ca.cert.pem, issued/CERT.cert.pem and .key.pem)")
    p.add_argument("--cert", default="egm-floor-broker", metavar="NAME",
                   help="the node's host-kind certificate name in --pki (default egm-floor-broker)")
    p.add_argument("--store", required=True, type=Path, metavar="DIR", help="the node's JetStream store")
    p.add_argument("--bind", default="0.0.0.0", metavar="ADDR", help="the listeners' address (default 0.0.0.0)")
    p.add_argument("--http-bind", default="127.0.0.1", metavar="ADDR",
                   help="the monitoring listener's address (default 127.0.0.1)")
    p.add_argument("--out", type=Path, metavar="FILE", help="write here (default: standard output)")
    p.add_argument("--json", action="store_true", help="print {node, out, routes} after writing --out")
    p.set_defaults(func=_broker_config)


def parse_nodes(text: str) -> dict[str, str]:
    from egmproto.pki import PkiError, validate_name
    from firmware.errors import UsageError

    nodes: dict[str, str] = {}
    for item in text.split(","):
        name, sep, host = item.strip().partition("=")
        if not sep or not host or any(c in host for c in " \"'/:") and not host.startswith("["):
            raise UsageError(f"--nodes: {item!r}: expected NAME=HOST")
        try:
            validate_name(name, "node name")
        except PkiError as exc:
            raise UsageError(f"--nodes: {exc}") from None
        if name in nodes:
            raise UsageError(f"--nodes: {name} named twice")
        nodes[name] = host
    return nodes


def _broker_config(args: argparse.Namespace) -> int:
    from firmware.errors import UsageError
    from host.local.nats_config import BrokerNode, render

    nodes = parse_nodes(args.nodes)
    if args.node not in nodes:
        raise UsageError(f"--node {args.node}: not one of --nodes ({', '.join(nodes)})")
    routes = [f"{host}:{PORTS['route']}" for name, host in nodes.items() if name != args.node]
    issued = args.pki / "issued"
    text = render(BrokerNode(
        name=args.node, client=f"{args.bind}:{PORTS['client']}", mqtt=f"{args.bind}:{PORTS['mqtt']}",
        http=f"{args.http_bind}:{PORTS['http']}", route=f"{args.bind}:{PORTS['route']}", store_dir=args.store,
        cert=issued / f"{args.cert}.cert.pem", key=issued / f"{args.cert}.key.pem", ca=args.pki / "ca.cert.pem",
        routes=routes, replicas=min(3, len(nodes))))
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        args.out.write_text(text)
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    if args.json:
        emit_json({"node": args.node, "out": str(args.out), "routes": routes})
    else:
        print(f"broker node {args.node}: {args.out} (routes {', '.join(routes) or 'none'})")
    return 0
