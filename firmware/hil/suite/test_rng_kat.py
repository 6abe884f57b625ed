"""The RNG's known-answer tests, as the lab sees them run: the product's built-in NIST CAVP
HMAC_DRBG (SHA-256) vectors (``firmware.rng.kat``), each vector one measurement."""

from __future__ import annotations

import pytest

from firmware.rng.kat import BUILTIN_VECTORS, run_file


@pytest.mark.hil(id="rng.kat", standard="gli-11",
                 clause="3.3 Random Number Generator (RNG) Requirements (approx.)",
                 requirement="The random number generator must be shown to produce the right output: "
                             "the HMAC_DRBG reproduces the published known-answer vectors exactly. "
                             "(Section number approximate: GLI-11 'Random Number Generator (RNG) "
                             "Requirements'.)",
                 title="DRBG known-answer tests pass", operator=False, duration=5, targets=("sim", "cabinet"))
def test_kat(record):
    record.step("run the built-in NIST CAVP HMAC_DRBG SHA-256 vectors (firmware/rng/vectors)")
    results = run_file(BUILTIN_VECTORS)
    for result in results:
        record.measure(f"vector {result.name} output equals the expected", result.passed, equals=True, soft=True)
    record.measure("vectors run", len(results), low=22)
