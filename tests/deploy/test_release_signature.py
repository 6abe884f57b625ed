"""Detached release signatures (egmproto/release_signature.py, ``egm release sign|verify``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from egmproto.pki import PkiError, create_ca, issue, revoke
from egmproto.release_signature import ReleaseSignatureError, sign_file, verify_file
from firmware.cabinet.software import load_private_key
from firmware.cli import main


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("pki")
    ca = create_ca(base / "ca", name="Test Casino CA")
    other = create_ca(base / "other", name="Other CA")
    signer = issue(base / "ca", "code-signer", "release-signer")
    terminal = issue(base / "ca", "terminal", "EGM-0001")
    revoked = issue(base / "ca", "code-signer", "old-signer")
    revoke(base / "ca", "old-signer", "key-compromise")
    return {"ca": ca.cert, "crl": ca.crl, "other_ca": other.cert, "cert": signer.cert, "key": signer.key,
            "terminal_cert": terminal.cert, "terminal_key": terminal.key,
            "revoked_cert": revoked.cert, "revoked_key": revoked.key}


@pytest.fixture
def deb(tmp_path: Path) -> Path:
    path = tmp_path / "egm-terminal_0.1.0_amd64.deb"
    path.write_bytes(b"!<arch>\n" + bytes(range(256)) * 4096)
    return path


def _sign(deb: Path, pki: dict[str, Path], cert: str = "cert", key: str = "key") -> Path:
    assert main(["release", "sign", str(deb), "--key", str(pki[key]), "--cert", str(pki[cert])]) == 0
    return Path(f"{deb}.sig")


def test_a_signed_package_verifies_against_its_ca(deb: Path, pki: dict[str, Path], capsys) -> None:
    _sign(deb, pki)
    capsys.readouterr()
    assert main(["release", "verify", str(deb), "--ca", str(pki["ca"]), "--crl", str(pki["crl"]), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is True and result["signer"] == "release-signer" and result["size"] == deb.stat().st_size


def test_a_changed_byte_is_refused(deb: Path, pki: dict[str, Path], capsys) -> None:
    _sign(deb, pki)
    data = bytearray(deb.read_bytes())
    data[5000] ^= 1
    deb.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["release", "verify", str(deb), "--ca", str(pki["ca"])]) == 1
    assert "is not the signed file" in capsys.readouterr().err


def test_another_ca_is_refused(deb: Path, pki: dict[str, Path], capsys) -> None:
    _sign(deb, pki)
    capsys.readouterr()
    assert main(["release", "verify", str(deb), "--ca", str(pki["other_ca"])]) == 1
    assert "not signed by the CA" in capsys.readouterr().err


def test_a_revoked_signer_is_refused(deb: Path, pki: dict[str, Path], capsys) -> None:
    _sign(deb, pki, "revoked_cert", "revoked_key")
    capsys.readouterr()
    assert main(["release", "verify", str(deb), "--ca", str(pki["ca"]), "--crl", str(pki["crl"])]) == 1
    assert "revoked" in capsys.readouterr().err


def test_a_terminal_certificate_cannot_sign_a_release(deb: Path, pki: dict[str, Path]) -> None:
    # The terminal's key is ECDSA: refused before anything is written.
    assert main(["release", "sign", str(deb), "--key", str(pki["terminal_key"]),
                 "--cert", str(pki["terminal_cert"])]) == 2
    assert not Path(f"{deb}.sig").exists()


def test_a_forged_statement_or_certificate_is_refused(deb: Path, pki: dict[str, Path]) -> None:
    sig = _sign(deb, pki)
    document = json.loads(sig.read_text())
    # A statement edited to match another file: the signature no longer covers it.
    document["statement"]["size"] += 1
    sig.write_text(json.dumps(document))
    with pytest.raises(ReleaseSignatureError, match="does not verify"):
        verify_file(deb, sig, pki["ca"])
    # A signature made by the revoked signer's key presented with the good signer's certificate.
    key = load_private_key(pki["revoked_key"])
    forged = sign_file(deb, load_private_key(pki["key"]), pki["cert"].read_bytes())
    forged["signature"] = sign_file(deb, key, pki["revoked_cert"].read_bytes())["signature"]
    sig.write_text(json.dumps(forged))
    with pytest.raises(ReleaseSignatureError, match="does not verify"):
        verify_file(deb, sig, pki["ca"])


def test_a_missing_or_garbled_signature_is_one_line(deb: Path, pki: dict[str, Path], capsys) -> None:
    assert main(["release", "verify", str(deb), "--ca", str(pki["ca"])]) == 1
    assert capsys.readouterr().err.strip().endswith(f"no signature file {deb}.sig")
    Path(f"{deb}.sig").write_text("{not json")
    assert main(["release", "verify", str(deb), "--ca", str(pki["ca"])]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a JSON signature file" in err


def test_only_a_code_signer_certificate_is_accepted(deb: Path, pki: dict[str, Path]) -> None:
    sig = _sign(deb, pki)
    document = json.loads(sig.read_text())
    document["certificate"] = pki["terminal_cert"].read_text()
    sig.write_text(json.dumps(document))
    with pytest.raises(PkiError, match="not a code-signer one"):
        verify_file(deb, sig, pki["ca"])
