"""``egm certs request|sign|install``: enrolment with the key made on the cabinet (``egmproto.pki_enrol``).

``request`` (on the cabinet) writes a new key (0600) and a CSR under ``<state-dir>/pki/requests``;
``sign`` (at the CA) checks the CSR and issues the kind's fixed profile, recorded in the CA's index;
``install`` (on the cabinet) checks the certificate is for this machine's key and chains to the CA,
then puts it, the CA, the CRL and the peers' certificates into ``<state-dir>/pki``.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from pathlib import Path

from firmware.commands._common import emit_json, json_argument

REQUEST_KINDS = ("terminal", "host", "code-signer")


def register(csub: argparse._SubParsersAction, days: Callable[[str], int]) -> None:  # type: ignore[type-arg]
    r = csub.add_parser("request", help="on the cabinet: a new key (0600) and a certificate signing request")
    r.add_argument("--state-dir", required=True, metavar="DIR", help="the cabinet's state directory (/var/lib/egm)")
    r.add_argument("--name", required=True, help="the terminal id (or host / code signer name)")
    r.add_argument("--kind", choices=REQUEST_KINDS, default="terminal", help="default terminal")
    r.add_argument("--replace", action="store_true", help="replace a pending request (its key is lost)")
    json_argument(r)
    r.set_defaults(func=_request)

    s = csub.add_parser("sign", help="at the CA: check a CSR and issue its certificate (the kind's fixed profile)")
    s.add_argument("--dir", required=True, help="the CA directory")
    s.add_argument("--csr", required=True, metavar="FILE", help="the request (PEM or DER) from egm certs request")
    s.add_argument("--kind", required=True, choices=REQUEST_KINDS, help="what the certificate is for")
    s.add_argument("--dns", action="append", default=[], metavar="NAME", help="a DNS name (host only; repeatable)")
    s.add_argument("--ip", action="append", default=[], metavar="ADDR", help="an IP address (host only; repeatable)")
    s.add_argument("--days", type=days, default=825, help="validity in days (default 825)")
    s.add_argument("--renew", action="store_true",
                   help="the name has a valid certificate of this kind: sign a new key for it (rotation)")
    s.add_argument("--out", metavar="FILE", help="also copy the certificate here (for the cabinet)")
    json_argument(s)
    s.set_defaults(func=_sign)

    i = csub.add_parser("install", help="on the cabinet: install a signed certificate for this machine's key")
    i.add_argument("--state-dir", required=True, metavar="DIR", help="the cabinet's state directory (/var/lib/egm)")
    i.add_argument("--cert", required=True, metavar="FILE", help="the certificate egm certs sign made")
    i.add_argument("--ca", required=True, metavar="FILE", help="the site CA's certificate (ca.cert.pem)")
    i.add_argument("--crl", metavar="FILE", help="the CA's current CRL (crl.pem)")
    i.add_argument("--peer", action="append", default=[], metavar="FILE",
                   help="a peer's certificate to trust by name, e.g. the host's egm-host and egm-host.kem (repeatable)")
    json_argument(i)
    i.set_defaults(func=_install)


def _request(args: argparse.Namespace) -> int:
    from egmproto.pki_enrol import make_request

    req = make_request(args.state_dir, args.name, args.kind, replace=args.replace)
    if args.json:
        emit_json({"name": req.name, "kind": req.kind, "key": str(req.key), "csr": str(req.csr)})
    else:
        print(f"{req.kind} {req.name}: key {req.key} (0600, stays here); request {req.csr}: take it to the CA")
    return 0


def _sign(args: argparse.Namespace) -> int:
    from egmproto.pki import PkiError
    from egmproto.pki_enrol import sign_request

    if args.out:                                          # a bad --out before anything is signed
        out = Path(args.out)
        if out.exists() or not out.parent.is_dir():
            raise PkiError(f"--out {out}: exists already, or its directory does not")
    issued = sign_request(args.dir, args.csr, args.kind, days=args.days, dns=tuple(args.dns), ips=tuple(args.ip),
                          renew=args.renew)
    if args.out:
        try:
            shutil.copyfile(issued.cert, args.out)
        except OSError as exc:
            raise PkiError(f"signed (serial {issued.serial}, {issued.cert}) but cannot copy to {args.out}: "
                           f"{exc.strerror or exc}") from None
    if args.json:
        emit_json({"kind": issued.kind, "name": issued.name, "serial": issued.serial, "cert": str(issued.cert),
                   "out": args.out})
    else:
        print(f"signed {issued.kind} {issued.name}: serial {issued.serial}, {issued.cert}"
              + (f" (copy {args.out})" if args.out else ""))
    return 0


def _install(args: argparse.Namespace) -> int:
    from egmproto.pki_enrol import install

    done = install(args.state_dir, args.cert, args.ca, crl_path=args.crl, peers=tuple(args.peer))
    if args.json:
        emit_json({"name": done.name, "kind": done.kind, "serial": done.serial, "cert": str(done.cert),
                   "key": str(done.key), "ca": str(done.ca), "crl": None if done.crl is None else str(done.crl),
                   "peers": [str(p) for p in done.peers]})
    else:
        print(f"installed {done.kind} {done.name} serial {done.serial}: {done.cert} (key {done.key})")
    return 0
