"""``egm certs init|issue|list|revoke|crl|renew|verify|dev|request|sign|install``: the casino PKI (``docs/pki.md``).

``init`` creates a CA in a directory outside the repository; ``issue`` makes a terminal, host or
code-signer certificate and its key (0600); ``list`` shows what the CA issued; ``revoke`` revokes by
serial or name and rewrites ``crl.pem``; ``crl`` signs a fresh CRL; ``renew`` makes a new key and
certificate with the same subject (the old one stays valid until revoked or expired); ``verify``
checks a certificate against the CA and its CRL (exit 0 only if it verifies); ``dev`` makes the
development CA and certificates in a state directory (idempotent). ``request``, ``sign`` and
``install``: enrolment with the key made on the cabinet (``firmware/commands/_certs_enrol.py``).
"""

from __future__ import annotations

import argparse
import sys

from firmware.commands._common import json_argument

KINDS = ("terminal", "host", "code-signer", "host-kem", "update-signer")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("certs", help="the casino PKI: CA, terminal/host/code-signer certificates, CRL")
    csub = p.add_subparsers(dest="certs_command", metavar="ACTION")
    csub.required = True

    i = csub.add_parser("init", help="create a CA (ECDSA P-256) in --dir")
    _dir(i)
    i.add_argument("--name", default="Development Casino CA", help="the CA's common name")
    i.add_argument("--days", type=_days, default=3650, help="validity in days (default 3650)")
    json_argument(i)
    i.set_defaults(func=_init)

    s = csub.add_parser("issue", help="issue a certificate and a new private key")
    _dir(s)
    s.add_argument("--kind", required=True, choices=KINDS, help="what the certificate is for: " + ", ".join(KINDS))
    s.add_argument("--name", required=True, help="terminal id, host name, code signer name or host-kem name")
    s.add_argument("--dns", action="append", default=[], metavar="NAME",
                   help="a DNS name of the host (repeatable; host only)")
    s.add_argument("--ip", action="append", default=[], metavar="ADDR",
                   help="an IP address of the host (repeatable; host only)")
    s.add_argument("--days", type=_days, default=825, help="validity in days (default 825)")
    json_argument(s)
    s.set_defaults(func=_issue)

    ls = csub.add_parser("list", help="every certificate the CA issued")
    _dir(ls)
    json_argument(ls)
    ls.set_defaults(func=_list)

    r = csub.add_parser("revoke", help="revoke by serial (hex) or name, and rewrite crl.pem")
    _dir(r)
    r.add_argument("target", metavar="SERIAL|NAME", help="the certificate to revoke: its serial number or its name")
    r.add_argument("--reason", default="unspecified",
                   help="RFC 5280 reason: unspecified, key-compromise, superseded, "
                        "cessation-of-operation, affiliation-changed, ... (default unspecified)")
    json_argument(r)
    r.set_defaults(func=_revoke)

    c = csub.add_parser("crl", help="sign a fresh CRL (next update in 7 days) into DIR/crl.pem")
    _dir(c)
    c.add_argument("--out", help="also write it here")
    c.set_defaults(func=_crl)

    n = csub.add_parser("renew", help="a new key and certificate for NAME (same subject)")
    _dir(n)
    n.add_argument("name", metavar="NAME", help="the issued certificate to renew (issued/NAME.cert.pem)")
    n.add_argument("--days", type=_days, default=825, help="validity in days (default 825)")
    json_argument(n)
    n.set_defaults(func=_renew)

    v = csub.add_parser("verify", help="verify a certificate against the CA and its CRL")
    _dir(v)
    v.add_argument("cert", metavar="CERT.pem", help="the certificate file to verify")
    v.add_argument("--expect", choices=KINDS, help="the role the certificate must be able to play")
    json_argument(v)
    v.set_defaults(func=_verify)

    d = csub.add_parser("dev", help="the development CA and certificates under STATE_DIR/pki (idempotent)")
    d.add_argument("--state-dir", metavar="DIR",
                   help="the terminal's state directory (default: egm run's for the terminal ID)")
    d.add_argument("--terminal", required=True, metavar="ID", help="the terminal id")
    json_argument(d)
    d.set_defaults(func=_dev)

    from firmware.commands._certs_enrol import register as register_enrolment

    register_enrolment(csub, _days)


def _dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dir", required=True, help="the CA directory (outside the repository)")


def _days(text: str) -> int:
    from firmware.commands._common import positive_int

    return positive_int(text)


def _init(args: argparse.Namespace) -> int:
    from egmproto.pki import create_ca
    from firmware.commands._common import emit_json

    files = create_ca(args.dir, name=args.name, days=args.days)
    if args.json:
        emit_json({"dir": str(files.directory), "cert": str(files.cert), "key": str(files.key),
                   "crl": str(files.crl), "index": str(files.index)})
    else:
        print(f"CA {args.name!r} created: {files.cert} (key {files.key}, 0600)")
    return 0


def _issued_doc(issued) -> dict:
    return {"kind": issued.kind, "name": issued.name, "serial": issued.serial,
            "cert": str(issued.cert), "key": str(issued.key)}


def _issue(args: argparse.Namespace) -> int:
    from egmproto.pki import issue
    from firmware.commands._common import emit_json

    issued = issue(args.dir, args.kind, args.name, days=args.days, dns=args.dns, ips=args.ip)
    if args.json:
        emit_json(_issued_doc(issued))
    else:
        print(f"{issued.kind} {issued.name}: serial {issued.serial}, {issued.cert} (key {issued.key}, 0600)")
    return 0


def _list(args: argparse.Namespace) -> int:
    from egmproto.pki import list_certs
    from firmware.commands._common import emit_json

    certs = list_certs(args.dir)
    if args.json:
        emit_json(certs)
        return 0
    if not certs:
        print("no certificates issued")
    for c in certs:
        state = f"REVOKED {c['revoked_at']} ({c['reason']})" if c["revoked"] else "valid"
        print(f"{c['serial']:<40}  {c['kind']:<11}  {c['name']:<32}  until {c['not_after']}  {state}")
    return 0


def _revoke(args: argparse.Namespace) -> int:
    from egmproto.pki import revoke
    from firmware.commands._common import emit_json

    revoked = revoke(args.dir, args.target, args.reason)
    if args.json:
        emit_json([{"serial": e["serial"], "kind": e["kind"], "name": e["name"],
                    "reason": e["revoked"]["reason"]} for e in revoked])
    else:
        for e in revoked:
            print(f"revoked {e['kind']} {e['name']} serial {e['serial']} ({e['revoked']['reason']}); crl.pem rewritten")
    return 0


def _crl(args: argparse.Namespace) -> int:
    from pathlib import Path

    from egmproto.pki import ca_files, crl
    from firmware.errors import UsageError

    pem = crl(args.dir)
    if args.out:
        try:
            Path(args.out).write_bytes(pem)
        except OSError as exc:
            raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"CRL signed: {ca_files(args.dir).crl} (next update in 7 days)")
    return 0


def _renew(args: argparse.Namespace) -> int:
    from egmproto.pki import renew
    from firmware.commands._common import emit_json

    issued = renew(args.dir, args.name, days=args.days)
    if args.json:
        emit_json(_issued_doc(issued))
    else:
        print(f"renewed {issued.kind} {issued.name}: new serial {issued.serial}, {issued.cert}; "
              "the previous certificate stays valid until revoked or expired")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from egmproto.pki import (
        PkiError,
        ca_files,
        cert_kind,
        common_name,
        load_certificate,
        serial_hex,
        verify_chain,
    )
    from firmware.commands._common import emit_json

    files = ca_files(args.dir)
    if not files.cert.is_file():
        raise PkiError(f"no CA certificate in {args.dir} ({files.cert.name} missing)")
    cert = load_certificate(args.cert)
    crl = files.crl if files.crl.is_file() else None
    try:
        verify_chain(cert, files.cert, crl, expect=args.expect)
    except PkiError as exc:
        if args.json:
            emit_json({"ok": False, "cert": args.cert, "reason": str(exc)})
        print(f"egm certs verify: FAILED: {args.cert}: {exc}", file=sys.stderr)
        return 1
    doc = {"ok": True, "cert": args.cert, "kind": cert_kind(cert), "name": common_name(cert),
           "serial": serial_hex(cert.serial_number), "crl_checked": crl is not None}
    if args.json:
        emit_json(doc)
    else:
        note = "" if crl is not None else " (no crl.pem: revocation not checked)"
        print(f"ok: {args.cert}: {doc['kind']} {doc['name']}, serial {doc['serial']}{note}")
    return 0


def _dev(args: argparse.Namespace) -> int:
    from egmproto.pki import ensure_development_pki
    from firmware.commands._common import checked_state_dir, default_state_dir, emit_json

    state = checked_state_dir(args.state_dir or default_state_dir(args.terminal), create=True)
    paths = ensure_development_pki(state, args.terminal)
    if args.json:
        emit_json({k: str(v) for k, v in paths.items()})
    else:
        print(f"development PKI in {paths['dir']} (not for production)")
        for k, v in paths.items():
            if k != "dir":
                print(f"  {k:<17} {v}")
    return 0
