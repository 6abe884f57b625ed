"""A development PKI and a way to make signed game packages, for the package tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from egmproto import package_format as pf
from egmproto.identity import Trust
from egmproto.pki import DEV_SIGNER, ensure_development_pki, load_certificate

OPTIONS = b"[three-card-poker]\npair_plus_pays.flush = 3\n"


class Signer:
    def __init__(self, pki: Path, name: str = DEV_SIGNER) -> None:
        self.pki = pki
        self.cert = load_certificate(pki / "issued" / f"{name}.cert.pem")
        self.key = serialization.load_pem_private_key((pki / "issued" / f"{name}.key.pem").read_bytes(), None)
        self.trust = Trust(pki)

    def check(self, cert) -> None:
        self.trust.check(cert, "code-signer")

    def package(self, name: str = "tcp-flush-3", version: str = "1.0.0", options: bytes = OPTIONS,
                **extra: bytes) -> bytes:
        return pf.build(name, version, {pf.OPTIONS_FILE: options, **extra}, signing_key=self.key,
                        certificate=self.cert, description="Three Card Poker: flush pays 3 to 1")


@pytest.fixture
def pki(tmp_path: Path) -> Path:
    ensure_development_pki(tmp_path, "T1")
    return tmp_path / "pki"


@pytest.fixture
def signer(pki: Path) -> Signer:
    return Signer(pki)
