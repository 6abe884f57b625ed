"""``egm host``: bad input is one clear line and a non-zero exit; commands are queued for ``serve``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from host.store import HostStore

EGM = [sys.executable, "-m", "firmware.cli", "host"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*EGM, *args], capture_output=True, text=True, timeout=60)


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    cases = [
        (["meters", "--state-dir", str(tmp_path / "none"), "--json"], "nothing found at"),
        (["meters", "--state-dir", str(tmp_path), "--json"], "no host store"),
        (["meters", "--state-dir", str(tmp_path), "--db", "bogus://x", "--json"], "unsupported host database URL"),
        (["disable", "--state-dir", str(tmp_path), "bad id!"], "invalid terminal id"),
        (["set-time", "--state-dir", str(tmp_path), "T1", "--iso", "yesterday"], "not an ISO 8601 time"),
        (["serve", "--state-dir", str(tmp_path / "h"), "--listen", "1"], "no casino CA"),
        (["serve", "--state-dir", str(tmp_path / "h")], "give --listen PORT"),
        (["serve", "--state-dir", str(tmp_path / "h"), "--broker", "mqtts://a:1", "--jetstream", "tls://a:2"],
         "leave out --listen and --broker"),
        (["serve", "--state-dir", str(tmp_path / "h"), "--jetstream", "ftp://a"], "invalid NATS server list"),
    ]
    (tmp_path / "junk.db").write_text("not a database")
    cases.append((["floor", "--state-dir", str(tmp_path), "--db", str(tmp_path / "junk.db")], "cannot open host database"))
    for args, message in cases:
        proc = run(*args)
        assert proc.returncode != 0, args
        assert message in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "none").exists() and not (tmp_path / "h").exists()      # bad input made nothing


def test_commands_are_queued_for_the_running_host(tmp_path: Path) -> None:
    HostStore.open(str(tmp_path / "host.db")).close()          # the host's store exists
    proc = run("disable", "--state-dir", str(tmp_path), "EGM-0001", "--reason", "audit", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["type"] == "disable"
    with HostStore.open(str(tmp_path / "host.db")) as store:
        assert store.take_commands() == [("EGM-0001", "disable", {"reason": "audit"})]
        assert store.take_commands() == []


def test_offer_package_verifies_first_and_queues_the_offer(tmp_path: Path) -> None:
    from egmproto.pki import ensure_development_pki
    from tests.packages.conftest import Signer

    ensure_development_pki(tmp_path, "EGM-0001")
    HostStore.open(str(tmp_path / "host.db")).close()
    good = tmp_path / "good.egmpkg"
    good.write_bytes(Signer(tmp_path / "pki").package())
    tampered = tmp_path / "tampered.egmpkg"
    tampered.write_bytes(good.read_bytes().replace(b'"signature": "', b'"signature": "AAAA', 1))
    for args, message in (
        (["EGM-0001", str(tampered)], "bad_signature"),
        (["EGM-0001", str(tmp_path / "missing.egmpkg")], "cannot read"),
        (["bad id!", str(good)], "invalid terminal id"),
        (["EGM-0001", str(tmp_path / "host.db")], "malformed"),
    ):
        proc = run("offer-package", "--state-dir", str(tmp_path), *args)
        assert proc.returncode != 0 and message in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr
    with HostStore.open(str(tmp_path / "host.db")) as store:
        assert store.take_commands() == []                      # nothing was queued
    proc = run("offer-package", "--state-dir", str(tmp_path), "EGM-0001", str(good), "--json")
    assert proc.returncode == 0, proc.stderr
    sha = json.loads(proc.stdout)["body"]["sha256"]
    assert (tmp_path / "packages" / f"{sha}.egmpkg").read_bytes() == good.read_bytes()
    with HostStore.open(str(tmp_path / "host.db")) as store:
        assert store.take_commands() == [("EGM-0001", "package_offer",
                                          {"name": "tcp-flush-3", "version": "1.0.0", "sha256": sha})]
