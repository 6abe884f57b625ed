"""The lab suite's RNG tests shown able to fail: a biased RNG, from a broken copy of the software.

Each break is the classic mistake its test exists for, and each fails deterministically at the
suite's sample sizes (the expected chi-square under the bias against the limit, both for the
family-wise significance 0.001 of firmware/hil/suite/test_rng.py):

* ``randbelow`` by modulo reduction (``randbits(k) % n`` instead of rejecting ``r >= n``): for
  ``n = 6`` the values 0 and 1 come twice as often as the others; the non-centrality of the
  chi-square is 0.125 per draw, about 25,000 over 200,000 draws (every non-power-of-two range of
  ``rng.outcomes-chi2`` is as bad: 17,000 to 25,000), against a limit near 26 to 530.
* ``RngService.shuffle`` swapping with ``randbelow(len)`` instead of ``randbelow(i + 1)`` (the
  "swap with any position" shuffle): over 100,000 shuffles the non-centrality is about 25,000 for
  the 24 orderings of four cards (limit 58) and 78,000 for card-by-position of eight (limit 95).
* ``RngShoe`` (the games' lazy Fisher-Yates) drawing from ``n - i - 1`` cards instead of ``n - i``:
  the last card of the shoe is never dealt before the end, so it is always dealt last.

The unbroken software passes the same tests (``test_the_unbroken_software_passes``).
"""

from __future__ import annotations

import pytest

from tests.hil.broken import broken_copy, run_hil, verdicts

pytestmark = pytest.mark.slow          # four suite runs, three of them from copies of the software: about 40 s

RANDBELOW = "firmware/rng/service.py"
SHOE = "firmware/cards/source.py"


def _failed(record: dict, test_id: str) -> str:
    """The names of ``test_id``'s measurements outside their limits, one per line (its verdict
    must be FAIL)."""
    test = next(t for t in record["tests"] if t["id"] == test_id)
    assert test["verdict"] == "FAIL", f"{test_id}: {test['verdict']} ({test['reason']})"
    return "\n".join(m["name"] for m in test["measurements"] if not m["passed"])


def test_modulo_reduction_fails_the_outcomes_chi_square(tmp_path):
    software = broken_copy(tmp_path, {RANDBELOW: (
        "    r = randbits(k)\n    while r >= n:\n        r = randbits(k)\n    return r\n",
        "    return randbits(k) % n\n")})
    code, record = run_hil(software, tmp_path, "rng.outcomes-chi2")
    assert code == 1
    reason = _failed(record, "rng.outcomes-chi2")
    for n in (6, 13, 52, 312, 416):
        assert f"range {n}: chi-square p-value" in reason
    assert "range 2: chi-square" not in reason          # a power of two: modulo is exact there


SERVICE_SHUFFLE = "RngService.shuffle"
SHOE_DEAL = "RngShoe (the games' card source)"


@pytest.mark.parametrize(("path", "old", "new", "broken", "intact"), [
    pytest.param(RANDBELOW, "j = randbelow_from(randbits, i + 1)", "j = randbelow_from(randbits, len(items))",
                 SERVICE_SHUFFLE, SHOE_DEAL, id="shuffle-swaps-with-any-position"),
    pytest.param(SHOE, "j = i + self._rng.randbelow(n - i)", "j = i + self._rng.randbelow(max(n - i - 1, 1))",
                 SHOE_DEAL, SERVICE_SHUFFLE, id="shoe-never-deals-its-last-card-early"),
])
def test_a_biased_shuffle_fails_the_shuffle_test(tmp_path, path, old, new, broken, intact):
    code, record = run_hil(broken_copy(tmp_path, {path: (old, new)}), tmp_path, "rng.shuffle")
    assert code == 1
    reason = _failed(record, "rng.shuffle")
    for mechanism in ("hmac-drbg", "ctr-drbg"):
        assert f"{mechanism} {broken}: card-by-position p-value" in reason
        assert f"{mechanism} {broken}: 24 orderings equally frequent" in reason
    assert intact not in reason                          # the other way of dealing is untouched


def test_the_unbroken_software_passes(tmp_path):
    """A sound RNG fails each of these tests by chance once in about 1,000 runs (their family-wise
    significance), so a FAIL is run once more: two chance failures in a row are one in a million,
    while a real fault fails both."""
    ids = ("rng.outcomes-chi2", "rng.shuffle")
    code, record = run_hil(None, tmp_path / "first", *ids)
    if code != 0 and set(verdicts(record).values()) <= {"PASS", "FAIL"}:
        code, record = run_hil(None, tmp_path / "again", *ids)
    assert verdicts(record) == dict.fromkeys(ids, "PASS"), record["tests"]
    assert code == 0
