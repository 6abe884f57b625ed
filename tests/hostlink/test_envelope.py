"""The host-link envelope: round trips, every rejection reason, and fuzzing of the decoder."""

from __future__ import annotations

import struct
from datetime import UTC, datetime, timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, x25519
from cryptography.x509.oid import NameOID
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from egmproto import envelope as E
from egmproto.errors import REASONS, EnvelopeError, EnvelopeRejected
from egmproto.messages import SCHEMA, TO_HOST, TO_TERMINAL, check_body

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
TERMINAL = "T-0042"

ED_KEY = ed25519.Ed25519PrivateKey.generate()
P256_KEY = ec.generate_private_key(ec.SECP256R1())
HOST_KEY = x25519.X25519PrivateKey.generate()

EPOCH = "0123456789abcdef"
BODIES = {
    "hello": {"software": "egm 1.0", "last_host_seq": None, "kem_public": "AAAA", "epoch": EPOCH},
    "meters": {"meters": {"bills_in": 2000, "games": {"war": {"coin_in": 5, "wagers": {}}},
                          "bills_in_by_denom": {"500": 4}},
               "credits": 1500, "credit_count": 1500, "denomination": 1, "epoch": EPOCH},
    "event": {"name": "door_open", "data": {"door": "main", "n": -1, "ok": True, "x": None,
                                             "list": [1, "a"]}, "epoch": EPOCH},
    "round": {"record": {"round_id": "ab12", "net": -5, "game": "war"}, "epoch": EPOCH},
    "voucher_redeem_request": {"validation": "001234567890123456", "epoch": EPOCH},
    "ack": {"seq": 17, "epoch": EPOCH, "held": 17},
    "disable": {"cmd": 3, "confirmed": 2, "reason": "audit"},
    "enable": {"cmd": 4, "confirmed": 2},
    "send_meters": {"cmd": 5, "confirmed": 2},
    "set_time": {"cmd": 6, "confirmed": 2, "iso": "2025-03-01T12:00:00+00:00"},
    "voucher_redeem_reply": {"validation": "001234567890123456", "approved": True,
                             "amount_cents": 2500},
    "package_offer": {"cmd": 7, "confirmed": 2, "name": "war", "version": "1.2.0",
                      "url": "https://host/p/war-1.2.0.egp",
                      "sha256": "ab" * 32},
}


def keys_for(signing_key):
    return {TERMINAL: signing_key.public_key()}


def seal(type_="meters", body=None, *, seq=5, time=NOW, sender=TERMINAL, key=ED_KEY,
         recipient=None, **kw):
    return E.seal(sender_id=sender, seq=seq, time=time, type=type_,
                  body=BODIES[type_] if body is None else body, signing_key=key,
                  recipient_public_key=recipient or HOST_KEY.public_key(), **kw)


def open_(data, *, key=ED_KEY, last=None, now=NOW, recipient=HOST_KEY, **kw):
    known = keys_for(key)
    return E.open_(data, recipient_private_key=recipient, verify_key_for=known.get,
                   last_seq_for=lambda s: last, now=now, **kw)


def rejected(code, data, **kw):
    with pytest.raises(EnvelopeRejected) as info:
        open_(data, **kw)
    assert info.value.reason_code == code, str(info.value)
    return info.value


def test_the_schema_covers_the_brief():
    assert set(SCHEMA[3]) == set(BODIES)
    assert {n for n, m in SCHEMA[3].items() if m.direction == TO_HOST} == {
        "hello", "meters", "event", "round", "voucher_redeem_request"}
    # every report says which life of its terminal's critical memory numbered it
    assert all(m.required.get("epoch") == "epoch" for m in SCHEMA[3].values() if m.direction == TO_HOST)


@pytest.mark.parametrize("key", [ED_KEY, P256_KEY], ids=["ed25519", "p256"])
@pytest.mark.parametrize("type_", sorted(BODIES))
def test_round_trip_every_type(type_, key):
    data = seal(type_, key=key, seq=9)
    assert data[:4] == b"EGM1" and data[4] == 3
    got = open_(data, key=key, last=8)
    assert (got.sender_id, got.seq, got.time, got.type, got.body) == (TERMINAL, 9, NOW, type_, BODIES[type_])
    assert got.kem == "X25519"


def test_layout_matches_the_document():
    data = seal()
    magic, version, kem, n = struct.unpack_from(">4sBHB", data)
    assert (magic, version, kem, n) == (b"EGM1", 3, 0x0020, len(TERMINAL))
    assert data[8:8 + n] == TERMINAL.encode()
    (enc_len,) = struct.unpack_from(">H", data, 8 + n)
    assert enc_len == 32


def test_hybrid_kem_round_trip():
    host = E.generate_hybrid_private_key()
    data = seal(recipient=host.public_key(), pq_hybrid=True)
    assert struct.unpack_from(">H", data, 5)[0] == E.KEM_MLKEM768_X25519
    got = open_(data, recipient=[HOST_KEY, host])
    assert got.kem == "MLKEM768-X25519" and got.body == BODIES["meters"]
    # a host holding only the classic key cannot open it
    rejected("decrypt_failed", data, recipient=HOST_KEY)
    with pytest.raises(EnvelopeError):
        seal(recipient=HOST_KEY.public_key(), pq_hybrid=True)


def test_tampered_ciphertext():
    data = bytearray(seal())
    data[-20] ^= 0x01
    rejected("decrypt_failed", bytes(data))


def test_tampered_outer_sender_breaks_decryption():
    data = seal()
    rejected("decrypt_failed", data.replace(TERMINAL.encode(), b"T-0043", 1))


def test_wrong_recipient():
    rejected("decrypt_failed", seal(), recipient=x25519.X25519PrivateKey.generate())


@pytest.mark.parametrize("key", [ED_KEY, P256_KEY], ids=["ed25519", "p256"])
def test_flipped_signature_bit(key, monkeypatch):
    real = E._sign

    def flipped(k, data):
        alg, sig = real(k, data)
        return alg, sig[:10] + bytes([sig[10] ^ 0x04]) + sig[11:]

    monkeypatch.setattr(E, "_sign", flipped)
    rejected("bad_signature", seal(key=key), key=key)


def test_signed_by_a_foreign_key():
    foreign = ed25519.Ed25519PrivateKey.generate()
    rejected("bad_signature", seal(key=foreign))                # right id, wrong key
    rejected("bad_signature", seal(key=P256_KEY))               # other algorithm than registered


def test_unknown_sender():
    rejected("unknown_sender", seal(sender="T-9999"))


def test_verify_key_for_may_raise_lookup_error_or_its_own_rejection():
    data = seal()

    def revoked(sender):
        raise EnvelopeRejected("unknown_sender", "certificate revoked")

    for lookup in ({}.__getitem__, revoked):
        with pytest.raises(EnvelopeRejected) as info:
            E.open_(data, recipient_private_key=HOST_KEY, verify_key_for=lookup,
                    last_seq_for=lambda s: None, now=NOW)
        assert info.value.reason_code == "unknown_sender"


def _seal_inner(inner: bytes, *, sender=TERMINAL, key=ED_KEY, version=3):
    """An envelope around arbitrary (signed) inner bytes: what a buggy or hostile sender could send."""
    alg, sig = E._sign(key, inner)
    header = E._header(version, E.KEM_X25519, sender.encode())
    sealed = E._suite(E.KEM_X25519).encrypt(inner + bytes([alg]) + sig, HOST_KEY.public_key(),
                                            info=header)
    return header + struct.pack(">H", 32) + sealed


def _inner(**over):
    msg = {"v": 3, "sender": TERMINAL, "seq": 5, "time": "2025-03-01T12:00:00.000000Z",
           "type": "ack", "body": {"seq": 1}}
    msg.update(over)
    return E.canonical_json(msg)


def test_sender_mismatch():
    rejected("sender_mismatch", _seal_inner(_inner(sender="T-0001")))


def test_replay():
    data = seal(seq=5)
    assert open_(data, last=4).seq == 5
    rejected("replay", data, last=5)
    rejected("replay", data, last=6)


def test_stale_and_future():
    rejected("stale", seal(time=NOW - timedelta(seconds=301)))
    assert open_(seal(time=NOW - timedelta(seconds=299))).seq == 5
    rejected("future", seal(time=NOW + timedelta(seconds=61)))
    assert open_(seal(time=NOW + timedelta(seconds=59))).seq == 5
    rejected("stale", seal(), now=NOW + timedelta(seconds=10), max_age_s=5)


@pytest.mark.parametrize("body", [
    {},                                              # missing
    {"seq": 1, "extra": 2},                          # extra
    {"seq": "1"},                                    # wrong type
    {"seq": True},                                   # bool is not an int
    {"seq": -1},                                     # count below 0
    {"seq": 2**63},                                  # count above 2^63-1
])
def test_bad_body(body):
    rejected("bad_body", _seal_inner(_inner(body=body)))


def test_unknown_type_and_wrong_direction():
    rejected("bad_body", _seal_inner(_inner(type="launch_missiles")))
    rejected("bad_body", seal("meters"), direction=TO_TERMINAL)
    assert open_(seal("meters"), direction=TO_HOST).type == "meters"


@pytest.mark.parametrize("inner", [
    b'{"v":1',                                                     # not JSON
    _inner().replace(b",", b", ", 1),                              # not canonical
    _inner(time="2025-03-01 12:00:00"),                            # time format
    _inner(seq=True),                                              # seq not an int
    E.canonical_json({"v": 1, "sender": TERMINAL}),                # envelope fields missing
    b'[1,2]',
    b'{"body":{"seq":1.5},"sender":"T-0042","seq":5,"time":"2025-03-01T12:00:00.000000Z","type":"ack","v":1}',
])
def test_malformed_inner(inner):
    rejected("malformed", _seal_inner(inner))


def test_unsupported_version():
    rejected("unsupported_version", _seal_inner(_inner(v=1)))       # versions 1 and 2 are no longer spoken
    rejected("unsupported_version", _seal_inner(_inner(v=2)))
    rejected("unsupported_version", _seal_inner(_inner(v=4)))
    data = bytearray(seal())
    data[4] = 1
    rejected("unsupported_version", bytes(data))
    for version in (1, 2, 4):
        with pytest.raises(EnvelopeError):
            seal(version=version)


def test_too_large():
    rejected("too_large", b"EGM1" + bytes(E.MAX_ENVELOPE_BYTES))
    with pytest.raises(EnvelopeError):
        seal("event", {"name": "x", "data": {"blob": "a" * E.MAX_ENVELOPE_BYTES}})


@pytest.mark.parametrize("data", [b"", b"EGM", b"XXXX\x01\x00\x20\x01T", b"EGM1\x03\x00\x20\x00",
                                  b"EGM1\x03\x00\x20\x06T-0042", b"EGM1\x03\x00\x21\x01T",
                                  b"EGM1\x03\x00\x20\x01T\x00\x20" + bytes(40), b"EGM1\x03\x00\x20\x01T\x00\x21" + bytes(200)])
def test_truncated_and_garbage(data):
    rejected("malformed", data)


def test_truncation_of_a_real_envelope_at_every_length():
    data = seal("ack")
    for n in range(len(data)):
        with pytest.raises(EnvelopeRejected):
            open_(data[:n])


def test_seal_refuses_bad_input():
    for kw in ({"sender": "bad id"}, {"sender": "x" * 33}, {"seq": -1}, {"seq": True},
               {"time": datetime(2025, 1, 1)}, {"key": x25519.X25519PrivateKey.generate()}):
        with pytest.raises(EnvelopeError):
            seal(**kw)
    with pytest.raises(EnvelopeError):
        seal("ack", {"seq": 1.0})


def test_check_body_kinds():
    check_body("meters", BODIES["meters"])
    for type_, body in [("meters", {"meters": {"a": -1}, "credits": 0}),
                        ("meters", {"meters": {"a": True}, "credits": 0}),
                        ("voucher_redeem_request", {"validation": "12345"}),
                        ("voucher_redeem_request", {"validation": 123456789012345678}),
                        ("voucher_redeem_reply", {"validation": "0" * 18, "approved": 1,
                                                  "amount_cents": 1}),
                        ("set_time", {"iso": "2025-03-01T12:00:00"}),
                        ("package_offer", {**BODIES["package_offer"], "sha256": "AB" * 32}),
                        ("event", {"name": "x", "data": {"f": 0.5}}),
                        ("event", {"name": "x", "data": {"n": 2**64}}),
                        ("event", {"name": "", "data": {}})]:
        with pytest.raises(EnvelopeError):
            check_body(type_, body)


def _cert(cn: str, key):
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    ca = ec.generate_private_key(ec.SECP256R1())
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1)
            .not_valid_before(NOW).not_valid_after(NOW + timedelta(days=1))
            .sign(ca, hashes.SHA256()))


def test_key_from_certificate():
    from cryptography.hazmat.primitives.serialization import Encoding

    cert = _cert(TERMINAL, P256_KEY)
    key = E.key_from_certificate(cert, TERMINAL)
    assert key.public_numbers() == P256_KEY.public_key().public_numbers()
    assert E.key_from_certificate(cert.public_bytes(Encoding.PEM), TERMINAL) == key
    assert E.key_from_certificate(cert.public_bytes(Encoding.DER), TERMINAL) == key
    with pytest.raises(EnvelopeRejected) as info:
        E.key_from_certificate(cert, "T-0001")
    assert info.value.reason_code == "sender_mismatch"
    with pytest.raises(EnvelopeRejected) as info:
        E.key_from_certificate(_cert(TERMINAL, ec.generate_private_key(ec.SECP384R1())), TERMINAL)
    assert info.value.reason_code == "unknown_sender"
    # wired into open_: a certificate whose CN is another terminal's cannot vouch for this one
    data = seal(key=P256_KEY)
    got = E.open_(data, recipient_private_key=HOST_KEY,
                  verify_key_for=lambda s: E.key_from_certificate(cert, s),
                  last_seq_for=lambda s: None, now=NOW)
    assert got.sender_id == TERMINAL


def test_every_reason_is_tested():
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    for code in REASONS:
        assert f'rejected("{code}"' in source or f'== "{code}"' in source, code


VALID = seal("voucher_redeem_request")
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.binary(max_size=400))
def test_fuzz_random_bytes(data):
    with pytest.raises(EnvelopeRejected):
        open_(data)


@FUZZ
@given(st.binary(max_size=200).map(lambda b: b"EGM1\x03\x00\x20" + b))
def test_fuzz_random_bytes_after_a_valid_prefix(data):
    with pytest.raises(EnvelopeRejected):
        open_(data)


@FUZZ
@given(st.integers(0, len(VALID) - 1), st.integers(1, 255))
def test_fuzz_single_byte_mutation(pos, xor):
    data = bytearray(VALID)
    data[pos] ^= xor
    with pytest.raises(EnvelopeRejected):
        open_(bytes(data))


@pytest.mark.parametrize("sig", [bytes(64), b"\xff" * 64], ids=["zeros", "ones"])
@pytest.mark.parametrize("key", [ED_KEY, P256_KEY], ids=["ed25519", "p256"])
def test_degenerate_signatures(key, sig, monkeypatch):
    real = E._sign
    monkeypatch.setattr(E, "_sign", lambda k, data: (real(k, data)[0], sig))
    rejected("bad_signature", seal(key=key), key=key)


def test_naive_now_is_a_caller_error():
    with pytest.raises(EnvelopeError):
        open_(seal(), now=datetime(2025, 3, 1, 12))


HYBRID_HOST = E.generate_hybrid_private_key()
VALID_HYBRID = seal("ack", recipient=HYBRID_HOST.public_key(), pq_hybrid=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(VALID_HYBRID) - 1), st.integers(1, 255))
def test_fuzz_single_byte_mutation_hybrid(pos, xor):
    data = bytearray(VALID_HYBRID)
    data[pos] ^= xor
    with pytest.raises(EnvelopeRejected):
        open_(bytes(data), recipient=[HOST_KEY, HYBRID_HOST])
