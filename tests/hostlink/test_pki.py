"""The casino PKI: key modes, chains, revocation, expiry, roles, names, the repository guard."""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.x509.oid import ExtendedKeyUsageOID

from egmproto import pki
from egmproto.pki import PkiError, verify_chain
from firmware.errors import EgmError


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def ca(tmp_path: Path) -> pki.CaFiles:
    return pki.create_ca(tmp_path / "ca")


@pytest.fixture
def terminal(ca: pki.CaFiles) -> pki.IssuedFiles:
    return pki.issue(ca.directory, "terminal", "EGM-0001")


def test_create_ca_files_modes_and_extensions(ca: pki.CaFiles) -> None:
    assert mode(ca.key) == 0o600
    assert mode(ca.cert) == 0o644
    cert = x509.load_pem_x509_certificate(ca.cert.read_bytes())
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
    assert cert.public_key().curve.name == "secp256r1"
    bc = cert.extensions.get_extension_for_class(x509.BasicConstraints)
    assert bc.critical and bc.value.ca and bc.value.path_length == 0
    ku = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    assert ku.key_cert_sign and ku.crl_sign
    cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
    cert.verify_directly_issued_by(cert)  # self-signed
    index = json.loads(ca.index.read_text())
    assert index["certs"] == [] and index["version"] == 1
    assert ca.crl.is_file()


def test_create_ca_refuses_to_replace(ca: pki.CaFiles) -> None:
    with pytest.raises(PkiError, match="already holds a CA"):
        pki.create_ca(ca.directory)


def test_key_is_0600_even_with_a_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        files = pki.create_ca(tmp_path / "ca")
        issued = pki.issue(files.directory, "host", "host1")
    finally:
        os.umask(old)
    assert mode(files.key) == 0o600
    assert mode(issued.key) == 0o600
    assert mode(issued.cert) == 0o644


def test_issue_terminal(ca: pki.CaFiles, terminal: pki.IssuedFiles) -> None:
    assert mode(terminal.key) == 0o600
    cert = x509.load_pem_x509_certificate(terminal.cert.read_bytes())
    assert pki.common_name(cert) == "EGM-0001"
    assert pki.terminal_id_of(cert) == "EGM-0001"
    assert pki.cert_kind(cert) == "terminal"
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
    ekus = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(ekus) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    verify_chain(cert, ca.cert, ca.crl, expect="terminal")
    verify_chain(terminal.cert, ca.cert.read_bytes())  # paths and PEM bytes work too


def test_issue_terminals_at_once_is_issue_for_each(ca: pki.CaFiles, terminal: pki.IssuedFiles) -> None:
    issued = pki.issue_terminals(ca.directory, ["EGM-0002", "EGM-0003"])
    for one, name in zip(issued, ["EGM-0002", "EGM-0003"], strict=True):
        cert = x509.load_pem_x509_certificate(one.cert.read_bytes())
        assert pki.terminal_id_of(cert) == name and pki.cert_kind(cert) == "terminal"
        assert mode(one.key) == 0o600
        verify_chain(cert, ca.cert, ca.crl, expect="terminal")
    listed = [c["name"] for c in pki.list_certs(ca.directory)]
    assert listed.count("EGM-0002") == 1 and listed.count("EGM-0003") == 1 and "EGM-0001" in listed
    with pytest.raises(PkiError, match="EGM-0001"):             # one that has a valid certificate
        pki.issue_terminals(ca.directory, ["EGM-0004", "EGM-0001"])
    assert not (ca.directory / "issued" / "EGM-0004.cert.pem").exists()   # nothing written
    with pytest.raises(PkiError, match="EGM-0005"):             # a name twice in the list
        pki.issue_terminals(ca.directory, ["EGM-0005", "EGM-0005"])


def test_issue_host_and_code_signer(ca: pki.CaFiles) -> None:
    host = pki.issue(ca.directory, "host", "host1", dns=["host1.casino.local", "localhost"], ips=["127.0.0.1"])
    cert = x509.load_pem_x509_certificate(host.cert.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["host1.casino.local", "localhost"]
    assert [str(a) for a in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    ekus = set(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)
    assert ekus == {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}
    verify_chain(cert, ca.cert, ca.crl, expect="host")

    signer = pki.issue(ca.directory, "code-signer", "signer-2025")
    scert = x509.load_pem_x509_certificate(signer.cert.read_bytes())
    assert isinstance(scert.public_key(), ed25519.Ed25519PublicKey)
    assert mode(signer.key) == 0o600
    verify_chain(scert, ca.cert, ca.crl, expect="code-signer")


def test_foreign_ca_refused(tmp_path: Path, terminal: pki.IssuedFiles) -> None:
    other = pki.create_ca(tmp_path / "other")  # same name, different key
    with pytest.raises(PkiError, match="not signed by the CA"):
        verify_chain(terminal.cert, other.cert)
    renamed = pki.create_ca(tmp_path / "renamed", name="Rogue CA")
    with pytest.raises(PkiError, match="not signed by the CA"):
        verify_chain(terminal.cert, renamed.cert)


def test_revoked_refused_after_revoke_and_crl(ca: pki.CaFiles, terminal: pki.IssuedFiles) -> None:
    verify_chain(terminal.cert, ca.cert, ca.crl)
    revoked = pki.revoke(ca.directory, terminal.serial, "key-compromise")
    assert [e["serial"] for e in revoked] == [terminal.serial]
    pem = pki.crl(ca.directory)
    assert pem == ca.crl.read_bytes()
    the_crl = x509.load_pem_x509_crl(pem)
    assert the_crl.next_update_utc - the_crl.last_update_utc == dt.timedelta(days=7)
    with pytest.raises(PkiError, match=r"revoked .*key-compromise"):
        verify_chain(terminal.cert, ca.cert, pem)
    with pytest.raises(PkiError, match="already revoked"):
        pki.revoke(ca.directory, terminal.serial)
    listing = pki.list_certs(ca.directory)
    assert listing[0]["revoked"] is True and listing[0]["reason"] == "key-compromise"


def test_revoke_by_name_and_bad_reason(ca: pki.CaFiles, terminal: pki.IssuedFiles) -> None:
    with pytest.raises(PkiError, match="unknown revocation reason"):
        pki.revoke(ca.directory, "EGM-0001", "because")
    with pytest.raises(PkiError, match="no certificate"):
        pki.revoke(ca.directory, "EGM-9999")
    pki.revoke(ca.directory, "EGM-0001", "cessation_of_operation")
    with pytest.raises(PkiError, match="revoked"):
        verify_chain(terminal.cert, ca.cert, ca.crl)


def test_crl_from_a_foreign_ca_or_stale_is_refused(tmp_path: Path, ca: pki.CaFiles, terminal: pki.IssuedFiles) -> None:
    other = pki.create_ca(tmp_path / "other")
    with pytest.raises(PkiError, match="CRL is not signed by the CA"):
        verify_chain(terminal.cert, ca.cert, other.crl)
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=8)
    with pytest.raises(PkiError, match="CRL is out of date"):
        verify_chain(terminal.cert, ca.cert, ca.crl, now=later)


def test_expired_and_not_yet_valid_refused(ca: pki.CaFiles) -> None:
    short = pki.issue(ca.directory, "terminal", "EGM-0002", days=1)
    now = dt.datetime.now(dt.UTC)
    verify_chain(short.cert, ca.cert, now=now + dt.timedelta(hours=23))
    with pytest.raises(PkiError, match="expired"):
        verify_chain(short.cert, ca.cert, now=now + dt.timedelta(days=2))
    later = pki.issue(ca.directory, "terminal", "EGM-0003", now=now + dt.timedelta(hours=1))
    with pytest.raises(PkiError, match="not yet valid"):
        verify_chain(later.cert, ca.cert, now=now)
    with pytest.raises(PkiError, match="CA certificate is not valid"):
        verify_chain(short.cert, ca.cert, now=now + dt.timedelta(days=3651))


def test_wrong_role_refused(ca: pki.CaFiles, terminal: pki.IssuedFiles) -> None:
    with pytest.raises(PkiError, match="terminal certificate, not a host one"):
        verify_chain(terminal.cert, ca.cert, expect="host")
    with pytest.raises(PkiError, match="not a code-signer one"):
        verify_chain(terminal.cert, ca.cert, expect="code-signer")
    signer = pki.issue(ca.directory, "code-signer", "signer")
    with pytest.raises(PkiError, match="not a terminal one"):
        verify_chain(signer.cert, ca.cert, expect="terminal")
    with pytest.raises(PkiError, match="unknown certificate kind"):
        verify_chain(signer.cert, ca.cert, expect="printer")
    with pytest.raises(PkiError, match="is a CA certificate"):
        verify_chain(ca.cert, ca.cert)


@pytest.mark.parametrize("name", ["", "-EGM", ".x", "a" * 33, "EGM 1", "EGM/1", "ÉGM", "a:b"])
def test_bad_names_refused(ca: pki.CaFiles, name: str) -> None:
    with pytest.raises(PkiError, match="invalid terminal id"):
        pki.issue(ca.directory, "terminal", name)


def test_bad_kind_dns_ip_and_duplicates_refused(ca: pki.CaFiles, terminal: pki.IssuedFiles) -> None:
    with pytest.raises(PkiError, match="unknown certificate kind"):
        pki.issue(ca.directory, "printer", "p1")
    with pytest.raises(PkiError, match="invalid DNS name"):
        pki.issue(ca.directory, "host", "h1", dns=["*.casino.local"])
    with pytest.raises(PkiError, match="invalid IP address"):
        pki.issue(ca.directory, "host", "h1", ips=["300.1.1.1"])
    with pytest.raises(PkiError, match="for host certificates"):
        pki.issue(ca.directory, "terminal", "EGM-0003", dns=["x.local"])
    with pytest.raises(PkiError, match="already has a valid terminal certificate"):
        pki.issue(ca.directory, "host", "EGM-0001")
    assert issubclass(PkiError, EgmError)


def test_missing_ca_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PkiError, match="no CA in"):
        pki.issue(tmp_path / "nothing", "terminal", "EGM-0001")
    with pytest.raises(PkiError, match="no such file"):
        verify_chain(tmp_path / "missing.pem", tmp_path / "ca.pem")
    (tmp_path / "junk.pem").write_bytes(b"-----BEGIN CERTIFICATE-----\njunk\n-----END CERTIFICATE-----\n")
    with pytest.raises(PkiError, match="not a certificate"):
        pki.load_certificate(tmp_path / "junk.pem")


def test_refuses_to_write_inside_a_repository(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    (repo / ".git").mkdir(parents=True)
    with pytest.raises(PkiError, match="inside the git repository"):
        pki.create_ca(repo / "certs" / "ca")
    assert not (repo / "certs").exists()
    with pytest.raises(PkiError, match="inside the git repository"):
        pki.ensure_development_pki(repo / "state", "EGM-0001")
    # this very checkout counts too
    here = Path(__file__).resolve().parent / "never-here"
    with pytest.raises(PkiError, match="inside the git repository"):
        pki.create_ca(here)
    assert not here.exists()
    # a CA made elsewhere cannot issue into the repository either
    files = pki.create_ca(repo / "ca", allow_in_repo=True)
    with pytest.raises(PkiError, match="inside the git repository"):
        pki.issue(files.directory, "terminal", "EGM-0001")
    pki.issue(files.directory, "terminal", "EGM-0001", allow_in_repo=True)


def test_renew_keeps_subject_and_old_stays_valid(ca: pki.CaFiles, terminal: pki.IssuedFiles) -> None:
    old = x509.load_pem_x509_certificate(terminal.cert.read_bytes())
    old_key = terminal.key.read_bytes()
    new = pki.renew(ca.directory, "EGM-0001")
    assert new.serial != terminal.serial and new.cert == terminal.cert
    assert new.key.read_bytes() != old_key and mode(new.key) == 0o600
    cert = x509.load_pem_x509_certificate(new.cert.read_bytes())
    assert cert.subject == old.subject
    assert pki.terminal_id_of(cert) == "EGM-0001"
    assert cert.public_key() != old.public_key()
    verify_chain(cert, ca.cert, ca.crl, expect="terminal")
    verify_chain(old, ca.cert, ca.crl, expect="terminal")  # not revoked by the renewal
    pki.revoke(ca.directory, terminal.serial, "superseded")
    with pytest.raises(PkiError, match="revoked"):
        verify_chain(old, ca.cert, ca.crl)
    verify_chain(cert, ca.cert, ca.crl)
    assert [c["serial"] for c in pki.list_certs(ca.directory)] == [terminal.serial, new.serial]
    with pytest.raises(PkiError, match="no certificate named"):
        pki.renew(ca.directory, "EGM-0404")


def test_list_certs(ca: pki.CaFiles, terminal: pki.IssuedFiles) -> None:
    pki.issue(ca.directory, "host", "host1")
    rows = pki.list_certs(ca.directory)
    assert [(r["kind"], r["name"], r["revoked"]) for r in rows] == [
        ("terminal", "EGM-0001", False), ("host", "host1", False)
    ]
    assert rows[0]["serial"] == terminal.serial
    assert rows[0]["subject"] == "CN=EGM-0001,OU=terminal"
    assert dt.datetime.fromisoformat(rows[0]["not_after"]) > dt.datetime.fromisoformat(rows[0]["not_before"])


def test_ensure_development_pki_idempotent(tmp_path: Path) -> None:
    paths = pki.ensure_development_pki(tmp_path / "state", "EGM-0042")
    assert paths["dir"] == tmp_path / "state" / "pki"
    for key in ("ca_key", "terminal_key", "host_key", "code_signer_key", "host_kem_key"):
        assert mode(paths[key]) == 0o600, key
    ca_cert = paths["ca_cert"]
    verify_chain(paths["terminal_cert"], ca_cert, paths["crl"], expect="terminal")
    verify_chain(paths["host_cert"], ca_cert, paths["crl"], expect="host")
    verify_chain(paths["code_signer_cert"], ca_cert, paths["crl"], expect="code-signer")
    verify_chain(paths["host_kem_cert"], ca_cert, paths["crl"], expect="host-kem")
    before = {k: p.read_bytes() for k, p in paths.items() if p.is_file() and k != "crl"}
    again = pki.ensure_development_pki(tmp_path / "state", "EGM-0042")
    assert again == paths
    assert {k: p.read_bytes() for k, p in again.items() if p.is_file() and k != "crl"} == before
    assert len(pki.list_certs(paths["dir"])) == 4
    # a lost key is replaced (same subject), everything else kept
    paths["terminal_key"].unlink()
    pki.ensure_development_pki(tmp_path / "state", "EGM-0042")
    assert mode(paths["terminal_key"]) == 0o600
    assert paths["ca_cert"].read_bytes() == before["ca_cert"]
    assert len(pki.list_certs(paths["dir"])) == 5
    # a stale CRL is re-signed on the next start
    pki.crl(paths["dir"], now=dt.datetime.now(dt.UTC) - dt.timedelta(days=8))
    with pytest.raises(PkiError, match="CRL is out of date"):
        verify_chain(paths["host_cert"], ca_cert, paths["crl"])
    pki.ensure_development_pki(tmp_path / "state", "EGM-0042")
    verify_chain(paths["host_cert"], ca_cert, paths["crl"], expect="host")
    with pytest.raises(PkiError, match="invalid terminal id"):
        pki.ensure_development_pki(tmp_path / "state", "bad id")


def test_an_update_signer_is_ecdsa_with_code_signing(tmp_path) -> None:
    """RAUC's CMS signature (OpenSSL 3.0) needs an ECDSA or RSA signer: the update-signer kind."""
    pki.create_ca(tmp_path / "ca")
    issued = pki.issue(tmp_path / "ca", "update-signer", "release-1")
    cert = pki.load_certificate(issued.cert)
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
    assert pki.cert_kind(cert) == "update-signer"
    code = pki.load_certificate(pki.issue(tmp_path / "ca", "code-signer", "code-1").cert)
    assert pki.cert_kind(code) == "code-signer"
