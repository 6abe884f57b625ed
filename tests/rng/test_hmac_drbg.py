"""HMAC_DRBG (SHA-256) against NIST CAVP vectors and an independent transcription of SP 800-90A."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.rng import hmac_drbg
from firmware.rng.errors import DrbgError, ReseedRequired
from firmware.rng.hmac_drbg import MAX_REQUEST_BYTES, HmacDrbg
from firmware.rng.kat import BUILTIN_VECTORS

h = bytes.fromhex


def _hex_or_empty(value: str | None) -> bytes:
    return bytes.fromhex(value) if value else b""


# --- an independent transcription of SP 800-90A Rev. 1, 10.1.2, with plain hmac.new ---------


def _ref_update(data: bytes, k: bytes, v: bytes) -> tuple[bytes, bytes]:
    k = hmac.new(k, v + b"\x00" + data, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    if data:
        k = hmac.new(k, v + b"\x01" + data, hashlib.sha256).digest()
        v = hmac.new(k, v, hashlib.sha256).digest()
    return k, v


def _ref_instantiate(entropy: bytes, nonce: bytes, pers: bytes) -> tuple[bytes, bytes]:
    return _ref_update(entropy + nonce + pers, b"\x00" * 32, b"\x01" * 32)


def _ref_generate(k: bytes, v: bytes, n: int, add: bytes) -> tuple[bytes, bytes, bytes]:
    if add:
        k, v = _ref_update(add, k, v)
    temp = b""
    while len(temp) < n:
        v = hmac.new(k, v, hashlib.sha256).digest()
        temp += v
    k, v = _ref_update(add, k, v)
    return temp[:n], k, v


# --- CAVP ---------------------------------------------------------------------------------------


def test_all_cavp_vectors():
    """The 22 CAVP vectors the product carries: instantiate, generate (discarded), generate ==
    expected (read here with plain json, not through firmware.rng.kat)."""
    document = json.loads(BUILTIN_VECTORS.read_text(encoding="utf-8"))
    vectors = document["vectors"]
    assert len(vectors) == 22
    failures = []
    for vec in vectors:
        drbg = HmacDrbg(h(vec["entropy"]), h(vec["nonce"]), _hex_or_empty(vec["pers"]))
        drbg.generate(128, _hex_or_empty(vec["add"][0]))
        if drbg.generate(128, _hex_or_empty(vec["add"][1])) != h(vec["expected"]):
            failures.append(vec["name"])
    assert failures == []


# HMAC_DRBG.rsp (drbgvectors_pr_false), [SHA-256], COUNT = 0, with its intermediate values.
CAVP_RESEED = {
    "entropy": h("06032cd5eed33f39265f49ecb142c511da9aff2af71203bffaf34a9ca5bd9c0d"),
    "nonce": h("0e66f71edc43e42a45ad3c6fc6cdc4df"),
    "instantiate_v": h("81e0d8830ed2d16f9b288a1cb289c5fab3f3c5c28131be7cafedcc7734604d34"),
    "instantiate_k": h("17dc11c2389f5eeb9d0f6a5148a1ea83ee8a828f4f140ac78272a0da435fa121"),
    "entropy_reseed": h("01920a4e669ed3a85ae8a33b35a74ad7fb2a6bb4cf395ce00334a9c9a5a5d552"),
    "reseed_v": h("c246fa97570ba2b9d9e5b453fe4632366f146fbd8491146563eb463c9eafe50c"),
    "reseed_k": h("ca43e73325de43c41d7e0a7a3163fb04061b09fcee4c7b8884e969e3bdfdff9a"),
    "first_v": h("df67d0816d6a8f3b73ba7638ea113bef0e33a1da451272ef1472211fb31c1cd6"),
    "first_k": h("8be4c7f9f249d5af2c6345a8f07af14be1d7adc2b9892286ffe37760d8aa5a1b"),
    "second_v": h("80524881711e89a61e6fe7169581e50fb9ad642f3dff48fba5773352fa04cec3"),
    "second_k": h("5ed31bc06cc4f3a97f7f34929b0558b0c34de1f4bd1cef456a8364140e2d9f41"),
    "expected": h(
        "76fc79fe9b50beccc991a11b5635783a83536add03c157fb30645e611c2898bb2b1bc215000209208cd506cb"
        "28da2a51bdb03826aaf2bd2335d576d519160842e7158ad0949d1a9ec3e66ea1b1a064b005de914eac2e9d4f"
        "2d72a8616a80225422918250ff66a41bd2f864a6a38cc5b6499dc43f7f2bd09e1e0f8f5885935124"
    ),
}


def test_cavp_reseed_vector_with_intermediate_state():
    """Instantiate, reseed, generate twice; K and V after every step as CAVP prints them."""
    c = CAVP_RESEED
    drbg = HmacDrbg(c["entropy"], c["nonce"])
    assert (bytes(drbg._k), bytes(drbg._v)) == (c["instantiate_k"], c["instantiate_v"])
    drbg.reseed(c["entropy_reseed"])
    assert (bytes(drbg._k), bytes(drbg._v)) == (c["reseed_k"], c["reseed_v"])
    drbg.generate(128)
    assert (bytes(drbg._k), bytes(drbg._v)) == (c["first_k"], c["first_v"])
    assert drbg.generate(128) == c["expected"]
    assert (bytes(drbg._k), bytes(drbg._v)) == (c["second_k"], c["second_v"])


def test_reseed_with_additional_input_prediction_resistance_vector():
    """CAVP PR=True, SHA-256, as BoringSSL's ACVP tool replays it: reseed(entropy_pr, add), generate.

    SP 800-90A 9.3.1: a prediction-resistant request is Reseed(entropy_input_pr, additional_input)
    followed by Generate with a null additional input.
    """
    drbg = HmacDrbg(
        h("6c1f4bffc476e488fb57eb80dc106cf2b417bad22b196baa6346958256db490f"),
        h("5f1b92223e3909e43677da2f588a6d19"),
    )
    drbg.reseed(
        h("abaca65695bd5d289880453850fc8289b76f78b43f970ed32f4125a941165515"),
        h("e6cd940610375e504fa80406120b34d498b022393436e910c0ba2560603fd066"),
    )
    drbg.generate(32)
    drbg.reseed(
        h("4a39b666cf861816d7d82ef6e23f70f149d74d9bd499eea19b622e751c43d839"),
        h("d20082c5bdf6f6711af391e7d01046b9d3610827de63aa2671a5f5ad07b90841"),
    )
    assert drbg.generate(32) == h(
        "d3c36e4ae25ff21a95a157a89f13eb976362a695ea755f0465ed4a7bb20c5cb3"
    )


# --- against the independent transcription ---------------------------------------------------


def test_reseed_and_additional_input_match_the_spec_formulas():
    entropy, nonce, pers = bytes(range(32)), bytes(range(100, 116)), b"terminal 0042"
    reseed_entropy, reseed_add = bytes(range(200, 240)), b"reseed additional input"
    k, v = _ref_instantiate(entropy, nonce, pers)
    k, v = _ref_update(reseed_entropy + reseed_add, k, v)
    first, k, v = _ref_generate(k, v, 100, b"add one")
    second, k, v = _ref_generate(k, v, 33, b"")
    third, k, v = _ref_generate(k, v, 64, b"add three")

    drbg = HmacDrbg(entropy, nonce, pers)
    drbg.reseed(reseed_entropy, reseed_add)
    assert drbg.generate(100, b"add one") == first
    assert drbg.generate(33) == second
    assert drbg.generate(64, b"add three") == third
    assert (bytes(drbg._k), bytes(drbg._v)) == (k, v)


@settings(max_examples=40, deadline=None)
@given(
    entropy=st.binary(min_size=32, max_size=80),
    nonce=st.binary(min_size=16, max_size=40),
    pers=st.binary(max_size=40),
    requests=st.lists(
        st.tuples(st.integers(0, 200), st.binary(max_size=40), st.booleans()), max_size=5
    ),
)
def test_any_call_sequence_matches_the_spec_formulas(entropy, nonce, pers, requests):
    k, v = _ref_instantiate(entropy, nonce, pers)
    drbg = HmacDrbg(entropy, nonce, pers)
    for n, add, reseed_first in requests:
        if reseed_first:
            k, v = _ref_update(entropy[::-1] + add, k, v)
            drbg.reseed(entropy[::-1], add)
        expected, k, v = _ref_generate(k, v, n, add)
        assert drbg.generate(n, add) == expected


# --- limits and misuse -----------------------------------------------------------------------


def _drbg(**kwargs) -> HmacDrbg:
    return HmacDrbg(b"\x11" * 32, b"\x22" * 16, **kwargs)


def test_short_entropy_and_nonce_are_refused():
    with pytest.raises(DrbgError, match="entropy input is 31 bytes"):
        HmacDrbg(b"\x11" * 31, b"\x22" * 16)
    with pytest.raises(DrbgError, match="nonce is 15 bytes"):
        HmacDrbg(b"\x11" * 32, b"\x22" * 15)
    with pytest.raises(DrbgError, match="entropy input"):
        _drbg().reseed(b"\x33" * 31)


def test_inputs_longer_than_the_maximum_are_refused(monkeypatch):
    # 2^35 bits cannot be allocated in a test: lower the limit to exercise every check. The limit
    # is the one both mechanisms share (firmware/rng/drbg_common.py).
    from firmware.rng import drbg_common

    monkeypatch.setattr(drbg_common, "MAX_INPUT_BYTES", 40)
    with pytest.raises(DrbgError, match="entropy input is 41 bytes"):
        HmacDrbg(b"\x11" * 41, b"\x22" * 16)
    with pytest.raises(DrbgError, match="personalization string is 41 bytes"):
        HmacDrbg(b"\x11" * 32, b"\x22" * 16, b"p" * 41)
    drbg = _drbg()
    with pytest.raises(DrbgError, match="additional input is 41 bytes"):
        drbg.generate(16, b"a" * 41)
    with pytest.raises(DrbgError, match="additional input is 41 bytes"):
        drbg.reseed(b"\x33" * 32, b"a" * 41)


def test_limits_are_those_of_sp800_90a_table_2():
    assert hmac_drbg.MAX_INPUT_BYTES * 8 == 2**35
    assert MAX_REQUEST_BYTES * 8 == 2**19
    assert hmac_drbg.MAX_RESEED_INTERVAL == 2**48
    assert hmac_drbg.MIN_ENTROPY_BYTES * 8 == 256
    assert hmac_drbg.MIN_NONCE_BYTES * 8 == 128


def test_request_size_limit():
    drbg = _drbg()
    assert len(drbg.generate(MAX_REQUEST_BYTES)) == MAX_REQUEST_BYTES
    assert drbg.generate(0) == b""
    for bad in (MAX_REQUEST_BYTES + 1, -1):
        with pytest.raises(DrbgError, match="request"):
            drbg.generate(bad)


def test_reseed_counter_and_interval():
    drbg = _drbg(reseed_interval=3)
    assert (drbg.reseed_counter, drbg.reseed_interval) == (1, 3)
    for expected_counter in (2, 3, 4):
        drbg.generate(8)
        assert drbg.reseed_counter == expected_counter
    with pytest.raises(ReseedRequired):
        drbg.generate(8)
    assert issubclass(ReseedRequired, DrbgError)
    assert drbg.reseed_counter == 4  # the refused request changed nothing
    drbg.reseed(b"\x44" * 32)
    assert drbg.reseed_counter == 1
    drbg.generate(8)
    assert drbg.reseed_counter == 2


@pytest.mark.parametrize("interval", [0, -1, 2**48 + 1])
def test_reseed_interval_bounds(interval):
    with pytest.raises(DrbgError, match="reseed_interval"):
        _drbg(reseed_interval=interval)
    assert _drbg(reseed_interval=2**48).reseed_interval == 2**48


def test_zeroize_overwrites_state_and_disables():
    drbg = _drbg()
    key, value = drbg._k, drbg._v
    drbg.zeroize()
    assert key == bytes(32) and value == bytes(32)  # the same bytearrays, overwritten
    with pytest.raises(DrbgError, match="zeroised"):
        drbg.generate(1)
    with pytest.raises(DrbgError, match="zeroised"):
        drbg.reseed(b"\x55" * 32)


def test_same_inputs_same_output_and_bytes_like_inputs():
    a = HmacDrbg(bytearray(b"\x11" * 32), memoryview(b"\x22" * 16), bytearray(b"p"))
    b = HmacDrbg(b"\x11" * 32, b"\x22" * 16, b"p")
    assert a.generate(77, bytearray(b"x")) == b.generate(77, b"x")
