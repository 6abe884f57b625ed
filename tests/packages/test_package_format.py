"""The game package format: what a code signer builds verifies, and every tampering is caught
with its reason code."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from egmproto import package_format as pf
from egmproto.pki import create_ca, issue, revoke
from firmware.cabinet.packages import accept_game_options
from tests.packages.conftest import OPTIONS, Signer


def _edit(data: bytes, change) -> bytes:
    doc = json.loads(data)
    change(doc)
    return json.dumps(doc).encode()


def _manifest_edit(data: bytes, change) -> bytes:
    def inner(doc):
        manifest = json.loads(base64.b64decode(doc["manifest"]))
        change(manifest)
        doc["manifest"] = base64.b64encode(json.dumps(manifest).encode()).decode()
    return _edit(data, inner)


def test_a_signed_package_verifies_and_carries_its_options(signer: Signer) -> None:
    data = signer.package(notes=b"release notes\n")
    package = pf.load(data, signer.check, expected_sha256=hashlib.sha256(data).hexdigest())
    assert (package.name, package.version) == ("tcp-flush-3", "1.0.0")
    assert package.files == {"options.toml": OPTIONS, "notes": b"release notes\n"}
    assert package.checked_options(accept_game_options) == {"three-card-poker": {"pair_plus_pays": {"flush": 3}}}
    assert package.summary()["signer"] == "dev-code-signer"


@pytest.mark.parametrize("tamper, reason", [
    (lambda d: _edit(d, lambda c: c["files"].update({"options.toml": base64.b64encode(
        b"[three-card-poker]\npair_plus_pays.flush = 40\n").decode()})), "file_mismatch"),
    (lambda d: _edit(d, lambda c: c["files"].update({"extra.txt": "eA=="})), "file_mismatch"),
    (lambda d: _edit(d, lambda c: c["files"].pop("options.toml")), "file_mismatch"),
    (lambda d: _manifest_edit(d, lambda m: m.update(version="9.9.9")), "bad_signature"),
    (lambda d: _edit(d, lambda c: c.update(signature=base64.b64encode(
        bytes([base64.b64decode(c["signature"])[0] ^ 1]) + base64.b64decode(c["signature"])[1:]).decode())),
     "bad_signature"),
    (lambda d: d[:-40], "malformed"),
    (lambda d: _edit(d, lambda c: c.update(format="egm-package/2")), "malformed"),
    (lambda d: _edit(d, lambda c: c["files"].update({"../evil": "eA=="})), "malformed"),
    (lambda d: _edit(d, lambda c: c["files"].update({"/etc/passwd": "eA=="})), "malformed"),
    (lambda d: _manifest_edit(d, lambda m: m.update(name="../../x")), "malformed"),
    (lambda d: d.replace(b'"format"', b'"format": "x", "format"', 1), "malformed"),
    (lambda d: b" " * (pf.MAX_PACKAGE_BYTES + 1), "too_large"),
])
def test_tampering_is_refused_with_its_reason(signer: Signer, tamper, reason) -> None:
    with pytest.raises(pf.PackageRejected) as info:
        pf.load(tamper(signer.package()), signer.check)
    assert info.value.reason == reason, info.value


def test_the_offered_digest_must_match(signer: Signer) -> None:
    data = signer.package()
    with pytest.raises(pf.PackageRejected) as info:
        pf.load(data, signer.check, expected_sha256="0" * 64)
    assert info.value.reason == "digest_mismatch"


def test_only_an_unrevoked_code_signer_of_the_casino_ca_is_trusted(signer: Signer, pki: Path,
                                                                  tmp_path: Path) -> None:
    issue(pki, "code-signer", "second-signer")
    second = Signer(pki, "second-signer")
    data = second.package()
    pf.load(data, signer.check)
    revoke(pki, "second-signer")
    with pytest.raises(pf.PackageRejected, match="revoked") as info:
        pf.load(data, signer.check)
    assert info.value.reason == "untrusted_signer"
    # a code signer of another CA
    foreign = tmp_path / "foreign"
    create_ca(foreign, name="Another Casino CA")
    issue(foreign, "code-signer", "their-signer")
    with pytest.raises(pf.PackageRejected, match="not signed by the CA") as info:
        pf.load(Signer(foreign, "their-signer").package(), signer.check)
    assert info.value.reason == "untrusted_signer"


def test_a_package_with_options_the_firmware_refuses_is_bad_content(signer: Signer) -> None:
    for options, match in ((b"[three-card-poker]\npair_plus_pays.flush = -1\n", "flush"),
                           (b"[no-such-game]\ndecks = 6\n", "no game"),
                           (b"decks = 6\n", "must be a table"),
                           (b"[three-card-poker\n", "options.toml")):
        with pytest.raises(pf.PackageRejected, match=match) as info:
            pf.load(signer.package(options=options), signer.check).checked_options(accept_game_options)
        assert info.value.reason == "bad_content"
    with pytest.raises(pf.PackageRejected):
        pf.build("x", "1", {"notes": b""}, signing_key=signer.key, certificate=signer.cert)


@pytest.mark.fuzz
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=2000) | st.text(max_size=500).map(str.encode))
def test_parse_survives_anything(signer: Signer, data: bytes) -> None:
    with contextlib.suppress(pf.PackageRejected):          # anything else fails the test
        pf.load(data, signer.check)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_single_byte_change_is_refused(signer: Signer, data) -> None:
    package = _package_cache(signer)
    i = data.draw(st.integers(0, len(package) - 1))
    b = data.draw(st.integers(0, 255).filter(lambda v: v != package[i]))
    changed = package[:i] + bytes([b]) + package[i + 1:]
    try:
        loaded = pf.load(changed, signer.check)
    except pf.PackageRejected:
        return
    # JSON whitespace and key order are not signed: what was accepted must be the same package
    assert loaded.files == {"options.toml": OPTIONS} and (loaded.name, loaded.version) == ("tcp-flush-3", "1.0.0")


_CACHE: dict[int, bytes] = {}


def _package_cache(signer: Signer) -> bytes:
    return _CACHE.setdefault(id(signer), signer.package())


def _pem(der: bytes) -> str:
    body = base64.b64encode(der).decode("ascii")
    return "-----BEGIN CERTIFICATE-----\n" + "\n".join(body[i:i + 64] for i in range(0, len(body), 64)) + \
        "\n-----END CERTIFICATE-----\n"


def _der(pem: str) -> bytes:
    return base64.b64decode("".join(pem.strip().splitlines()[1:-1]))


def _bad_version(pem: str) -> str:
    """The certificate with its X.509 version field changed from v3 (2) to 6, re-encoded as PEM."""
    der = _der(pem)
    assert der.count(b"\xa0\x03\x02\x01\x02") == 1
    return _pem(der.replace(b"\xa0\x03\x02\x01\x02", b"\xa0\x03\x02\x01\x06"))


def _duplicate_extension(pem: str) -> str:
    """The certificate with its SubjectKeyIdentifier's OID (2.5.29.14) made AuthorityKeyIdentifier's
    (2.5.29.35), so that the certificate holds that extension twice (a one-bit flip did the same)."""
    der = _der(pem)
    ski, aki = b"\x06\x03\x55\x1d\x0e", b"\x06\x03\x55\x1d\x23"
    assert der.count(ski) == 1 and der.count(aki) == 1
    return _pem(der.replace(ski, aki))


# Each raises something that is no ValueError in cryptography (InvalidVersion, DuplicateExtension):
# both found by the byte-change fuzz (the second at byte 345, bit 0, of a signed package).
@pytest.mark.parametrize("damage", [_bad_version, _duplicate_extension])
def test_a_damaged_certificate_is_malformed_not_a_crash(damage, signer: Signer, tmp_path: Path, capsys) -> None:
    from egmproto.envelope import EnvelopeRejected, key_from_certificate
    from egmproto.pki import PkiError, load_certificate
    from firmware.cli import main

    data = _edit(signer.package(), lambda d: d.update(certificate=damage(d["certificate"])))
    with pytest.raises(pf.PackageRejected) as info:
        pf.load(data, signer.check)
    assert info.value.reason == "malformed"
    bad = damage(json.loads(signer.package())["certificate"]).encode("ascii")
    with pytest.raises(PkiError, match="not a certificate"):
        load_certificate(bad)
    with pytest.raises(EnvelopeRejected, match="unreadable certificate"):
        key_from_certificate(bad, "tcp-signer")
    package = tmp_path / "damaged.pkg"
    package.write_bytes(data)
    status = main(["package", "verify", "--pki", str(signer.pki), str(package)])
    printed = capsys.readouterr()
    assert status == 1 and "REJECTED (malformed)" in printed.out and printed.err == ""
