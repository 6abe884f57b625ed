"""The load test's throwaway casino PKI: the development CA, the host's certificates and one
terminal certificate per simulated terminal (:func:`egmproto.pki.issue_terminals`: the CA and the
index read and written once)."""

from __future__ import annotations

import time
from pathlib import Path

from egmproto.mqtt import TlsFiles
from egmproto.pki import ensure_development_pki, issue_terminals


def terminal_ids(count: int) -> list[str]:
    return [f"FLOOR-{i:05d}" for i in range(1, count + 1)]


def make_pki(state: Path, ids: list[str]) -> tuple[Path, float]:
    """``<state>/pki`` with the host's and every terminal's certificate; the seconds it took."""
    began = time.monotonic()
    paths = ensure_development_pki(state, ids[0])
    issue_terminals(paths["dir"], ids[1:])
    return paths["dir"], time.monotonic() - began


def host_tls(pki: Path) -> TlsFiles:
    """The host's certificate and key (``egm-host``) with the CA: what the host's workers present."""
    issued = pki / "issued"
    return TlsFiles(pki / "ca.cert.pem", issued / "egm-host.cert.pem", issued / "egm-host.key.pem")
