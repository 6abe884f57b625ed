"""The RNG's power-up self-test, as the cabinet runs it before any game may deal.

1. Known-answer test of the HMAC_DRBG (SP 800-90A section 11.3, "health testing of the DRBG
   mechanism"): one NIST CAVP vector with additional input is built in, so the test needs no file.
2. Instantiation of the production service from health-tested OS entropy (SP 800-90B startup and
   continuous tests); a failing source raises :class:`~firmware.rng.errors.EntropyError`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from firmware.rng.errors import RngError
from firmware.rng.hmac_drbg import HmacDrbg


@dataclass(frozen=True)
class KnownAnswer:
    """One DRBG known answer: instantiate with ``entropy`` and ``nonce``, generate twice with the
    two additional inputs, the second output is ``expected`` (all hex)."""

    entropy: str
    nonce: str
    add: tuple[str, str]
    expected: str


#: NIST CAVP HMAC_DRBG SHA-256, no prediction resistance, count 0 with additional input.
KAT_VECTOR = KnownAnswer(
    entropy="d3cc4d1acf3dde0c4bd2290d262337042dc632948223d3a2eaab87da44295fbd",
    nonce="0109b0e729f457328aa18569a9224921",
    add=(
        "3c311848183c9a212a26f27f8c6647e40375e466a0857cc39c4e47575d53f1f6",
        "fcb9abd19ccfbccef88c9c39bfb3dd7b1c12266c9808992e305bc3cff566e4e4",
    ),
    expected=(
        "9c7b758b212cd0fcecd5daa489821712e3cdea4467b560ef5ddc24ab47749a1f1ffdbbb118f4e62fcfca3371b8fbfc5b"
        "0646b83e06bfbbab5fac30ea09ea2bc76f1ea568c9be0444b2cc90517b20ca825f2d0eccd88e7175538b85d90ab390"
        "183ca6395535d34473af6b5a5b88f5a59ee7561573337ea819da0dcc3573a22974"
    ),
)


class KnownAnswerFailure(RngError):
    """The DRBG did not reproduce the built-in known answer: the firmware must not deal."""


def known_answer_test() -> None:
    v = KAT_VECTOR
    drbg = HmacDrbg(bytes.fromhex(v.entropy), bytes.fromhex(v.nonce), b"")
    drbg.generate(128, bytes.fromhex(v.add[0]))
    got = drbg.generate(128, bytes.fromhex(v.add[1]))
    drbg.zeroize()
    if got.hex() != v.expected:
        raise KnownAnswerFailure("HMAC_DRBG known-answer test failed")


def power_up_self_test(personalization: str = "egm",
                       source: Callable[[int], bytes] = os.urandom) -> list[tuple[str, str]]:
    """Run both checks; return ``(name, verdict)`` lines. Raises on failure (the cabinet tilts).
    ``source``: the raw entropy source the instantiation reads, through a new
    :class:`~firmware.rng.health.HealthTestedEntropy` (the cabinet's own: a simulated cabinet's
    may be stuck on purpose, ``firmware.rng.switchable``)."""
    from firmware.rng.health import HealthTestedEntropy
    from firmware.rng.service import RngService

    known_answer_test()
    lines = [("DRBG known answer", "ok")]
    rng = RngService.production(personalization.encode("utf-8"), entropy=HealthTestedEntropy(source))
    rng.randbelow(52)
    lines.append(("entropy health tests", "ok"))
    return lines
