"""``egm certs``: a round trip through the CLI, one clear stderr line on failure, never a traceback."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from firmware.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["certs", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_round_trip(capsys, tmp_path: Path) -> None:
    d = str(tmp_path / "ca")
    code, out, err = run(capsys, "init", "--dir", d, "--name", "Test Casino CA")
    assert code == 0 and "Test Casino CA" in out and err == ""
    assert stat.S_IMODE(os.stat(tmp_path / "ca" / "ca.key.pem").st_mode) == 0o600

    code, out, _ = run(capsys, "issue", "--dir", d, "--kind", "terminal", "--name", "EGM-0007", "--json")
    assert code == 0
    term = json.loads(out)
    assert term["kind"] == "terminal" and term["name"] == "EGM-0007"
    assert stat.S_IMODE(os.stat(term["key"]).st_mode) == 0o600
    code, out, _ = run(capsys, "issue", "--dir", d, "--kind", "host", "--name", "host1",
                       "--dns", "host1.casino.local", "--ip", "10.0.0.5")
    assert code == 0 and "host host1" in out

    code, out, _ = run(capsys, "list", "--dir", d, "--json")
    rows = json.loads(out)
    assert [(r["kind"], r["name"], r["revoked"]) for r in rows] == [
        ("terminal", "EGM-0007", False), ("host", "host1", False)
    ]
    code, out, _ = run(capsys, "list", "--dir", d)
    assert code == 0 and "EGM-0007" in out and "valid" in out

    code, out, err = run(capsys, "verify", "--dir", d, term["cert"], "--expect", "terminal")
    assert code == 0 and out.startswith("ok: ") and err == ""
    code, out, err = run(capsys, "verify", "--dir", d, term["cert"], "--expect", "host")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "FAILED" in err and "not a host one" in err

    code, out, _ = run(capsys, "revoke", "--dir", d, term["serial"], "--reason", "key-compromise")
    assert code == 0 and "revoked terminal EGM-0007" in out
    code, out, _ = run(capsys, "crl", "--dir", d)
    assert code == 0 and "crl.pem" in out
    code, out, err = run(capsys, "verify", "--dir", d, term["cert"], "--json")
    assert code == 1
    assert json.loads(out)["ok"] is False
    assert err.count("\n") == 1 and "revoked" in err and "key-compromise" in err
    code, out, _ = run(capsys, "list", "--dir", d, "--json")
    assert json.loads(out)[0]["revoked"] is True

    code, out, _ = run(capsys, "renew", "--dir", d, "host1", "--json")
    assert code == 0 and json.loads(out)["serial"] != rows[1]["serial"]
    code, out, _ = run(capsys, "verify", "--dir", d, json.loads(out)["cert"], "--expect", "host", "--json")
    assert code == 0 and json.loads(out)["ok"] is True


@pytest.mark.parametrize(
    "argv, message",
    [
        (["issue", "--kind", "terminal", "--name", "EGM 1"], "invalid terminal id 'EGM 1'"),
        (["issue", "--kind", "host", "--name", "h", "--dns", "bad_name!"], "invalid DNS name"),
        (["revoke", "NOPE"], "no certificate with serial or name 'NOPE'"),
        (["revoke", "EGM-0001", "--reason", "whim"], "unknown revocation reason 'whim'"),
        (["renew", "NOPE"], "no certificate named 'NOPE'"),
        (["verify", "/nonexistent/cert.pem"], "no such file"),
        (["init"], "already holds a CA"),
    ],
)
def test_errors_are_one_line(capsys, tmp_path: Path, argv: list[str], message: str) -> None:
    d = str(tmp_path / "ca")
    assert run(capsys, "init", "--dir", d)[0] == 0
    assert run(capsys, "issue", "--dir", d, "--kind", "terminal", "--name", "EGM-0001")[0] == 0
    code, out, err = run(capsys, argv[0], "--dir", d, *argv[1:])
    assert code == 2 and out == ""
    assert err.startswith("egm certs: error: ") and err.count("\n") == 1
    assert message in err


def test_missing_ca_and_repo_guard(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "list", "--dir", str(tmp_path / "none"))
    assert code == 2 and "no index" in err
    code, _, err = run(capsys, "issue", "--dir", str(tmp_path / "none"), "--kind", "host", "--name", "h")
    assert code == 2 and "no CA in" in err and "egm certs init" in err
    inside = Path(__file__).resolve().parent / "never-a-ca"
    code, _, err = run(capsys, "init", "--dir", str(inside))
    assert code == 2 and "inside the git repository" in err
    assert not inside.exists()


def test_dev_is_idempotent(capsys, tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    code, out, _ = run(capsys, "dev", "--state-dir", state, "--terminal", "EGM-0009", "--json")
    assert code == 0
    first = json.loads(out)
    code, out, _ = run(capsys, "dev", "--state-dir", state, "--terminal", "EGM-0009", "--json")
    assert json.loads(out) == first
    code, out, _ = run(capsys, "list", "--dir", first["dir"], "--json")
    assert sorted(r["kind"] for r in json.loads(out)) == ["code-signer", "host", "host-kem", "terminal"]
    code, out, err = run(capsys, "verify", "--dir", first["dir"], first["terminal_cert"], "--expect", "terminal")
    assert code == 0
    code, out, _ = run(capsys, "dev", "--state-dir", state, "--terminal", "EGM-0009")
    assert code == 0 and "not for production" in out
