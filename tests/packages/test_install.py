"""A package the host offers: downloaded, verified, held until a technician approves it in the
service menu, then installed; a tampered one is rejected and logged. The terminal is the service
tests' in-process terminal; the download channel is a dictionary of URLs."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from firmware.cabinet.packages import PackageManager
from firmware.cabinet.service import ServiceError
from firmware.cabinet.states import CabinetState
from tests.cabinet.test_service import build, last_event, login, refused, svc
from tests.packages.conftest import Signer

URL = "https://host.example/packages/"


class Channel:
    """URL -> bytes; a URL not there fails like a 404."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def offer(self, data: bytes, name: str = "tcp-flush-3", version: str = "1.0.0",
              sha256: str | None = None) -> dict:
        sha = sha256 or hashlib.sha256(data).hexdigest()
        self.files[URL + sha] = data
        return {"name": name, "version": version, "url": URL + sha, "sha256": sha}

    def __call__(self, url: str, destination: Path, max_bytes: int) -> None:
        if url not in self.files:
            raise OSError(f"HTTP Error 404: {url}")
        destination.write_bytes(self.files[url][:max_bytes + 1])


class PackagesLink:
    """The host link as far as packages go: it holds the manager and polls it (the test makes the
    host's offers itself); never connected, so no voucher is validated through it."""

    connected = False

    def __init__(self, packages: PackageManager) -> None:
        self.packages = packages

    def poll(self) -> None:
        self.packages.poll()

    def status(self) -> None:
        return None

    def validate(self, validation: str) -> None:
        return None


def with_packages(tmp_path: Path, signer: Signer, channel: Channel) -> SimpleNamespace:
    """The service tests' terminal, built with a link that holds its package manager."""
    def link(terminal) -> PackagesLink:
        return PackagesLink(PackageManager(terminal.ledger, signer.check, tmp_path / "state" / "packages",
                                           fetch=channel, games=lambda: list(terminal.cfg.games.enabled),
                                           wake=terminal.wake))
    return build(tmp_path, hostlink=link)


def offered(manager: PackageManager, body: dict, seq: int = 1) -> None:
    """The host's offer arrives; wait for the download; the terminal's loop polls."""
    manager.offer(body, seq)
    started = len(manager._busy)
    deadline = time.monotonic() + 10
    while manager._done.qsize() < started and time.monotonic() < deadline:
        time.sleep(0.01)
    manager.poll()


def events(rig, prefix: str = "package.") -> list[dict]:
    return [e for e in reversed(rig.ledger.events(200)) if e["event"].startswith(prefix)]


@pytest.fixture
def setup(tmp_path: Path, signer: Signer):
    channel = Channel()
    rig = with_packages(tmp_path, signer, channel)
    yield SimpleNamespace(rig=rig, channel=channel, manager=rig.terminal.hostlink.packages, signer=signer)
    rig.ledger.close()


def test_offered_downloaded_approved_installed(setup, tmp_path: Path) -> None:
    rig, manager = setup.rig, setup.manager
    data = setup.signer.package(notes=b"flush pays 3 to 1\n")
    body = setup.channel.offer(data)
    offered(manager, body)
    assert [e["event"] for e in events(rig)] == ["package.offered", "package.pending"]
    pending = manager.pending()["tcp-flush-3"]
    assert pending["sha256"] == body["sha256"] and pending["games"] == ["three-card-poker"]
    # nothing is in force until a technician approves it
    assert rig.terminal.rounds.kernel_for("three-card-poker").options.pair_plus_pays.flush != 3
    login(rig, "auditor")
    assert "tcp-flush-3" in svc(rig, "packages")["pending"]
    refused(rig, "auditor", "package", "approve", "tcp-flush-3", match="may not use package approve")
    login(rig, "technician")
    answer = svc(rig, "package", "approve", "tcp-flush-3")
    assert answer["options"] == {"three-card-poker": {"pair_plus_pays": {"flush": 3}}}
    assert rig.terminal.rounds.kernel_for("three-card-poker").options.pair_plus_pays.flush == 3
    assert rig.ledger.setting("config.games.three-card-poker") == {"pair_plus_pays": {"flush": 3}}
    installed = tmp_path / "state" / "packages" / "installed" / "tcp-flush-3" / "1.0.0"
    assert (installed / "notes").read_bytes() == b"flush pays 3 to 1\n"
    assert (installed / "options.toml").is_file()
    assert manager.pending() == {} and manager.installed()["tcp-flush-3"]["by"] == "technician"
    assert [e["event"] for e in events(rig)][-1] == "package.installed"
    action = last_event(rig, "service_action")
    assert (action["action"], action["result"]) == ("package approve", "ok")
    # after a restart the options are still in force and the package is still recorded installed
    rig.ledger.close()
    again = build(tmp_path)
    assert again.terminal.rounds.kernel_for("three-card-poker").options.pair_plus_pays.flush == 3
    manager2 = PackageManager(again.ledger, setup.signer.check, tmp_path / "state" / "packages")
    assert manager2.installed()["tcp-flush-3"]["sha256"] == body["sha256"]
    # the same package offered again is not downloaded again
    manager2.offer(body, 7)
    assert events(again)[-1]["event"] == "package.ignored"
    setup.rig = again


@pytest.mark.parametrize("make, reason", [
    (lambda s, c: c.offer(s.package()[:-20] + b"x" * 20), "malformed"),
    (lambda s, c: c.offer(s.package().replace(b'"signature": "', b'"signature": "AAAA', 1)), "bad_signature"),
    (lambda s, c: {**c.offer(s.package()), "url": URL + "gone"}, "download_failed"),          # 404
    (lambda s, c: c.offer(s.package(), sha256="1" * 64), "digest_mismatch"),
    (lambda s, c: c.offer(s.package(), version="2.0.0"), "malformed"),                     # not what was offered
    (lambda s, c: c.offer(s.package(options=b"[holdem-war]\nante_pays = 1\n")), "bad_content"),
])
def test_a_bad_package_is_rejected_logged_and_nothing_changes(setup, make, reason) -> None:
    rig, manager = setup.rig, setup.manager
    before = (rig.terminal.cfg, rig.ledger.setting("config.games.three-card-poker"))
    offered(manager, make(setup.signer, setup.channel))
    rejected = events(rig)[-1]
    assert rejected["event"] == "package.rejected" and rejected["reason"] == reason, rejected
    assert manager.pending() == {} and manager.installed() == {}
    assert (rig.terminal.cfg, rig.ledger.setting("config.games.three-card-poker")) == before
    assert [p for d in ("pending", "incoming") for p in (manager.dir / d).iterdir()] == []


def test_a_package_tampered_on_disk_while_waiting_is_refused_at_approval(setup) -> None:
    rig, manager = setup.rig, setup.manager
    body = setup.channel.offer(setup.signer.package())
    offered(manager, body)
    path = manager.dir / "pending" / f"{body['sha256']}.egmpkg"
    doc = json.loads(path.read_bytes())
    doc["files"]["options.toml"] = "W3RocmVlLWNhcmQtcG9rZXJdCnBhaXJfcGx1c19wYXlzLmZsdXNoID0gNDAK"
    path.write_text(json.dumps(doc))
    login(rig, "technician")
    with pytest.raises(ServiceError, match="refused and deleted"):
        svc(rig, "package", "approve", "tcp-flush-3")
    rejected = events(rig)[-1]
    assert rejected["event"] == "package.rejected" and rejected["reason"] == "digest_mismatch"
    assert manager.pending() == {} and not path.exists()
    assert rig.ledger.setting("config.games.three-card-poker") is None


def test_approval_waits_until_the_credit_meter_is_empty(setup) -> None:
    rig, manager = setup.rig, setup.manager
    offered(manager, setup.channel.offer(setup.signer.package()))
    login(rig, "technician")
    rig.ledger.bill_in(1000)
    refused(rig, "technician", "package", "approve", "tcp-flush-3", match="no credits")
    refused(rig, "technician", "package", "approve", "no-such", match="no credits")
    assert rig.terminal.cabinet.state is CabinetState.IDLE
    assert "tcp-flush-3" in manager.pending()
    assert rig.ledger.setting("config.games.three-card-poker") is None


def test_decline(setup) -> None:
    rig, manager = setup.rig, setup.manager
    body = setup.channel.offer(setup.signer.package())
    offered(manager, body)
    login(rig, "technician")
    refused(rig, "technician", "package", "reject", "nope", match="no package 'nope' is waiting")
    svc(rig, "package", "reject", "tcp-flush-3")
    assert manager.pending() == {} and events(rig)[-1]["event"] == "package.declined"
    assert not (manager.dir / "pending" / f"{body['sha256']}.egmpkg").exists()


def test_a_pending_package_survives_a_restart_and_a_lost_file_is_dropped(setup, tmp_path: Path) -> None:
    rig, manager = setup.rig, setup.manager
    body = setup.channel.offer(setup.signer.package())
    offered(manager, body)
    again = PackageManager(rig.ledger, setup.signer.check, manager.dir)
    assert "tcp-flush-3" in again.pending()
    (manager.dir / "pending" / f"{body['sha256']}.egmpkg").unlink()
    third = PackageManager(rig.ledger, setup.signer.check, manager.dir)
    assert third.pending() == {}
    assert events(rig)[-1]["event"] == "package.rejected"


def test_an_installed_package_cannot_be_rolled_back_to_its_own_or_an_earlier_version(setup) -> None:
    rig, manager, signer, channel = setup.rig, setup.manager, setup.signer, setup.channel
    offered(manager, channel.offer(signer.package(version="1.9.0"), version="1.9.0"))
    login(rig, "technician")
    svc(rig, "package", "approve", "tcp-flush-3")
    assert manager.installed()["tcp-flush-3"]["version"] == "1.9.0"
    # A signed, valid package of the same version with other content, or an earlier one: refused
    # at the offer, before anything is downloaded, with the reason the host receives.
    for version in ("1.9.0", "1.2.0", "1.9.0rc1"):
        data = signer.package(version=version, notes=b"an older pay table\n")
        manager.offer(channel.offer(data, version=version), 5)
        rejected = events(rig)[-1]
        assert (rejected["event"], rejected["reason"]) == ("package.rejected", "downgrade"), rejected
        assert "not newer than the installed 1.9.0" in rejected["detail"]
        assert manager._busy == {} and manager.pending() == {}
    # PEP 440 ordering, not text: 1.10.0 comes after 1.9.0.
    offered(manager, channel.offer(signer.package(version="1.10.0"), version="1.10.0"))
    assert manager.pending()["tcp-flush-3"]["version"] == "1.10.0"
    # Checked again at approval: were a later version installed meanwhile, this one is refused.
    installed = manager.installed()
    installed["tcp-flush-3"] = {**installed["tcp-flush-3"], "version": "2.0.0", "sha256": "0" * 64}
    rig.ledger.store_setting("packages.installed", {"packages": installed})
    with pytest.raises(ServiceError, match="refused and deleted"):
        svc(rig, "package", "approve", "tcp-flush-3")
    assert events(rig)[-1]["reason"] == "downgrade" and manager.pending() == {}


def test_a_version_that_is_not_a_version_number_is_malformed(setup) -> None:
    rig, manager = setup.rig, setup.manager
    manager.offer(setup.channel.offer(setup.signer.package(), version="final"), 3)
    rejected = events(rig)[-1]
    assert rejected["reason"] == "malformed" and "is not a version number" in rejected["detail"]


def test_an_approval_cut_short_leaves_nothing_of_the_package_in_force(setup, monkeypatch) -> None:
    # The options and the installed record are one ledger batch: a failure (a power loss) before
    # the record leaves the package pending and none of its options stored.
    rig, manager = setup.rig, setup.manager
    body = setup.channel.offer(setup.signer.package())
    offered(manager, body)
    login(rig, "technician")

    def lost_power(*args, **kwargs):
        raise KeyboardInterrupt("power lost while recording")

    monkeypatch.setattr(manager, "record", lost_power)
    with pytest.raises(KeyboardInterrupt):
        svc(rig, "package", "approve", "tcp-flush-3")
    assert rig.ledger.setting("config.games.three-card-poker") is None      # no option in force
    assert "tcp-flush-3" in manager.pending() and manager.installed() == {}
    assert (manager.dir / "pending" / f"{body['sha256']}.egmpkg").exists()  # approvable again
    monkeypatch.undo()
    svc(rig, "package", "approve", "tcp-flush-3")
    assert rig.ledger.setting("config.games.three-card-poker") == {"pair_plus_pays": {"flush": 3}}
    assert manager.installed()["tcp-flush-3"]["sha256"] == body["sha256"]
    assert not (manager.dir / "pending" / f"{body['sha256']}.egmpkg").exists()
