"""Game packages: how long a terminal takes to verify one (``package_format.load`` and the options
check), with a development PKI in a temporary directory. ``python -m benchmarks.bench_packages``."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

N = 300


def verify_ms() -> tuple[float, str]:
    from cryptography.hazmat.primitives import serialization

    from egmproto import package_format as pf
    from egmproto.identity import Trust
    from egmproto.pki import DEV_SIGNER, ensure_development_pki, load_certificate
    from firmware.cabinet.packages import accept_game_options

    with tempfile.TemporaryDirectory() as tmp:
        ensure_development_pki(tmp, "B1")
        pki = Path(tmp) / "pki"
        key = serialization.load_pem_private_key((pki / "issued" / f"{DEV_SIGNER}.key.pem").read_bytes(), None)
        cert = load_certificate(pki / "issued" / f"{DEV_SIGNER}.cert.pem")
        data = pf.build("bench", "1.0.0", {pf.OPTIONS_FILE: b"[three-card-poker]\npair_plus_pays.flush = 3\n"},
                        signing_key=key, certificate=cert)  # type: ignore[arg-type]
        trust = Trust(pki)
        start = time.perf_counter()
        for _ in range(N):
            pf.load(data, lambda c: trust.check(c, "code-signer")).checked_options(accept_game_options)
        return round((time.perf_counter() - start) / N * 1000, 2), f"ms per {len(data)}-byte package"


BENCHMARKS = [("packages: verify a game package (signer, CRL, signature, files, options)", verify_ms)]

if __name__ == "__main__":
    print(*verify_ms())
