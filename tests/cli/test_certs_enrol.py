"""``egm certs request|sign|install``: the key made on the cabinet, signed at the CA, installed back;
every refusal one line, nothing written."""

from __future__ import annotations

import base64
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


def snapshot(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() if p.is_file() else b"<dir>"
            for root in roots if root.exists() for p in sorted(root.rglob("*"))}


def refused(capsys, roots: tuple[Path, ...], *argv: str) -> str:
    before = snapshot(*roots)
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("egm certs: error: "), err
    assert snapshot(*roots) == before, "a refused step wrote something"
    return err


@pytest.fixture
def site(tmp_path: Path, capsys):
    ca, cab = tmp_path / "ca", tmp_path / "cabinet"
    assert run(capsys, "init", "--dir", str(ca), "--name", "Site CA")[0] == 0
    assert run(capsys, "issue", "--dir", str(ca), "--kind", "host", "--name", "egm-host")[0] == 0
    return ca, cab


def request(capsys, cab: Path, name: str = "EGM-0001", *extra: str) -> dict:
    code, out, _ = run(capsys, "request", "--state-dir", str(cab), "--name", name, "--json", *extra)
    assert code == 0
    return json.loads(out)


def test_enrol_round_trip(capsys, site, tmp_path: Path) -> None:
    ca, cab = site
    req = request(capsys, cab)
    assert stat.S_IMODE(os.stat(req["key"]).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(cab / "pki").st_mode) == 0o700
    out_cert = tmp_path / "EGM-0001.cert.pem"
    code, out, _ = run(capsys, "sign", "--dir", str(ca), "--csr", req["csr"], "--kind", "terminal",
                       "--out", str(out_cert), "--json")
    assert code == 0 and json.loads(out)["name"] == "EGM-0001"
    assert not (ca / "issued" / "EGM-0001.key.pem").exists()          # the CA never had the key
    code, out, _ = run(capsys, "list", "--dir", str(ca), "--json")
    assert [r["name"] for r in json.loads(out)] == ["egm-host", "EGM-0001"]
    code, out, _ = run(capsys, "install", "--state-dir", str(cab), "--cert", str(out_cert), "--ca",
                       str(ca / "ca.cert.pem"), "--crl", str(ca / "crl.pem"), "--peer",
                       str(ca / "issued" / "egm-host.cert.pem"), "--json")
    assert code == 0
    done = json.loads(out)
    assert Path(done["key"]) == cab / "pki" / "issued" / "EGM-0001.key.pem"
    assert stat.S_IMODE(os.stat(done["key"]).st_mode) == 0o600
    assert (cab / "pki" / "issued" / "egm-host.cert.pem").is_file()
    assert not (cab / "pki" / "requests" / "EGM-0001.key.pem").exists()
    code, out, _ = run(capsys, "verify", "--dir", str(ca), done["cert"], "--expect", "terminal")
    assert code == 0

    # rotation: a new key on the cabinet while the old one keeps working, signed with --renew
    req2 = request(capsys, cab)
    assert (cab / "pki" / "issued" / "EGM-0001.key.pem").is_file()
    refused(capsys, (ca,), "sign", "--dir", str(ca), "--csr", req2["csr"], "--kind", "terminal")  # no --renew
    code, out, _ = run(capsys, "sign", "--dir", str(ca), "--csr", req2["csr"], "--kind", "terminal", "--renew",
                       "--json")
    assert code == 0
    code, out, _ = run(capsys, "install", "--state-dir", str(cab), "--cert", json.loads(out)["cert"],
                       "--ca", str(ca / "ca.cert.pem"))
    assert code == 0 and "installed terminal EGM-0001" in out


def test_a_request_for_another_kind_is_refused(capsys, site) -> None:
    ca, cab = site
    req = request(capsys, cab, "host2", "--kind", "host")
    err = refused(capsys, (ca,), "sign", "--dir", str(ca), "--csr", req["csr"], "--kind", "terminal")
    assert "for a host certificate, not terminal" in err


def test_a_request_with_a_bad_signature_is_refused(capsys, site, tmp_path: Path) -> None:
    ca, cab = site
    req = request(capsys, cab)
    pem = Path(req["csr"]).read_text().splitlines()
    der = bytearray(base64.b64decode("".join(pem[1:-1])))
    der[-1] ^= 0x01                                     # the last byte of the signature
    bad = tmp_path / "bad.csr"
    bad.write_bytes(bytes(der))
    err = refused(capsys, (ca,), "sign", "--dir", str(ca), "--csr", str(bad), "--kind", "terminal")
    assert "signature does not verify" in err
    bad.write_bytes(b"not a request")
    assert "not a certificate signing request" in refused(capsys, (ca,), "sign", "--dir", str(ca), "--csr",
                                                          str(bad), "--kind", "terminal")


def test_a_name_clash_is_refused(capsys, site) -> None:
    ca, cab = site
    assert run(capsys, "issue", "--dir", str(ca), "--kind", "code-signer", "--name", "EGM-0001")[0] == 0
    req = request(capsys, cab)
    err = refused(capsys, (ca,), "sign", "--dir", str(ca), "--csr", req["csr"], "--kind", "terminal", "--renew")
    assert "already has a valid code-signer certificate" in err


def test_a_certificate_for_another_key_is_not_installed(capsys, site, tmp_path: Path) -> None:
    ca, cab = site
    request(capsys, cab)
    other = tmp_path / "other"
    req_other = request(capsys, other)               # the same name, a key made elsewhere
    code, out, _ = run(capsys, "sign", "--dir", str(ca), "--csr", req_other["csr"], "--kind", "terminal", "--json")
    assert code == 0
    cert = json.loads(out)["cert"]
    err = refused(capsys, (cab,), "install", "--state-dir", str(cab), "--cert", cert, "--ca", str(ca / "ca.cert.pem"))
    assert "does not match the key of EGM-0001" in err
    # and a certificate of another CA
    assert run(capsys, "init", "--dir", str(tmp_path / "ca2"))[0] == 0
    err = refused(capsys, (cab,), "install", "--state-dir", str(cab), "--cert", cert, "--ca",
                  str(tmp_path / "ca2" / "ca.cert.pem"))
    assert "not signed by the CA" in err


def test_a_pending_request_is_kept(capsys, site) -> None:
    _, cab = site
    request(capsys, cab)
    assert "pending" in refused(capsys, (cab,), "request", "--state-dir", str(cab), "--name", "EGM-0001")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the state directory to another user")
def test_root_does_not_write_into_the_service_users_state_dir(capsys, tmp_path: Path) -> None:
    cab = tmp_path / "cabinet"
    cab.mkdir()
    os.chown(cab, 990, 990)
    err = refused(capsys, (cab,), "request", "--state-dir", str(cab), "--name", "EGM-0001")
    assert "sudo -u egm" in err
