"""GLI-11 software verification (firmware.cabinet.software): manifest, Ed25519 signature, the power-up
check against tampering and hostile manifests, development signing, the lab's hashes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import shutil
import stat
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from firmware.cabinet import software as sw
from firmware.cabinet.software import (
    DEFAULT_PACKAGES,
    LAB_FRAMING,
    SoftwareError,
    SoftwareSettings,
    build_manifest,
    canonical_bytes,
    ensure_development_signature,
    fingerprint,
    lab_hash,
    load_private_key,
    load_public_key,
    power_up_check,
    private_key_pem,
    public_key_pem,
    sign_manifest,
    signed_json,
    verify_installation,
)

ROOT = Path(__file__).resolve().parents[2]

#: The tiny tree: one file or more in every default package, plus what must be left out.
TREE = {
    "firmware/__init__.py": b'"""tiny"""\n',
    "firmware/cli.py": b"def main():\n    return 0\n",
    "firmware/config/default.toml": b"[terminal]\nid = 'T1'\n",
    "firmware/math/sheets/s.json": b'{"rtp": 0.97}\n',
    "hal/__init__.py": b"",
    "drivers/__init__.py": b"# drivers\n",
    "sim_hardware/__init__.py": b"",
    "host/__init__.py": b"",
    "egmproto/__init__.py": b"",
}


def make_tree(root: Path, files: dict[str, bytes] = TREE) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    # Left out of the manifest: bytecode caches, and anything beside the packages.
    (root / "firmware" / "__pycache__").mkdir()
    (root / "firmware" / "__pycache__" / "cli.cpython-311.pyc").write_bytes(b"\x00junk")
    (root / "README.md").write_text("not a package file\n")
    return root


def write_keys(directory: Path, name: str) -> tuple[Ed25519PrivateKey, Path, Path]:
    key = Ed25519PrivateKey.generate()
    directory.mkdir(parents=True, exist_ok=True)
    private, public = directory / f"{name}.key.pem", directory / f"{name}.pub.pem"
    private.write_bytes(private_key_pem(key))
    public.write_bytes(public_key_pem(key))
    return key, private, public


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "root")


@pytest.fixture
def signer(tmp_path: Path) -> tuple[Ed25519PrivateKey, Path, Path]:
    return write_keys(tmp_path / "keys", "signer")


@pytest.fixture
def signed(tmp_path: Path, tree: Path, signer) -> Path:
    """A signed manifest of ``tree`` (outside it), by ``signer``."""
    path = tmp_path / "manifest.signed.json"
    path.write_text(signed_json(sign_manifest(build_manifest(tree), signer[0])))
    return path


def verify(signed: Path, tree: Path, signer) -> sw.VerificationResult:
    return verify_installation(signed, tree, [signer[2]])


# --- the manifest -------------------------------------------------------------------------------------

def test_manifest_lists_every_package_file_sorted_with_its_sha256_and_size(tree):
    manifest = build_manifest(tree)
    assert manifest["algorithm"] == "sha256"
    assert manifest["packages"] == list(DEFAULT_PACKAGES)
    assert manifest["version"] == sw.installed_version() != ""
    assert manifest["created"].endswith("Z") and manifest["created"][:2] == "20"
    assert [f["path"] for f in manifest["files"]] == sorted(TREE)          # no __pycache__, no README
    for f in manifest["files"]:
        assert f["sha256"] == hashlib.sha256(TREE[f["path"]]).hexdigest()
        assert f["size"] == len(TREE[f["path"]])


def test_canonical_bytes_are_sorted_compact_json():
    assert canonical_bytes({"b": [1, {"d": 1, "c": "é"}], "a": None}) == \
        b'{"a":null,"b":[1,{"c":"\\u00e9","d":1}]}'


def test_a_missing_package_or_a_symlinked_directory_cannot_be_built(tree, tmp_path):
    with pytest.raises(SoftwareError, match="missing package directory: nope"):
        build_manifest(tree, packages=("firmware", "nope"))
    with pytest.raises(SoftwareError, match="not a top-level package name"):
        build_manifest(tree, packages=("../etc",))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text("import os\n")
    (tree / "hal" / "plugins").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SoftwareError, match="symlinked directory: hal/plugins"):
        build_manifest(tree)


# --- signature ----------------------------------------------------------------------------------------

def test_signed_manifest_names_its_signer_and_the_signature_verifies(tree, signer):
    key, private, public = signer
    doc = sign_manifest(build_manifest(tree), load_private_key(private))
    assert doc["signer"] == fingerprint(load_public_key(public)) == fingerprint(key.public_key())
    raw = key.public_key().public_bytes_raw()
    assert doc["signer"] == hashlib.sha256(raw).hexdigest()
    key.public_key().verify(base64.b64decode(doc["signature"]), canonical_bytes(doc["manifest"]))


def test_key_files_are_checked(tmp_path, signer):
    _, private, public = signer
    with pytest.raises(SoftwareError, match="holds a private key"):
        load_public_key(private)
    with pytest.raises(SoftwareError, match="does not exist"):
        load_private_key(tmp_path / "nope.pem")
    (tmp_path / "junk.pem").write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    with pytest.raises(SoftwareError, match="not a PEM private key"):
        load_private_key(tmp_path / "junk.pem")
    encrypted = tmp_path / "enc.pem"
    encrypted.write_bytes(private_key_pem(Ed25519PrivateKey.generate(), b"s3cret"))
    with pytest.raises(SoftwareError, match="is encrypted"):
        load_private_key(encrypted)
    assert isinstance(load_private_key(encrypted, b"s3cret"), Ed25519PrivateKey)
    with pytest.raises(SoftwareError, match="wrong passphrase"):
        load_private_key(encrypted, b"wrong")


# --- verification -------------------------------------------------------------------------------------

def test_an_untouched_tree_verifies(tree, signed, signer):
    result = verify(signed, tree, signer)
    assert result.ok, result.reason
    assert result.files_checked == len(TREE) and result.mismatches == []
    assert result.signer == fingerprint(signer[0].public_key())
    doc = json.loads(signed.read_text())
    assert result.manifest_sha256 == hashlib.sha256(canonical_bytes(doc["manifest"])).hexdigest()
    assert f"{len(TREE)} files match" in result.reason


def test_a_tampered_file_is_named(tree, signed, signer):
    (tree / "firmware" / "cli.py").write_bytes(b"def main():\n    return 1\n")   # same size
    result = verify(signed, tree, signer)
    assert not result.ok
    assert result.mismatches == ["changed: firmware/cli.py"]
    assert "changed: firmware/cli.py" in result.reason and "\n" not in result.reason


def test_a_missing_file_and_an_extra_file_are_reported(tree, signed, signer):
    (tree / "firmware" / "config" / "default.toml").unlink()
    (tree / "drivers" / "backdoor.py").write_text("print('hi')\n")
    (tree / "hal" / "notes.txt").write_text("extra data file\n")
    result = verify(signed, tree, signer)
    assert not result.ok
    assert sorted(result.mismatches) == ["missing: firmware/config/default.toml",
                                         "unexpected: drivers/backdoor.py", "unexpected: hal/notes.txt"]
    assert result.reason.startswith("3 difference(s)")


def test_bytecode_outside_pycache_and_special_files_fail_but_caches_are_ignored(tree, signed, signer):
    (tree / "firmware" / "__pycache__" / "other.cpython-311.pyc").write_bytes(b"cache")
    assert verify(signed, tree, signer).ok
    (tree / "firmware" / "evil.pyc").write_bytes(b"sourceless module")
    os.mkfifo(tree / "host" / "pipe")            # must not hang the check
    result = verify(signed, tree, signer)
    assert not result.ok
    assert sorted(result.mismatches) == ["bytecode outside __pycache__: firmware/evil.pyc",
                                         "not a regular file: host/pipe"]


def test_a_file_symlink_is_verified_by_its_content(tree, signed, signer, tmp_path):
    target = tmp_path / "elsewhere.py"
    target.write_bytes(TREE["firmware/cli.py"])
    (tree / "firmware" / "cli.py").unlink()
    (tree / "firmware" / "cli.py").symlink_to(target)
    assert verify(signed, tree, signer).ok
    target.write_bytes(b"# changed\n")
    assert verify(signed, tree, signer).mismatches == ["changed: firmware/cli.py"]


def test_a_signer_that_is_not_trusted_is_refused(tree, signed, tmp_path):
    _, _, other_public = write_keys(tmp_path / "other", "other")
    result = verify_installation(signed, tree, [other_public])
    assert not result.ok and "is not trusted" in result.reason
    assert result.signer is None and result.files_checked == 0


def test_a_forged_signer_name_or_a_changed_manifest_fails_the_signature(tree, signed, signer, tmp_path):
    # Signed by a stranger, but claiming the trusted signer's fingerprint.
    stranger = Ed25519PrivateKey.generate()
    doc = sign_manifest(build_manifest(tree), stranger)
    doc["signer"] = fingerprint(signer[0].public_key())
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc))
    result = verify(forged, tree, signer)
    assert not result.ok and "signature does not verify" in result.reason
    # The real signature, with the manifest edited to match a tampered file.
    (tree / "firmware" / "cli.py").write_bytes(b"evil = True\n")
    doc = json.loads(signed.read_text())
    entry = next(f for f in doc["manifest"]["files"] if f["path"] == "firmware/cli.py")
    entry["sha256"], entry["size"] = hashlib.sha256(b"evil = True\n").hexdigest(), 12
    signed.write_text(json.dumps(doc))
    result = verify(signed, tree, signer)
    assert not result.ok and "signature does not verify" in result.reason


def test_trust_list_problems_fail_closed(tree, signed, signer, tmp_path):
    assert "no trusted code-signer public key" in verify_installation(signed, tree, []).reason
    result = verify_installation(signed, tree, [signer[2], tmp_path / "missing.pub.pem"])
    assert not result.ok and "does not exist" in result.reason
    result = verify_installation(signed, tree, [signer[1]])          # a private key as trust
    assert not result.ok and "holds a private key" in result.reason


def _signed_doc(manifest, key) -> str:
    data = canonical_bytes(manifest)
    return json.dumps({"manifest": manifest, "signature": base64.b64encode(key.sign(data)).decode(),
                       "signer": fingerprint(key.public_key())})


HOSTILE = {
    "empty": b"",
    "not json": b"this is not json",
    "truncated": b'{"manifest": {"files": [',
    "not utf-8": b'{"manifest": "\xff\xfe"}',
    "a list": b"[]",
    "null": b"null",
    "deep nesting": b"[" * 200_000 + b"]" * 200_000,
    "deep inside manifest": b'{"manifest": ' + b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"}",
    "huge number": b'{"manifest": {}, "signature": "", "signer": ' + b"9" * 10_000 + b"}",
    "no manifest": b'{"signature": "AAAA", "signer": "00"}',
    "manifest a string": b'{"manifest": "x", "signature": "AAAA", "signer": "00"}',
    "signature not base64": b'{"manifest": {}, "signature": "***", "signer": "' + b"0" * 64 + b'"}',
    "signature too short": b'{"manifest": {}, "signature": "AAAA", "signer": "' + b"0" * 64 + b'"}',
    "signature a number": b'{"manifest": {}, "signature": 5, "signer": "' + b"0" * 64 + b'"}',
    "signer not hex": b'{"manifest": {}, "signature": "' + base64.b64encode(bytes(64)) + b'", "signer": "zz"}',
    "nan": b'{"manifest": {"x": NaN}, "signature": "' + base64.b64encode(bytes(64)) + b'", "signer": "'
           + b"0" * 64 + b'"}',
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_corrupt_or_hostile_manifest_file_fails_without_raising(name, tree, signer, tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(HOSTILE[name])
    result = verify(path, tree, signer)
    assert not result.ok and result.reason and "\n" not in result.reason
    assert result.files_checked == 0


def _good_manifest(tree):
    return build_manifest(tree)


MALFORMED = {
    "path traversal": lambda m: m["files"].append({"path": "firmware/../../etc/passwd", "sha256": "0" * 64, "size": 1}),
    "absolute path": lambda m: m["files"].append({"path": "/etc/passwd", "sha256": "0" * 64, "size": 1}),
    "foreign package": lambda m: m["files"].append({"path": "tests/x.py", "sha256": "0" * 64, "size": 1}),
    "duplicate path": lambda m: m["files"].append(dict(m["files"][0])),
    "bad digest": lambda m: m["files"][0].update(sha256="XYZ"),
    "negative size": lambda m: m["files"][0].update(size=-1),
    "bool size": lambda m: m["files"][0].update(size=True),
    "files a dict": lambda m: m.update(files={}),
    "file a string": lambda m: m["files"].append("firmware/x.py"),
    "other algorithm": lambda m: m.update(algorithm="md5"),
    "bad package": lambda m: m.update(packages=["firmware", "../x"]),
    "package missing": lambda m: (m.update(packages=["firmware"]),
                                  m.update(files=[f for f in m["files"] if f["path"].startswith("firmware/")])),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_manifest_is_refused_even_when_properly_signed(name, tree, signer, tmp_path):
    manifest = _good_manifest(tree)
    MALFORMED[name](manifest)
    path = tmp_path / "m.json"
    path.write_text(_signed_doc(manifest, signer[0]))
    result = verify(path, tree, signer)
    assert not result.ok, name
    assert "malformed" in result.reason or "does not cover" in result.reason
    assert result.signer == fingerprint(signer[0].public_key())


def test_a_missing_or_unreadable_manifest_fails(tree, signer, tmp_path):
    result = verify(tmp_path / "nope.json", tree, signer)
    assert not result.ok and "is missing" in result.reason
    result = verify(tmp_path, tree, signer)                    # a directory
    assert not result.ok and "cannot be read" in result.reason


def test_unexpected_errors_fail_closed(tree, signed, signer, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("disk on fire")
    monkeypatch.setattr(sw, "_scan", boom)
    result = verify(signed, tree, signer)
    assert not result.ok and "disk on fire" in result.reason


# --- development signing and the power-up check --------------------------------------------------

def test_development_signature_is_made_once_and_refreshed_when_stale(tree, tmp_path):
    key_dir = tmp_path / "dev"
    path = ensure_development_signature(tree, key_dir)
    assert path == key_dir / sw.SIGNED_MANIFEST
    private = key_dir / sw.DEV_PRIVATE_KEY
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_dir.stat().st_mode) == 0o700
    public = key_dir / sw.DEV_PUBLIC_KEY
    assert verify_installation(path, tree, [public]).ok
    first, key_pem = path.read_bytes(), private.read_bytes()
    ensure_development_signature(tree, key_dir)
    assert path.read_bytes() == first                           # current: not rewritten
    (tree / "hal" / "new.py").write_text("x = 1\n")
    assert not verify_installation(path, tree, [public]).ok
    ensure_development_signature(tree, key_dir)
    assert path.read_bytes() != first and private.read_bytes() == key_pem
    assert verify_installation(path, tree, [public]).ok
    path.write_text("{corrupt")
    ensure_development_signature(tree, key_dir)
    assert verify_installation(path, tree, [public]).ok


def test_development_signature_defaults_to_root_egm_dev(tree):
    path = ensure_development_signature(tree)
    assert path == tree / ".egm-dev" / "manifest.signed.json"
    assert verify_installation(path, tree, [tree / ".egm-dev" / sw.DEV_PUBLIC_KEY]).ok


def test_settings_defaults_trust_the_development_key_only_in_development(tree, signed, signer):
    prod = SoftwareSettings.defaults(tree)
    assert prod == SoftwareSettings(manifest=None, trusted_keys=(), development=False)
    result = power_up_check(prod, tree)
    assert not result.ok and "no signed manifest is configured" in result.reason
    assert not (tree / ".egm-dev").exists()                      # production never self-signs
    dev = SoftwareSettings.defaults(tree, development=True)
    assert dev.development and dev.trusted_keys == (tree / ".egm-dev" / sw.DEV_PUBLIC_KEY,)
    result = power_up_check(dev, tree)                           # a clean clone passes
    assert result.ok, result.reason
    (tree / "firmware" / "cli.py").write_text("changed = True\n")
    assert power_up_check(dev, tree).ok                          # development re-signs itself
    # Production, configured: the code signer's manifest and key; a change fails.
    configured = SoftwareSettings(manifest=signed, trusted_keys=(signer[2],), development=False)
    result = power_up_check(configured, tree)
    assert not result.ok and result.mismatches == ["changed: firmware/cli.py"]
    # Production does not trust the development key.
    dev_manifest = tree / ".egm-dev" / sw.SIGNED_MANIFEST
    result = power_up_check(SoftwareSettings(dev_manifest, (signer[2],), False), tree)
    assert not result.ok and "is not trusted" in result.reason


def test_power_up_check_reports_an_unwritable_development_directory(tree, monkeypatch):
    def denied(*a, **k):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(sw, "write_atomic", denied)
    result = power_up_check(SoftwareSettings.defaults(tree, development=True), tree)
    assert not result.ok and "cannot write the development signature" in result.reason


# --- the lab's hashes ---------------------------------------------------------------------------------

def _framed(files: dict[str, bytes]) -> bytes:
    return b"".join(p.encode() + b"\0" + str(len(d)).encode() + b"\0" + d for p, d in sorted(files.items()))


@pytest.mark.parametrize("algorithm", ["sha1", "sha256"])
def test_lab_plain_hashes_match_hashlib(tree, algorithm):
    report = lab_hash(tree, algorithm)
    assert report["seed"] is None and report["framing"] == LAB_FRAMING
    assert [f["path"] for f in report["files"]] == [f["path"] for f in build_manifest(tree)["files"]]
    for f in report["files"]:
        assert f["digest"] == hashlib.new(algorithm, TREE[f["path"]]).hexdigest()
    assert report["overall"] == hashlib.new(algorithm, _framed(TREE)).hexdigest()


@pytest.mark.parametrize("algorithm,digestmod", [("hmac-sha1", "sha1"), ("hmac-sha256", "sha256")])
def test_lab_hmac_hashes_match_the_hmac_module(tree, algorithm, digestmod):
    seed = bytes.fromhex("00112233445566778899aabbccddeeff")
    report = lab_hash(tree, algorithm, seed)
    assert report["seed"] == seed.hex()
    for f in report["files"]:
        assert f["digest"] == hmac.new(seed, TREE[f["path"]], digestmod).hexdigest()
    assert report["overall"] == hmac.new(seed, _framed(TREE), digestmod).hexdigest()
    assert lab_hash(tree, algorithm, b"other seed")["overall"] != report["overall"]


def test_lab_hash_of_a_one_file_tree_is_the_known_digest(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "hello.txt").write_bytes(b"hello\n")
    report = lab_hash(tmp_path, "sha256", packages=("pkg",))
    # $ printf 'hello\n' | sha256sum
    assert report["files"] == [{"path": "pkg/hello.txt", "size": 6, "digest":
                                "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"}]
    # $ printf 'pkg/hello.txt\0006\000hello\n' | sha256sum      (path, NUL, size, NUL, bytes)
    assert report["overall"] == "3f6fe948116e6837f3dc3067f66ec89882d7920c951986e380df903b2f326686"


def test_lab_hash_refuses_a_missing_seed_a_needless_seed_and_unknown_algorithms(tree):
    with pytest.raises(SoftwareError, match="needs a seed"):
        lab_hash(tree, "hmac-sha256")
    with pytest.raises(SoftwareError, match="needs a non-empty seed"):
        lab_hash(tree, "hmac-sha1", b"")
    with pytest.raises(SoftwareError, match="takes no seed"):
        lab_hash(tree, "sha256", b"\x01")
    with pytest.raises(SoftwareError, match="unknown hash algorithm 'md5'"):
        lab_hash(tree, "md5")


# --- the real tree ------------------------------------------------------------------------------------

def test_the_real_tree_signs_and_verifies_quickly(tmp_path):
    key = Ed25519PrivateKey.generate()
    (tmp_path / "pub.pem").write_bytes(public_key_pem(key))
    manifest = build_manifest(ROOT)
    paths = [f["path"] for f in manifest["files"]]
    assert "firmware/cli.py" in paths and "firmware/cabinet/software.py" in paths
    assert "firmware/config/default.toml" in paths
    assert not any("__pycache__" in p or p.endswith(".pyc") for p in paths)
    signed = tmp_path / "m.json"
    signed.write_text(signed_json(sign_manifest(manifest, key)))
    start = time.perf_counter()
    result = verify_installation(signed, ROOT, [tmp_path / "pub.pem"])
    elapsed = time.perf_counter() - start
    assert result.ok, result.reason                # (an engineer saving a file mid-test would fail this)
    assert result.files_checked == len(paths) > 100
    assert elapsed < 2.0


def test_a_copy_of_a_real_package_detects_one_changed_byte(tmp_path, signer):
    root = tmp_path / "copy"
    shutil.copytree(ROOT / "hal", root / "hal", ignore=shutil.ignore_patterns("__pycache__"))
    manifest = build_manifest(root, packages=("hal",))
    path = tmp_path / "m.json"
    path.write_text(signed_json(sign_manifest(manifest, signer[0])))
    assert verify_installation(path, root, [signer[2]], required_packages=("hal",)).ok
    victim = root / manifest["files"][-1]["path"]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    result = verify_installation(path, root, [signer[2]], required_packages=("hal",))
    assert result.mismatches == [f"changed: {manifest['files'][-1]['path']}"]
    # The default package set is required: a manifest of hal alone does not pass for the product.
    assert "does not cover package(s) firmware" in verify_installation(path, root, [signer[2]]).reason
