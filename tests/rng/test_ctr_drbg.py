"""CTR_DRBG (AES-256, derivation function): CAVP vectors, the fast path against the spec's loop,
limits, reseeding, zeroisation, and the service built on it."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.rng import ctr_drbg
from firmware.rng.ctr_drbg import MAX_REQUEST_BYTES, MAX_RESEED_INTERVAL, CtrDrbg
from firmware.rng.errors import DrbgError, ReseedRequired
from firmware.rng.health import HealthTestedEntropy
from firmware.rng.kat import BUILTIN_FILES, load_vectors, run_vector
from firmware.rng.mechanisms import MECHANISMS
from firmware.rng.service import SEEDED_PERSONALIZATION, RngService

CTR_VECTORS = load_vectors(BUILTIN_FILES["ctr-drbg"])


# --- a straightforward reference of SP 800-90A 10.2.1 and 10.3.2, one AES-ECB block at a time -------


def _encrypt(key: bytes, block: bytes) -> bytes:
    return Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(block)


def _ref_df(data: bytes, nbytes: int = 48) -> bytes:
    """Block_Cipher_df (10.3.2) with BCC (10.3.3) written out block by block."""
    s = len(data).to_bytes(4, "big") + nbytes.to_bytes(4, "big") + data + b"\x80"
    while len(s) % 16:
        s += b"\x00"
    k = bytes(range(32))
    temp = b""
    i = 0
    while len(temp) < 48:
        chaining = bytes(16)
        iv_s = i.to_bytes(4, "big") + bytes(12) + s
        for j in range(0, len(iv_s), 16):
            block = bytes(a ^ b for a, b in zip(chaining, iv_s[j : j + 16], strict=True))
            chaining = _encrypt(k, block)
        temp += chaining
        i += 1
    k, x = temp[:32], temp[32:48]
    out = b""
    while len(out) < nbytes:
        x = _encrypt(k, x)
        out += x
    return out[:nbytes]


class RefCtrDrbg:
    """10.2.1.2 Update, 10.2.1.3.2 Instantiate, 10.2.1.4.2 Reseed, 10.2.1.5.2 Generate, literally."""

    def __init__(self, entropy: bytes, nonce: bytes, pers: bytes = b"") -> None:
        self.key, self.v = bytes(32), bytes(16)
        self.update(_ref_df(entropy + nonce + pers))

    def _increment(self) -> None:
        self.v = ((int.from_bytes(self.v, "big") + 1) % 2**128).to_bytes(16, "big")

    def update(self, provided: bytes) -> None:
        temp = b""
        while len(temp) < 48:
            self._increment()
            temp += _encrypt(self.key, self.v)
        temp = bytes(a ^ b for a, b in zip(temp[:48], provided, strict=True))
        self.key, self.v = temp[:32], temp[32:]

    def reseed(self, entropy: bytes, add: bytes = b"") -> None:
        self.update(_ref_df(entropy + add))

    def generate(self, nbytes: int, add: bytes = b"") -> bytes:
        if add:
            add = _ref_df(add)
            self.update(add)
        else:
            add = bytes(48)
        temp = b""
        while len(temp) < nbytes:
            self._increment()
            temp += _encrypt(self.key, self.v)
        self.update(add)
        return temp[:nbytes]


# --- CAVP --------------------------------------------------------------------------------------------


def test_the_built_in_file_holds_at_least_fifteen_cavp_vectors_with_reseed_groups():
    document = json.loads(BUILTIN_FILES["ctr-drbg"].read_text(encoding="utf-8"))
    assert document["mechanism"] == "ctr-drbg" and "NIST CAVP" in document["source"]
    assert len(CTR_VECTORS) >= 15
    assert any(v.entropy_reseed is not None for v in CTR_VECTORS)
    assert any(v.entropy_reseed is None for v in CTR_VECTORS)
    assert any(v.additional_input[0] and v.personalization for v in CTR_VECTORS)


@pytest.mark.parametrize("vector", CTR_VECTORS, ids=lambda v: v.name)
def test_cavp_vector(vector):
    assert run_vector(vector).passed


@pytest.mark.parametrize("vector", CTR_VECTORS[:4] + CTR_VECTORS[-4:], ids=lambda v: v.name)
def test_cavp_vector_through_the_reference(vector):
    """The reference in this file is itself right: it reproduces the vectors too."""
    ref = RefCtrDrbg(vector.entropy, vector.nonce, vector.personalization)
    if vector.entropy_reseed is not None:
        ref.reseed(vector.entropy_reseed, vector.additional_input_reseed)
    ref.generate(len(vector.expected), vector.additional_input[0])
    assert ref.generate(len(vector.expected), vector.additional_input[1]) == vector.expected


def test_one_bit_off_in_update_fails_the_vectors(monkeypatch):
    real = ctr_drbg.CtrDrbg._update

    def flipped(self, provided_data, temp=None):
        real(self, provided_data, temp)
        self._v[-1] ^= 1

    monkeypatch.setattr(ctr_drbg.CtrDrbg, "_update", flipped)
    assert not any(run_vector(v).passed for v in CTR_VECTORS)


# --- the fast path is the spec's loop ----------------------------------------------------------------

_bytes = st.binary
_requests = st.lists(
    st.tuples(
        st.one_of(st.integers(0, 100), st.integers(0, MAX_REQUEST_BYTES), st.just(MAX_REQUEST_BYTES)),
        st.one_of(st.just(b""), _bytes(min_size=1, max_size=80)),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=40, deadline=None)
@given(
    entropy=_bytes(min_size=32, max_size=64),
    nonce=_bytes(min_size=16, max_size=32),
    pers=_bytes(max_size=64),
    requests=_requests,
    reseed=st.one_of(st.none(), st.tuples(_bytes(min_size=32, max_size=48), _bytes(max_size=40))),
)
def test_generate_equals_the_block_by_block_reference(entropy, nonce, pers, requests, reseed):
    fast, ref = CtrDrbg(entropy, nonce, pers), RefCtrDrbg(entropy, nonce, pers)
    if reseed is not None:
        fast.reseed(*reseed)
        ref.reseed(*reseed)
    for nbytes, add in requests:
        assert fast.generate(nbytes, add) == ref.generate(nbytes, add)
        assert (bytes(fast._key), bytes(fast._v)) == (ref.key, ref.v)


_EDGES = [2**128 - 1, 2**128 - 2, 2**128 - 3, 2**128 - 4100, 2**64 - 1, 2**64 - 2, 2**32 - 1, 0]


@pytest.mark.parametrize("v", _EDGES, ids=hex)
def test_the_counter_is_all_128_bits_and_wraps_modulo_2_to_the_128(v):
    """The keystream is Encrypt(K, V+1) || Encrypt(K, V+2) ... with V+i taken mod 2^128, also
    across the 2^32, 2^64 and 2^128 boundaries (where a 32- or 64-bit counter would differ)."""
    key = bytes(range(100, 132))
    nblocks = 4100
    expected = b"".join(_encrypt(key, ((v + i) % 2**128).to_bytes(16, "big")) for i in range(1, nblocks + 1))
    assert ctr_drbg.keystream(key, v.to_bytes(16, "big"), nblocks * 16) == expected


@pytest.mark.parametrize("v", _EDGES[:5], ids=hex)
def test_generate_across_the_wrap_equals_the_reference(v):
    fast, ref = CtrDrbg(bytes(32), bytes(16)), RefCtrDrbg(bytes(32), bytes(16))
    fast._v[:] = ref.v = v.to_bytes(16, "big")
    for nbytes in (MAX_REQUEST_BYTES, 17, 0):
        assert fast.generate(nbytes) == ref.generate(nbytes)
        assert (bytes(fast._key), bytes(fast._v)) == (ref.key, ref.v)


def test_df_equals_the_reference():
    for data in (b"", b"x", bytes(range(256)) * 3):
        for nbytes in (48, 16, 5):
            assert ctr_drbg.block_cipher_df(data, nbytes) == _ref_df(data, nbytes)


# --- limits, reseeding, zeroisation ------------------------------------------------------------------


def test_reseed_interval_is_enforced_and_a_reseed_resets_it():
    drbg = CtrDrbg(bytes(32), bytes(16), reseed_interval=2)
    drbg.generate(16)
    drbg.generate(16)
    assert drbg.reseed_counter == 3
    with pytest.raises(ReseedRequired):
        drbg.generate(16)
    drbg.reseed(bytes(range(32)))
    assert drbg.reseed_counter == 1
    drbg.generate(16)


@pytest.mark.parametrize("interval", [0, MAX_RESEED_INTERVAL + 1])
def test_reseed_interval_bounds(interval):
    assert MAX_RESEED_INTERVAL == 2**48
    with pytest.raises(DrbgError, match="reseed_interval"):
        CtrDrbg(bytes(32), bytes(16), reseed_interval=interval)


def test_request_and_input_limits():
    drbg = CtrDrbg(bytes(32), bytes(16))
    assert len(drbg.generate(MAX_REQUEST_BYTES)) == 65_536
    with pytest.raises(DrbgError, match="between 0 and 65536"):
        drbg.generate(MAX_REQUEST_BYTES + 1)
    with pytest.raises(DrbgError, match="entropy input is 31 bytes"):
        CtrDrbg(bytes(31), bytes(16))
    with pytest.raises(DrbgError, match="nonce is 15 bytes"):
        CtrDrbg(bytes(32), bytes(15))
    with pytest.raises(DrbgError, match="entropy input"):
        drbg.reseed(bytes(8))


def test_inputs_longer_than_the_maximum_are_refused(monkeypatch):
    from firmware.rng import drbg_common

    monkeypatch.setattr(drbg_common, "MAX_INPUT_BYTES", 40)
    with pytest.raises(DrbgError, match="personalization string is 41 bytes"):
        CtrDrbg(bytes(32), bytes(16), b"p" * 41)
    with pytest.raises(DrbgError, match="additional input is 41 bytes"):
        CtrDrbg(bytes(32), bytes(16)).generate(16, b"a" * 41)


def test_zeroize_wipes_the_state_and_refuses_every_later_call():
    drbg = CtrDrbg(bytes(range(32)), bytes(16))
    drbg.generate(32)
    drbg.zeroize()
    assert bytes(drbg._key) == bytes(32) and bytes(drbg._v) == bytes(16)
    for call in (lambda: drbg.generate(1), lambda: drbg.reseed(bytes(32))):
        with pytest.raises(DrbgError, match="zeroised"):
            call()


# --- the service -------------------------------------------------------------------------------------


def test_seeded_ctr_stream_is_successive_maximum_requests():
    import hashlib

    rng = RngService.seeded("lab", mechanism="ctr-drbg")
    assert (rng.mechanism, rng.block_bytes) == ("ctr-drbg", MAX_REQUEST_BYTES)
    drbg = CtrDrbg(hashlib.sha256(b"egm seed entropy:lab").digest(),
                   hashlib.sha256(b"egm seed nonce:lab").digest(), SEEDED_PERSONALIZATION)
    expected = drbg.generate(MAX_REQUEST_BYTES) + drbg.generate(MAX_REQUEST_BYTES)
    got = rng.random_bytes(100) + rng.random_bytes(70_000) + rng.random_bytes(2 * MAX_REQUEST_BYTES - 70_100)
    assert got == expected
    assert RngService.seeded("lab").random_bytes(64) != expected[:64]  # hmac-drbg, the default


def test_production_ctr_service_reseeds_itself_from_the_tested_source():
    reads = []

    def source(n):
        reads.append(n)
        import os

        return os.urandom(n)

    rng = RngService.production(mechanism="ctr-drbg", reseed_interval=1, entropy=HealthTestedEntropy(source))
    assert rng.mechanism == "ctr-drbg" and not rng.deterministic
    before = len(reads)
    assert len(rng.random_bytes(3 * MAX_REQUEST_BYTES)) == 3 * MAX_REQUEST_BYTES
    assert len(reads) - before == 2  # the second and third requests each needed a reseed


def test_a_stuck_entropy_source_stops_a_ctr_service_as_it_does_hmac():
    from firmware.rng.errors import EntropyError

    with pytest.raises(EntropyError, match="repetition count test"):
        RngService.production(mechanism="ctr-drbg", entropy=HealthTestedEntropy(lambda n: bytes(n)))


def test_a_vector_file_naming_an_unknown_mechanism_is_refused(tmp_path):
    from firmware.rng.errors import KatFileError

    document = json.loads(BUILTIN_FILES["ctr-drbg"].read_text(encoding="utf-8"))
    path = tmp_path / "v.json"
    path.write_text(json.dumps({**document, "mechanism": "aes"}))
    with pytest.raises(KatFileError, match="unknown 'mechanism' 'aes': choose hmac-drbg or ctr-drbg"):
        load_vectors(path)


def test_unknown_mechanism_is_one_clear_error():
    from firmware.rng.mechanisms import UnknownMechanism

    with pytest.raises(UnknownMechanism, match="unknown RNG mechanism 'aes': choose hmac-drbg or ctr-drbg"):
        RngService.seeded(1, mechanism="aes")


def test_the_configuration_offers_exactly_the_mechanisms():
    from typing import get_args

    from firmware.config.schema import RngSection

    assert get_args(RngSection.model_fields["mechanism"].annotation) == tuple(MECHANISMS)
