"""eSSP layer: key exchange, AES-128 packet layout (checked with an independent decryptor), the
counter against replays, damage, and a fuzz target; plus the SSP poll-event and setup tables."""

from __future__ import annotations

import contextlib
import random

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codec import LocalProtocolError, Role
from drivers.crc import crc16_ssp
from drivers.ssp.codec import PollEvent, encode_events, parse_events
from drivers.ssp.essp import (
    MAX_PLAINTEXT,
    DecryptError,
    EsspSession,
    KeyExchange,
    ReplayError,
    aes_key,
    is_prime,
    parse_fixed_key,
    random_prime,
)
from drivers.ssp.setup import (
    REJECT_CODES,
    USD_SETUP,
    channels_for_cents,
    enabled_channels,
    encode_setup,
    inhibit_mask,
    parse_setup,
)
from tests.drivers.ssp_frames import crc_8005

#: A test key: never a real machine's.
TEST_FIXED_KEY = 0x0F1E2D3C4B5A6978
NEGOTIATED = 0x1122334455667788


def _pair(seed: int = 1) -> tuple[EsspSession, EsspSession]:
    host = EsspSession(Role.HOST, TEST_FIXED_KEY, rng=random.Random(seed))
    device = EsspSession(Role.DEVICE, TEST_FIXED_KEY, rng=random.Random(seed + 1))
    host.set_key(NEGOTIATED)
    device.set_key(NEGOTIATED)
    return host, device


def test_primes():
    assert [n for n in range(40) if is_prime(n)] == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
    assert is_prime(2**61 - 1) and not is_prime(2**61 + 1) and not is_prime(3215031751)
    p = random_prime(random.Random(3))
    assert p.bit_length() == 64 and is_prime(p)


def test_both_ends_of_the_exchange_compute_the_same_key():
    rng = random.Random(7)
    host = KeyExchange.for_host(rng)
    device = KeyExchange(host.generator, host.modulus, rng.getrandbits(64) | 1)
    assert is_prime(host.generator) and is_prime(host.modulus) and host.generator < host.modulus
    assert host.key(device.intermediate) == device.key(host.intermediate)


def test_the_aes_key_is_the_fixed_key_low_and_the_negotiated_key_high_little_endian():
    key = aes_key(TEST_FIXED_KEY, NEGOTIATED)
    assert key == bytes.fromhex("78695a4b3c2d1e0f" "8877665544332211")
    assert parse_fixed_key("0F1E2D3C4B5A6978") == TEST_FIXED_KEY
    assert parse_fixed_key("0x0f1e 2d3c 4b5a 6978") == TEST_FIXED_KEY
    for bad in ("", "123", "zz1e2d3c4b5a6978", "0F1E2D3C4B5A697800"):
        with pytest.raises(ValueError, match="16 hex digits"):
            parse_fixed_key(bad)


def test_packet_layout_decrypted_independently():
    host, _ = _pair()
    data = bytes.fromhex("07")                            # POLL
    wrapped = host.wrap(data)
    assert wrapped[0] == 0x7E and len(wrapped) == 1 + 16
    decryptor = Cipher(algorithms.AES(aes_key(TEST_FIXED_KEY, NEGOTIATED)), modes.ECB()).decryptor()
    block = decryptor.update(wrapped[1:]) + decryptor.finalize()
    assert block[0] == 1                                  # eLENGTH
    assert block[1:5] == b"\x00\x00\x00\x00"              # eCOUNT 0, little-endian
    assert block[5:6] == data
    crc = crc16_ssp(block[:-2])
    assert block[-2:] == bytes((crc & 0xFF, crc >> 8))    # eCRC low byte first
    second = host.wrap(bytes(12))                         # 5 + 12 + 2 = 19: two blocks
    assert len(second) == 1 + 32
    block = Cipher(algorithms.AES(aes_key(TEST_FIXED_KEY, NEGOTIATED)),
                   modes.ECB()).decryptor().update(second[1:])
    assert block[1:5] == b"\x01\x00\x00\x00" and block[0] == 12


def test_one_count_per_exchange_and_a_replay_is_refused():
    """ITL's C library as host: the command carries n, the reply n + 1, the next command n + 1."""
    host, device = _pair()
    command = host.wrap(b"\x07")
    assert (host.counter, device.counter) == (1, 0)
    assert device.unwrap(command) == b"\x07"
    assert device.counter == 1
    reply = device.wrap(b"\xf0\xe8")
    assert (host.counter, device.counter) == (1, 1)       # a reply does not count
    assert host.unwrap(reply) == b"\xf0\xe8"
    assert host.counter == 1
    with pytest.raises(ReplayError, match="eCOUNT 0, expected 1"):
        device.unwrap(command)                            # the old POLL, replayed
    assert device.unwrap(host.wrap(b"\x0a")) == b"\x0a"   # the next command carries 1
    with pytest.raises(ReplayError, match="eCOUNT 1, expected 2"):
        host.unwrap(reply)                                # the old reply, replayed
    assert host.unwrap(device.wrap(b"\xf0")) == b"\xf0"
    assert (host.counter, device.counter) == (2, 2)


class _ZeroPacking(random.Random):
    """ePACKING of zeros, so that a golden block is fixed."""

    def randbytes(self, n: int) -> bytes:
        return bytes(n)


#: Golden eSSP exchanges: test fixed key, negotiated key NEGOTIATED, zero packing; the plaintext
#: blocks written out from the public layout (eLENGTH, eCOUNT little-endian, eDATA, ePACKING, eCRC
#: low byte first) and the counts from ITL's C library (one step per exchange); the ciphertext is
#: AES-128-ECB of the block (checked below with ``cryptography`` directly).
#: (sender, eDATA, eCOUNT, plaintext block, SSP DATA on the wire)
GOLDEN_EXCHANGES = [
    ("host", "07", 0, "01 00000000 07 0000000000000000 A1C7",
     "7E C6 5C E3 01 EE 64 99 35 21 3F E8 4F D5 00 CB 09"),             # POLL
    ("device", "F0 E8", 1, "02 01000000 F0E8 00000000000000 5A28",
     "7E DD 0C 9D FF 23 E5 28 AB 4B DB 11 53 72 DE C3 54"),             # OK, DISABLED
    ("host", "0C", 1, "01 01000000 0C 0000000000000000 8181",
     "7E 16 68 6E F9 0A DA 20 20 00 A0 D8 CF F1 21 5F 37"),             # GET_SERIAL_NUMBER
    ("device", "F0 00 12 D6 87", 2, "05 02000000 F00012D687 00000000 1A13",
     "7E 1B CB 3D F6 8D C2 DD 76 85 53 E0 2E 09 79 4F 0E"),             # OK, 1234567
    ("host", "0A", 2, "01 02000000 0A 0000000000000000 4114",
     "7E 41 24 5C B6 2B 98 85 D6 ED 9F E1 23 A4 8A A0 CE"),             # ENABLE
    ("device", "F0", 3, "01 03000000 F0 0000000000000000 0D56",
     "7E A4 32 6F C4 B6 75 8F 9C 55 32 5E 95 00 6A B7 90"),             # OK
]


def _aes() -> Cipher:
    return Cipher(algorithms.AES(aes_key(TEST_FIXED_KEY, NEGOTIATED)), modes.ECB())


def test_golden_blocks_follow_the_public_layout():
    for _, data, count, block, wire in GOLDEN_EXCHANGES:
        plain, sealed = bytes.fromhex(block), bytes.fromhex(wire)
        assert len(plain) == 16 and plain[0] == len(bytes.fromhex(data))
        assert int.from_bytes(plain[1:5], "little") == count
        assert plain[5:5 + plain[0]] == bytes.fromhex(data)
        assert crc_8005(plain[:-2]) == plain[-2] | plain[-1] << 8
        encryptor = _aes().encryptor()
        assert sealed == b"\x7e" + encryptor.update(plain) + encryptor.finalize()


def test_both_roles_produce_and_accept_the_golden_exchanges():
    host = EsspSession(Role.HOST, TEST_FIXED_KEY, rng=_ZeroPacking())
    device = EsspSession(Role.DEVICE, TEST_FIXED_KEY, rng=_ZeroPacking())
    host.set_key(NEGOTIATED)
    device.set_key(NEGOTIATED)
    for sender, data, _, _, wire in GOLDEN_EXCHANGES:
        source, sink = (host, device) if sender == "host" else (device, host)
        assert source.wrap(bytes.fromhex(data)) == bytes.fromhex(wire)
        assert sink.unwrap(bytes.fromhex(wire)) == bytes.fromhex(data)
    assert (host.counter, device.counter) == (3, 3)


def test_damage_wrong_key_and_malformed_packets_are_decrypt_errors():
    host, device = _pair()
    good = host.wrap(b"\x07")
    for bad in (good[:-1] + bytes((good[-1] ^ 1,)), good[:-1], b"\x7e", b"\x07", b""):
        with pytest.raises(DecryptError):
            device.unwrap(bad)
    assert device.counter == 0                            # nothing counted
    stranger = EsspSession(Role.DEVICE, TEST_FIXED_KEY ^ 1)
    stranger.set_key(NEGOTIATED)
    with pytest.raises(DecryptError, match="wrong key"):
        stranger.unwrap(good)
    assert device.unwrap(good) == b"\x07"


def test_misuse_is_a_local_error():
    session = EsspSession(Role.HOST, TEST_FIXED_KEY)
    with pytest.raises(LocalProtocolError, match="no eSSP key"):
        session.wrap(b"\x07")
    session.set_key(1)
    with pytest.raises(LocalProtocolError, match="at most"):
        session.wrap(bytes(MAX_PLAINTEXT + 1))
    assert len(session.wrap(bytes(MAX_PLAINTEXT))) <= 255
    with pytest.raises(LocalProtocolError):
        EsspSession(Role.HOST, 1 << 64)


def test_poll_events_round_trip_and_truncation():
    events = [(PollEvent.READ, 5), (PollEvent.CREDIT, 5), (PollEvent.STACKING, None),
              (PollEvent.FRAUD_ATTEMPT, 0), (PollEvent.DISABLED, None)]
    data = encode_events(events)
    assert data == bytes.fromhex("EF05 EE05 CC E600 E8")
    assert parse_events(data) == events
    with pytest.raises(ValueError, match="channel byte"):
        parse_events(b"\xef")
    assert parse_events(b"\x99\xef") == [(0x99, None)]    # unknown: parsing stops after it


def test_setup_answer_and_channel_masks():
    for expanded in (False, True):
        assert parse_setup(encode_setup(USD_SETUP, expanded=expanded)) == USD_SETUP
    assert USD_SETUP.notes == {1: 100, 2: 200, 3: 500, 4: 1000, 5: 2000, 6: 5000, 7: 10_000}
    with pytest.raises(ValueError):
        parse_setup(encode_setup(USD_SETUP, expanded=False)[:20])
    assert inhibit_mask([1, 5]) == b"\x11\x00" and enabled_channels(b"\x11\x00") == {1, 5}
    assert channels_for_cents(USD_SETUP.notes, [2000, 500]) == {5, 3}
    with pytest.raises(ValueError, match=r"no note of \[300\] cents"):
        channels_for_cents(USD_SETUP.notes, [300])


def test_reject_codes_are_the_public_table():
    """LAST_REJECT_CODE as ITL's table numbers it (the npm host's ``reject_note.js`` and
    cba9-driver's ``RejectCode`` agree): 0x00-0x1D, with the bar-code scan fail at 0x14."""
    assert sorted(REJECT_CODES) == list(range(0x1E))
    assert REJECT_CODES[0x06] == "channel inhibited"
    assert REJECT_CODES[0x09] == "cross channel detected"
    assert REJECT_CODES[0x0A] == "rear sensor error"
    assert REJECT_CODES[0x11] == "peak detect fail"
    assert REJECT_CODES[0x13] == "escrow time-out"
    assert REJECT_CODES[0x14] == "bar code scan fail"
    assert REJECT_CODES[0x1D] == "unable to stack"


def _unwrap_anything(data: bytes) -> None:
    _, device = _pair()
    with contextlib.suppress(DecryptError, ReplayError):
        device.unwrap(data)


@given(st.binary(max_size=300))
def test_arbitrary_encrypted_data_never_raises_anything_else(data):
    _unwrap_anything(b"\x7e" + data)


@pytest.mark.fuzz
@settings(max_examples=20_000, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=MAX_PLAINTEXT))
def test_fuzz_essp(data, plain):
    _unwrap_anything(data)
    _unwrap_anything(b"\x7e" + data)
    host, device = _pair()
    assert device.unwrap(host.wrap(plain)) == plain
    with contextlib.suppress(ValueError):
        parse_events(data)
