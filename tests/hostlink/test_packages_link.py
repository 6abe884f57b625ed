"""Game packages over the real channels: the host's offer over the host link, the download over
HTTPS from the host's package server (client certificates required), and the terminal's events back
in the host's store."""

from __future__ import annotations

import hashlib
import ssl
import time
import urllib.error
from pathlib import Path

import pytest

from firmware.cabinet.packages import PackageManager, accept_game_options, https_fetch
from host.packages import PackageDepot, PackageServer
from tests.hostlink.conftest import Floor
from tests.packages.conftest import Signer


@pytest.fixture
def served(floor: Floor, tmp_path: Path):
    pki = floor.pki
    issued = pki / "issued"
    server = PackageServer(PackageDepot(tmp_path / "depot"), "127.0.0.1", 0,
                           tls=(issued / "egm-host.cert.pem", issued / "egm-host.key.pem", pki / "ca.cert.pem"),
                           crl=pki / "crl.pem").start()
    yield server
    server.stop()


def _fetch(floor: Floor, terminal: str = "T1"):
    issued = floor.pki / "issued"
    return https_fetch(floor.pki / "ca.cert.pem", issued / f"{terminal}.cert.pem", issued / f"{terminal}.key.pem",
                       timeout_s=10)


def test_the_package_server_serves_only_terminals_of_the_casino(floor: Floor, served: PackageServer,
                                                                 tmp_path: Path) -> None:
    signer = Signer(floor.pki)
    package = served.depot.add(signer.package(), signer.check, accept_game_options)
    out = tmp_path / "got"
    _fetch(floor)(served.url(package.sha256), out, 1 << 20)
    assert hashlib.sha256(out.read_bytes()).hexdigest() == package.sha256
    with pytest.raises(urllib.error.HTTPError, match="404"):
        _fetch(floor)(served.url("0" * 64), out, 1 << 20)
    with pytest.raises(ValueError, match="more than"):
        _fetch(floor)(served.url(package.sha256), out, 100)
    with pytest.raises(ValueError, match="only https"):
        _fetch(floor)(served.url(package.sha256).replace("https", "http"), out, 1 << 20)
    anonymous = https_fetch(floor.pki / "ca.cert.pem", timeout_s=10)          # no client certificate
    with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
        anonymous(served.url(package.sha256), out, 1 << 20)


def _settle_downloads(floor: Floor, manager: PackageManager) -> None:
    deadline = time.monotonic() + 20
    while manager._busy and time.monotonic() < deadline:
        time.sleep(0.02)
        manager.poll()
    floor.settle()


def test_an_offer_over_the_link_is_downloaded_and_its_fate_reported(floor: Floor, served: PackageServer,
                                                                    tmp_path: Path) -> None:
    signer = Signer(floor.pki)
    ledger_dir = tmp_path / "T1"
    floor.host.package_url = served.url
    link = floor.terminal("T1")
    manager = PackageManager(link.ledger, signer.check, ledger_dir / "packages", fetch=_fetch(floor))
    link.packages = manager
    floor.settle()
    good = served.depot.add(signer.package(), signer.check, accept_game_options)
    assert floor.host.command("T1", "package_offer", {"name": good.name, "version": good.version,
                                                      "sha256": good.sha256}) == 1
    floor.settle()
    _settle_downloads(floor, manager)
    assert manager.pending()["tcp-flush-3"]["sha256"] == good.sha256
    # a package tampered with in the host's depot after it was checked
    bad = served.depot.add(signer.package("tcp-other", "1.0.1"), signer.check, accept_game_options)
    path = served.depot.path(bad.sha256)
    path.write_bytes(path.read_bytes() + b" ")
    floor.host.command("T1", "package_offer", {"name": bad.name, "version": bad.version, "sha256": bad.sha256})
    floor.settle()
    _settle_downloads(floor, manager)
    assert "tcp-other" not in manager.pending()
    stored = {(e["data"]["package"], e["name"], e["data"].get("reason"))
              for e in floor.store.events("T1", last=100) if e["name"].startswith("package.")}
    assert {("tcp-flush-3", "package.offered", None), ("tcp-flush-3", "package.pending", None),
            ("tcp-other", "package.offered", None), ("tcp-other", "package.rejected", "digest_mismatch")} <= stored
    commands = floor.store.commands("T1")
    assert any(c["type"] == "package_offer" and c["body"]["url"] == served.url(good.sha256) for c in commands)


def test_a_terminal_revoked_while_the_host_runs_is_refused_from_its_next_download(
        floor: Floor, served: PackageServer, tmp_path: Path) -> None:
    from egmproto.pki import issue, revoke

    issue(floor.pki, "terminal", "T2")
    signer = Signer(floor.pki)
    package = served.depot.add(signer.package(), signer.check, accept_game_options)
    out = tmp_path / "got"
    _fetch(floor, "T1")(served.url(package.sha256), out, 1 << 20)          # served
    revoke(floor.pki, "T1")                                                 # egm pki revoke: a new crl.pem
    with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
        _fetch(floor, "T1")(served.url(package.sha256), out, 1 << 20)
    _fetch(floor, "T2")(served.url(package.sha256), out, 1 << 20)          # the others still are
