"""``egm software manifest|sign|verify|hash|dev-sign``: GLI-11 software verification.

``manifest`` prints the unsigned manifest of the installed software; ``sign`` signs it with the code
signer's Ed25519 key; ``verify`` runs the power-up check (exit 0 only if the software is exactly what
a trusted signer signed); ``hash`` is the lab's verification on request (SHA-1, SHA-256, HMAC with the
lab's seed); ``dev-sign`` makes or refreshes the checkout's development signature. See
``docs/software-verification.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from firmware.commands._common import json_argument


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("software", help="software verification: manifest, code signature, lab hashes")
    ssub = p.add_subparsers(dest="software_command", metavar="ACTION")
    ssub.required = True

    m = ssub.add_parser("manifest", help="the unsigned manifest (every file, SHA-256, size) as JSON")
    _root(m)
    m.add_argument("--out", help="file to write (default: stdout)")
    m.set_defaults(func=_manifest)

    s = ssub.add_parser("sign", help="sign the manifest with the code signer's Ed25519 key")
    s.add_argument("--key", required=True, help="the code signer's private key (PKCS#8 PEM)")
    _root(s)
    s.add_argument("--out", required=True, help="the signed manifest to write")
    s.add_argument("--password-env", metavar="VAR",
                   help="environment variable holding the passphrase of an encrypted key")
    s.set_defaults(func=_sign)

    v = ssub.add_parser("verify", help="verify the signed manifest and every file (exit 0 only if ok)")
    _root(v)
    v.add_argument("--manifest", help="the signed manifest (default: the development one, "
                                      "ROOT/.egm-dev/manifest.signed.json)")
    v.add_argument("--trust", action="append", metavar="PUBLIC.pem",
                   help="a trusted code signer's public key (repeatable; default: the development key)")
    json_argument(v)
    v.set_defaults(func=_verify)

    h = ssub.add_parser("hash", help="the lab's digests on request: per file and overall")
    h.add_argument("--algorithm", required=True, choices=["sha1", "sha256", "hmac-sha1", "hmac-sha256"],
                   help="the digest (the hmac ones keyed with --seed)")
    h.add_argument("--seed", metavar="HEX", help="the lab's seed in hex (HMAC only, required there)")
    _root(h)
    json_argument(h)
    h.set_defaults(func=_hash)

    d = ssub.add_parser("dev-sign", help="make or refresh the development signature (never for production)")
    _root(d)
    d.add_argument("--key-dir", help="where the development key pair and manifest live "
                                     "(default: ROOT/.egm-dev)")
    d.set_defaults(func=_dev_sign)


def _root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", help="the directory holding the packages (default: the installed one)")


def _root_dir(args: argparse.Namespace) -> Path:
    from firmware.cabinet.software import default_root
    from firmware.errors import UsageError

    if args.root is None:
        return default_root()
    root = Path(args.root)
    if not root.is_dir():
        raise UsageError(f"--root {args.root} is not a directory")
    return root


def _write(path: str, text: str) -> None:
    from firmware.cabinet.software import write_atomic
    from firmware.errors import UsageError

    try:
        write_atomic(Path(path), text.encode("utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _manifest(args: argparse.Namespace) -> int:
    import json

    from firmware.cabinet.software import build_manifest
    from firmware.commands._common import emit_json

    manifest = build_manifest(_root_dir(args))
    if args.out:
        _write(args.out, json.dumps(manifest, sort_keys=True, indent=1) + "\n")
        print(f"{args.out}: manifest of {len(manifest['files'])} files (unsigned)")
    else:
        emit_json(manifest)
    return 0


def _sign(args: argparse.Namespace) -> int:
    import hashlib

    from firmware.cabinet.software import (
        build_manifest,
        canonical_bytes,
        load_private_key,
        sign_manifest,
        signed_json,
    )
    from firmware.commands._common import password_from_env

    key = load_private_key(Path(args.key), password_from_env(args.password_env))
    signed = sign_manifest(build_manifest(_root_dir(args)), key)
    _write(args.out, signed_json(signed))
    digest = hashlib.sha256(canonical_bytes(signed["manifest"])).hexdigest()
    print(f"{args.out}: {len(signed['manifest']['files'])} files signed by {signed['signer']} "
          f"(manifest sha256 {digest})")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from firmware.cabinet.software import (
        DEV_DIR_NAME,
        DEV_PUBLIC_KEY,
        SIGNED_MANIFEST,
        verify_installation,
    )
    from firmware.commands._common import emit_json

    root = _root_dir(args)
    manifest = Path(args.manifest) if args.manifest else root / DEV_DIR_NAME / SIGNED_MANIFEST
    trusted = [Path(t) for t in args.trust] if args.trust else [root / DEV_DIR_NAME / DEV_PUBLIC_KEY]
    result = verify_installation(manifest, root, trusted)
    if args.json:
        emit_json(result.to_json())
    elif result.ok:
        print(f"ok: {result.reason}; manifest sha256 {result.manifest_sha256}")
    else:
        for line in result.mismatches:
            print(line)
    if not result.ok:
        hint = ""
        if not args.manifest and not manifest.exists():
            hint = " (egm software dev-sign makes a development signature)"
        print(f"egm software verify: FAILED: {result.reason}{hint}", file=sys.stderr)
        return 1
    return 0


def _hash(args: argparse.Namespace) -> int:
    from firmware.cabinet.software import lab_hash
    from firmware.commands._common import emit_json
    from firmware.errors import UsageError

    seed = None
    if args.seed is not None:
        text = args.seed.strip()
        if text[:2].lower() == "0x":
            text = text[2:]
        try:
            seed = bytes.fromhex(text)
        except ValueError:
            raise UsageError(f"--seed must be hexadecimal digits (an even number of them), "
                             f"not {args.seed!r}") from None
    report = lab_hash(_root_dir(args), args.algorithm, seed)
    if args.json:
        emit_json(report)
    else:
        out = sys.stdout
        for f in report["files"]:
            out.write(f"{f['digest']}  {f['path']}\n")
        out.write(f"overall {report['algorithm']} {report['overall']} ({len(report['files'])} files)\n")
    return 0


def _dev_sign(args: argparse.Namespace) -> int:
    from firmware.cabinet.software import ensure_development_signature

    root = _root_dir(args)
    path = ensure_development_signature(root, Path(args.key_dir) if args.key_dir else None)
    print(f"{path}: development signature of {root} (trusted only with development = true)")
    return 0
