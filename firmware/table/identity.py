"""Who is who at a table: the controller's and the stations' keys and certificates (casino PKI).

Decision (docs/protocols/table.md, "Security"): the controller is a ``host`` certificate named
``[table] controller_name`` (TLS server, and the key its envelopes are signed with) and an X25519
``host-kem`` certificate ``<controller_name>.kem`` that the stations encrypt to; a station is its
``terminal`` certificate (TLS client, signing key; its terminal id is its station id) and an X25519
key made for each connection, announced in its signed ``join`` (as the host link's ``hello`` does),
which the controller encrypts its replies to. No new certificate kind is needed.
"""

from __future__ import annotations

import os
from pathlib import Path

from egmproto.identity import HostIdentity, TerminalIdentity
from egmproto.pki import ensure_development_pki, issue, list_certs
from firmware.errors import EgmError
from firmware.table.errors import TableError


def kem_name(controller_name: str) -> str:
    return f"{controller_name}.kem"


def controller_identity(pki_dir: str | os.PathLike[str], controller_name: str) -> HostIdentity:
    """The controller's keys, and the stations' certificates checked against the CA and its CRL."""
    try:
        return HostIdentity(pki_dir, name=controller_name, kem_name=kem_name(controller_name))
    except EgmError as exc:
        raise TableError(f"the table controller's certificates: {exc}") from None


def station_identity(pki_dir: str | os.PathLike[str], station_id: str, controller_name: str) -> TerminalIdentity:
    """A station's keys, and the controller's certificates checked against the CA."""
    try:
        return TerminalIdentity.load(pki_dir, station_id, host=controller_name, host_kem=kem_name(controller_name))
    except EgmError as exc:
        raise TableError(f"the station's table certificates: {exc}") from None


def tls_files(pki_dir: Path, name: str) -> tuple[Path, Path, Path]:
    """(certificate, key, CA) of ``name`` in ``pki_dir``."""
    return pki_dir / "issued" / f"{name}.cert.pem", pki_dir / "issued" / f"{name}.key.pem", pki_dir / "ca.cert.pem"


def ensure_table_pki(state_dir: Path, controller_name: str, stations: list[str]) -> Path:
    """A development PKI in ``state_dir/pki`` for a table on this machine: the CA, the controller's
    certificates (for 127.0.0.1 and localhost) and one terminal certificate per station (made when
    missing; never for production: the CA key sits beside them)."""
    if not stations:
        raise TableError("a table needs at least one station")
    ensure_development_pki(state_dir, stations[0])
    pki = state_dir / "pki"
    have = {(c["kind"], c["name"]) for c in list_certs(pki) if not c.get("revoked")}
    wanted = [("host", controller_name), ("host-kem", kem_name(controller_name))]
    wanted += [("terminal", s) for s in stations]
    for kind, name in wanted:
        if (kind, name) not in have:
            extra = {"dns": ["localhost"], "ips": ["127.0.0.1", "::1"]} if kind == "host" else {}
            issue(pki, kind, name, **extra)  # type: ignore[arg-type]
    return pki
