"""``egm release sign|verify``: detached code-signer signatures of release files (docs/release.md).

``sign`` writes ``FILE.sig`` for a file (the Debian packages of ``make release``) with the code
signer's key and certificate; ``verify`` checks a file against its signature and the casino CA
(exit 0 only if the certificate is a valid code signer of that CA and the file is exactly the signed
one), so a technician can check a package before installing it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from firmware.commands._common import json_argument


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("release", help="release files: detached code-signer signatures (sign, verify)")
    rsub = p.add_subparsers(dest="release_command", metavar="ACTION")
    rsub.required = True

    s = rsub.add_parser("sign", help="sign FILE with the code signer's key (writes FILE.sig)")
    s.add_argument("file", metavar="FILE", help="the file to sign (e.g. a .deb)")
    s.add_argument("--key", required=True, help="the code signer's private key (Ed25519, PKCS#8 PEM)")
    s.add_argument("--cert", required=True, help="the code signer's certificate (egm certs issue --kind code-signer)")
    s.add_argument("--out", help="the signature file (default FILE.sig)")
    s.add_argument("--password-env", metavar="VAR",
                   help="environment variable holding the passphrase of an encrypted key")
    json_argument(s)
    s.set_defaults(func=_sign)

    v = rsub.add_parser("verify", help="check FILE against its signature and the casino CA (exit 0 only if good)")
    v.add_argument("file", metavar="FILE", help="the file to check (e.g. a .deb)")
    v.add_argument("--ca", required=True, help="the casino CA's certificate (PEM)")
    v.add_argument("--crl", help="the CA's certificate revocation list (PEM)")
    v.add_argument("--sig", help="the signature file (default FILE.sig)")
    json_argument(v)
    v.set_defaults(func=_verify)


def _sign(args: argparse.Namespace) -> int:
    from egmproto.release_signature import sign_file, write_signature
    from firmware.cabinet.software import load_private_key
    from firmware.commands._common import emit_json, password_from_env
    from firmware.errors import UsageError

    if not Path(args.file).is_file():
        raise UsageError(f"{args.file} is not a file")
    key = load_private_key(Path(args.key), password_from_env(args.password_env))
    try:
        cert_pem = Path(args.cert).read_bytes()
    except OSError as exc:
        raise UsageError(f"--cert {args.cert}: {exc.strerror or exc}") from None
    document = sign_file(args.file, key, cert_pem)
    out = args.out or f"{args.file}.sig"
    try:
        write_signature(out, document)
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    statement = document["statement"]
    if args.json:
        emit_json({"file": str(args.file), "signature": out, **statement})
    else:
        print(f"{out}: {statement['file']} signed ({statement['size']} bytes, sha256 {statement['sha256']})")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from egmproto.pki import PkiError
    from egmproto.release_signature import verify_file
    from firmware.commands._common import emit_json
    from firmware.errors import UsageError

    if not Path(args.file).is_file():
        raise UsageError(f"{args.file} is not a file")
    sig = args.sig or f"{args.file}.sig"
    try:
        check = verify_file(args.file, sig, args.ca, args.crl)
    except PkiError as exc:
        if args.json:
            emit_json({"ok": False, "file": str(args.file), "reason": str(exc)})
        print(f"egm release verify: FAILED: {exc}", file=sys.stderr)
        return 1
    if args.json:
        emit_json({"ok": True, "file": str(args.file), "sha256": check.sha256, "size": check.size,
                   "signer": check.signer, "serial": check.serial})
    else:
        print(f"{args.file}: OK, signed by code signer {check.signer} (serial {check.serial}), "
              f"sha256 {check.sha256}")
    return 0
