"""``egm software manifest|sign|verify|hash|dev-sign``: exit codes, one clear line on failure, JSON."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from firmware.cabinet.software import fingerprint, private_key_pem, public_key_pem
from firmware.cli import main

FILES = {
    "firmware/__init__.py": b"",
    "firmware/cli.py": b"print('egm')\n",
    "hal/__init__.py": b"",
    "drivers/__init__.py": b"",
    "sim_hardware/__init__.py": b"",
    "host/__init__.py": b"# host\n",
    "egmproto/__init__.py": b"",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for rel, data in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Ed25519PrivateKey, Path, Path]:
    key = Ed25519PrivateKey.generate()
    (tmp_path / "signer.key.pem").write_bytes(private_key_pem(key))
    (tmp_path / "signer.pub.pem").write_bytes(public_key_pem(key))
    return key, tmp_path / "signer.key.pem", tmp_path / "signer.pub.pem"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["software", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_manifest_to_stdout_and_to_a_file(capsys, root, tmp_path):
    code, out, _ = run(capsys, "manifest", "--root", str(root))
    assert code == 0
    doc = json.loads(out)
    assert [f["path"] for f in doc["files"]] == sorted(FILES)
    code, out, _ = run(capsys, "manifest", "--root", str(root), "--out", str(tmp_path / "m.json"))
    assert code == 0 and "7 files" in out
    assert json.loads((tmp_path / "m.json").read_text())["files"] == doc["files"]


def test_sign_then_verify_then_tamper(capsys, root, keys, tmp_path):
    key, private, public = keys
    signed = tmp_path / "signed.json"
    code, out, _ = run(capsys, "sign", "--key", str(private), "--root", str(root), "--out", str(signed))
    assert code == 0 and fingerprint(key.public_key()) in out
    verify = ("verify", "--root", str(root), "--manifest", str(signed), "--trust", str(public))
    code, out, err = run(capsys, *verify)
    assert code == 0 and out.startswith("ok: 7 files match") and err == ""
    code, out, _ = run(capsys, *verify, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["ok"] and doc["files_checked"] == 7 and doc["signer"] == fingerprint(key.public_key())

    (root / "host" / "__init__.py").write_bytes(b"# tampered\n")
    code, out, err = run(capsys, *verify)
    assert code == 1
    assert out == "changed: host/__init__.py\n"
    assert err.count("\n") == 1 and err.startswith("egm software verify: FAILED: ")
    assert "changed: host/__init__.py" in err
    code, out, err = run(capsys, *verify, "--json")
    assert code == 1 and json.loads(out)["mismatches"] == ["changed: host/__init__.py"]


def test_verify_refuses_a_signer_that_is_not_trusted(capsys, root, keys, tmp_path):
    _, private, _ = keys
    other = Ed25519PrivateKey.generate()
    (tmp_path / "other.pub.pem").write_bytes(public_key_pem(other))
    signed = tmp_path / "signed.json"
    run(capsys, "sign", "--key", str(private), "--root", str(root), "--out", str(signed))
    code, _, err = run(capsys, "verify", "--root", str(root), "--manifest", str(signed),
                       "--trust", str(tmp_path / "other.pub.pem"))
    assert code == 1 and "is not trusted" in err and err.count("\n") == 1


def test_verify_without_a_development_signature_says_how_to_make_one(capsys, root):
    code, _, err = run(capsys, "verify", "--root", str(root))
    assert code == 1 and "is missing" in err and "egm software dev-sign" in err


def test_dev_sign_then_verify_with_the_defaults(capsys, root):
    code, out, _ = run(capsys, "dev-sign", "--root", str(root))
    assert code == 0 and ".egm-dev/manifest.signed.json" in out
    code, out, err = run(capsys, "verify", "--root", str(root))
    assert code == 0, err


def test_sign_with_a_bad_or_encrypted_key_is_one_clear_line(capsys, root, tmp_path, monkeypatch):
    (tmp_path / "bad.pem").write_text("not a key\n")
    code, _, err = run(capsys, "sign", "--key", str(tmp_path / "bad.pem"), "--root", str(root),
                       "--out", str(tmp_path / "s.json"))
    assert code == 2 and "not a PEM private key" in err and err.count("\n") == 1
    (tmp_path / "enc.pem").write_bytes(private_key_pem(Ed25519PrivateKey.generate(), b"pw"))
    sign = ("sign", "--key", str(tmp_path / "enc.pem"), "--root", str(root), "--out", str(tmp_path / "s.json"))
    code, _, err = run(capsys, *sign)
    assert code == 2 and "is encrypted" in err
    code, _, err = run(capsys, *sign, "--password-env", "EGM_TEST_SIGNING_PW")
    assert code == 2 and "EGM_TEST_SIGNING_PW is not set" in err
    monkeypatch.setenv("EGM_TEST_SIGNING_PW", "pw")
    code, _, err = run(capsys, *sign, "--password-env", "EGM_TEST_SIGNING_PW")
    assert code == 0, err


def test_hash_plain_and_hmac(capsys, root):
    code, out, _ = run(capsys, "hash", "--algorithm", "sha256", "--root", str(root))
    lines = out.splitlines()
    assert code == 0 and len(lines) == len(FILES) + 1
    assert [line.split("  ")[1] for line in lines[:-1]] == sorted(FILES)     # sha256sum's format
    assert f"{hashlib.sha256(FILES['firmware/cli.py']).hexdigest()}  firmware/cli.py" in lines
    assert lines[-1].startswith("overall sha256 ")
    code, out, _ = run(capsys, "hash", "--algorithm", "hmac-sha1", "--seed", "0xDEADbeef", "--root", str(root),
                       "--json")
    doc = json.loads(out)
    assert code == 0 and doc["seed"] == "deadbeef"
    cli = next(f for f in doc["files"] if f["path"] == "firmware/cli.py")
    assert cli["digest"] == hmac.new(bytes.fromhex("deadbeef"), FILES["firmware/cli.py"], "sha1").hexdigest()


@pytest.mark.parametrize("argv,message", [
    (("--algorithm", "hmac-sha256"), "needs a seed"),
    (("--algorithm", "sha1", "--seed", "00"), "takes no seed"),
    (("--algorithm", "hmac-sha256", "--seed", "xyz"), "--seed must be hexadecimal"),
    (("--algorithm", "hmac-sha256", "--seed", "abc"), "--seed must be hexadecimal"),
    (("--algorithm", "hmac-sha256", "--seed", ""), "non-empty seed"),
])
def test_hash_seed_errors_are_one_clear_line(capsys, root, argv, message):
    code, out, err = run(capsys, "hash", *argv, "--root", str(root))
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_a_root_that_is_not_a_directory_is_a_usage_error(capsys, tmp_path):
    code, _, err = run(capsys, "manifest", "--root", str(tmp_path / "nope"))
    assert code == 2 and "is not a directory" in err


def test_the_egm_command_has_the_software_subcommand(root):
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "software", "hash", "--algorithm", "sha1",
                           "--root", str(root), "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["files"]) == len(FILES)
