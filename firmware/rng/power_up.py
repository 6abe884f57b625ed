"""The RNG's power-up self-test, as the cabinet runs it before any game may deal.

1. Known-answer test of both DRBG mechanisms, HMAC_DRBG and CTR_DRBG (SP 800-90A section 11.3,
   "health testing of the DRBG mechanism"): one NIST CAVP vector with additional input is built in
   for each, so the test needs no file. Both run whatever the configuration chooses, so a terminal
   switched to the other mechanism has already proved it.
2. Instantiation of the production service of the configured mechanism from health-tested OS
   entropy (SP 800-90B startup and continuous tests, the same for both mechanisms); a failing
   source raises :class:`~firmware.rng.errors.EntropyError`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from firmware.rng.errors import RngError
from firmware.rng.mechanisms import DEFAULT_MECHANISM
from firmware.rng.mechanisms import mechanism as find_mechanism


@dataclass(frozen=True)
class KnownAnswer:
    """One DRBG known answer: instantiate with ``entropy`` and ``nonce``, generate twice with the
    two additional inputs, the second output is ``expected`` (all hex)."""

    entropy: str
    nonce: str
    add: tuple[str, str]
    expected: str
    pers: str = ""


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


#: NIST CAVP CTR_DRBG AES-256 use df, no prediction resistance, no reseed, with personalization
#: string and additional input, count 0 (also in ``firmware/rng/vectors/ctr_drbg_aes256.json``).
CTR_KAT_VECTOR = KnownAnswer(
    entropy="87b56e964eba227154724bb9484b812d3e2c0c43b3d17f6098d9526e16e6d0ef",
    nonce="9bea6a7ff2358df142e6c23e2157fb83",
    pers="9860b432edd58d1ccbfeecbce99ffaee7d935a614860d4e965bd67041403096b",
    add=(
        "99a5cc87924e8ea65a596f81fd17d63f5b4542fe6e8e1511b5d35c835dfadb0b",
        "9a8dec54734a34582a2332f3452e82313524c3e0dfb485faeac6ca5fc0ff504d",
    ),
    expected=(
        "dbc6a2330b19b5cddd8cd6392ec1fb508678c805e87d1aca07ac265007632503"
        "044a00610c79d98375afa7ab4cca1a90989cbfe7c674af5d823ced11c47e9af6"
    ),
)

#: The built-in known answer of each mechanism.
KNOWN_ANSWERS: dict[str, KnownAnswer] = {"hmac-drbg": KAT_VECTOR, "ctr-drbg": CTR_KAT_VECTOR}


class KnownAnswerFailure(RngError):
    """The DRBG did not reproduce the built-in known answer: the firmware must not deal."""


def known_answer_test(name: str = DEFAULT_MECHANISM) -> None:
    """The built-in known answer of mechanism ``name``; :class:`KnownAnswerFailure` if it differs."""
    chosen, v = find_mechanism(name), KNOWN_ANSWERS[name]
    size = len(v.expected) // 2
    drbg = chosen.factory(bytes.fromhex(v.entropy), bytes.fromhex(v.nonce), bytes.fromhex(v.pers))
    drbg.generate(size, bytes.fromhex(v.add[0]))
    got = drbg.generate(size, bytes.fromhex(v.add[1]))
    drbg.zeroize()
    if got.hex() != v.expected:
        raise KnownAnswerFailure(f"{chosen.title} known-answer test failed")


def power_up_self_test(personalization: str = "egm",
                       source: Callable[[int], bytes] = os.urandom,
                       mechanism: str = DEFAULT_MECHANISM) -> list[tuple[str, str]]:
    """Run both checks; return ``(name, verdict)`` lines. Raises on failure (the cabinet tilts).
    ``source``: the raw entropy source the instantiation reads, through a new
    :class:`~firmware.rng.health.HealthTestedEntropy` (the cabinet's own: a simulated cabinet's
    may be stuck on purpose, ``firmware.rng.switchable``). ``mechanism``: the configured DRBG,
    the one instantiated (the known answers of both are checked whatever it is)."""
    from firmware.rng.health import HealthTestedEntropy
    from firmware.rng.service import RngService

    for name in KNOWN_ANSWERS:
        known_answer_test(name)
    lines = [("DRBG known answer", "ok")]
    rng = RngService.production(personalization.encode("utf-8"), entropy=HealthTestedEntropy(source),
                                mechanism=mechanism)
    rng.randbelow(52)
    lines.append(("entropy health tests", "ok"))
    lines.append((f"DRBG instantiated: {rng.mechanism}", "ok"))
    return lines
