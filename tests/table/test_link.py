"""The table over loopback TLS: in-process stations join, bet, get their results; a station whose
certificate the table's CA did not issue, or revoked, never joins."""

from __future__ import annotations

import contextlib
import logging
import shutil
import socket
import ssl
import time
from pathlib import Path

import pytest

from egmproto.pki import create_ca, issue, revoke
from firmware.config.schema import TableSection
from firmware.ledger.ledger import Ledger
from firmware.table.build import build_controller
from firmware.table.client import TableClient
from firmware.table.identity import ensure_table_pki
from firmware.table.server import TableServer
from tests.table.stations import FakeRounds

STATIONS = ["station-1", "station-2", "station-3"]


def _wait_for(found, timeout: float = 30.0):
    """``found()`` once it is truthy (the controller's threads log on their own time)."""
    deadline = time.monotonic() + timeout
    while not (value := found()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


@pytest.fixture
def served(tmp_path: Path):
    pki = ensure_table_pki(tmp_path, "egm-table", STATIONS)
    ledger = Ledger.open(tmp_path / "table")
    settings = TableSection(betting_window_s=5.0, between_rounds_s=0.0, link_timeout_s=5.0)
    controller = build_controller(ledger, settings, source="rng", seed=b"link tests")
    server = TableServer(controller, pki, "127.0.0.1:0")
    host, port = server.start()
    clients: list[TableClient] = []

    def station(name: str, pki_dir: Path = pki, **kw) -> tuple[TableClient, FakeRounds]:
        rounds = FakeRounds(name)
        client = TableClient(rounds, station_id=name, pki_dir=pki_dir, controller=f"{host}:{port}", **kw)
        rounds.port = client
        clients.append(client)
        client.start()
        return client, rounds

    yield controller, server, station, pki
    for client in clients:
        client.stop()
    server.stop()
    ledger.close()


def test_three_stations_play_rounds_and_the_money_adds_up(served) -> None:
    controller, _, station, _ = served
    stations = [station(name) for name in STATIONS]
    for _, rounds in stations:
        assert rounds.wait(lambda r=rounds: len(r.results) >= 2), rounds.links
    for client, rounds in stations:
        rounds.betting = False
        assert client.seat in (1, 2, 3)
        assert client.latencies                          # the first card was seen after the close
    for _, rounds in stations:                           # every bet placed is settled
        assert rounds.wait(lambda r=rounds: not r.open)
    with controller.lock:
        m = controller.meters()
        staked = sum(r.staked() for _, r in stations)
        returned = sum(r.returned() for _, r in stations)
    assert (staked, returned) == (m["coin_in"], m["coin_out"])
    assert {a["accepted"] for _, r in stations for a in r.answers} == {True}


def test_a_station_of_another_ca_is_refused_at_the_handshake(served, tmp_path: Path, caplog) -> None:
    controller, server, _, pki = served
    rogue = tmp_path / "rogue"
    create_ca(rogue, name="Rogue CA")
    files = issue(rogue, "terminal", "station-1")
    ctx = ssl.create_default_context(cafile=str(pki / "ca.cert.pem"))
    ctx.load_cert_chain(str(files.cert), str(files.key))
    with caplog.at_level(logging.WARNING, logger="egm.table.server"):
        with contextlib.suppress(ssl.SSLError, OSError), \
                socket.create_connection(server.address, timeout=10) as raw, \
                ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            tls.sendall(b"\x00\x00\x00\x10" + b"x" * 16)
            tls.recv(100)                # TLS 1.3: the controller's alert arrives with the first read
        refusals = _wait_for(lambda: [r.getMessage() for r in caplog.records if "refused" in r.getMessage()])
    assert "TLS handshake" in refusals[0] and "certificate verify failed" in refusals[0], refusals
    assert "station-1" not in controller.stations


def test_a_revoked_station_cannot_join(served, tmp_path: Path, caplog) -> None:
    controller, _, station, pki = served
    own = tmp_path / "station-2-pki"            # the station's copy, from before the revocation
    shutil.copytree(pki, own)
    revoke(pki, "station-2", reason="key-compromise")
    with caplog.at_level(logging.WARNING, logger="egm.table.server"):
        client, rounds = station("station-2", own)
        assert rounds.wait(lambda: any(not up for up, _ in rounds.links))
        refusals = _wait_for(lambda: [r.getMessage() for r in caplog.records if "refused" in r.getMessage()])
    assert not client.connected()
    assert "station-2" not in controller.stations
    assert "certificate revoked" in refusals[0], refusals


def test_hostile_input_drops_that_connection_only_and_the_station_comes_back(served, caplog) -> None:
    controller, _, station, _ = served
    steady, steady_rounds = station("station-1")
    client, rounds = station("station-2")
    assert rounds.wait(lambda: client.connected() and steady.connected())
    with caplog.at_level(logging.ERROR, logger="egm.table.link"):
        client._conn.sock.sendall(b"\xff\xff\xff\xff")      # a frame of 4 GiB announced
        refusals = _wait_for(lambda: [r.getMessage() for r in caplog.records if "oversize" in r.getMessage()])
    assert "station-2" in refusals[0] and "dropped" in refusals[0]
    assert rounds.wait(lambda: client.connections >= 2 and client.connected())      # it reconnected
    assert steady.connections == 1 and steady.connected()                             # the other never noticed
    assert rounds.wait(lambda: len(rounds.results) >= 1)                              # and play goes on


def test_a_station_asking_for_a_taken_seat_is_told_why_and_not_seated(served) -> None:
    controller, _, station, _ = served
    first, first_rounds = station("station-1", seat=1)
    assert first_rounds.wait(first.connected)
    second, rounds = station("station-2", seat=1)
    assert rounds.wait(lambda: any(not up for up, _ in rounds.links))
    assert "seat 1 is taken by station-1" in rounds.links[0][1]
    assert not second.connected() and "station-2" not in controller.stations


def test_a_silent_station_is_dropped_after_the_link_timeout_and_a_live_one_is_kept(tmp_path: Path, caplog) -> None:
    from cryptography.hazmat.primitives.asymmetric import x25519

    from egmproto.table_messages import TO_STATION
    from firmware.table.identity import station_identity
    from firmware.table.session import SeqBook, SeqCounter, Session, kem_public_text
    from firmware.table.transport import client_context

    pki = ensure_table_pki(tmp_path, "egm-table", STATIONS)
    ledger = Ledger.open(tmp_path / "table")
    settings = TableSection(betting_window_s=60.0, auto_open=False, link_timeout_s=1.0)
    controller = build_controller(ledger, settings, source="rng", seed=b"silence")
    server = TableServer(controller, pki, "127.0.0.1:0")
    host, port = server.start()
    rounds = FakeRounds("station-2")
    alive = TableClient(rounds, station_id="station-2", pki_dir=pki, controller=f"{host}:{port}", link_timeout_s=1.0)
    rounds.port = alive
    try:
        alive.start()
        identity = station_identity(pki, "station-1", "egm-table")
        kem = x25519.X25519PrivateKey.generate()
        session = Session(own_id="station-1", signing_key=identity.signing_key, own_kem=kem, peer_id="egm-table",
                          verify_key_for=lambda s: identity.host_verify_key, incoming=TO_STATION, seqs=SeqBook(),
                          counter=SeqCounter(), peer_kem=identity.host_kem_key)
        ctx = client_context(pki / "ca.cert.pem", *[pki / "issued" / f"station-1.{k}.pem" for k in ("cert", "key")])
        with caplog.at_level(logging.INFO, logger="egm.table.link"), \
                socket.create_connection((host, port), timeout=10) as raw, \
                ctx.wrap_socket(raw, server_hostname=host) as tls:
            tls.sendall(session.frame("join", {"table_id": "TABLE-1", "kem_public": kem_public_text(kem),
                                               "seat": 0, "open_bets": []}))
            assert _wait_for(lambda: "station-1" in controller.stations)
            dropped = _wait_for(lambda: [r.getMessage() for r in caplog.records
                                         if "station-1 closed" in r.getMessage()])   # then it says nothing
        assert "nothing heard for 1.0 s" in dropped[0]
        assert "station-1" not in controller.stations
        assert alive.connected() and alive.connections == 1       # its heartbeats kept it joined
    finally:
        alive.stop()
        server.stop()
        ledger.close()
