"""``egm rng``: the certified RNG's lab commands (CONTRACTS.md, ``egm rng ...``).

* ``egm rng kat [FILE] [--json]``: HMAC_DRBG known-answer vectors (the 22 NIST CAVP vectors built
  into the product, or FILE); ``N passed, M failed`` last, exit 0 only if none failed (1 otherwise).
* ``egm rng dump --bytes N [--seed S]``: N raw bytes of the DRBG output stream on stdout, for
  external statistical batteries.
* ``egm rng outcomes --range N --count M [--seed S]``: M outcomes of exactly
  ``RngService.randbelow(N)``, one per line (the lab's scaled-outcome collection tool).
* ``egm rng selftest``: added by ``firmware.rng.selftest`` when that module is present.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from firmware.commands._common import non_negative_int, positive_int

if TYPE_CHECKING:
    from firmware.rng.service import RngService

#: Bytes written to stdout per write by ``dump``.
DUMP_CHUNK_BYTES = 65536
#: Outcome lines joined into one write by ``outcomes``.
OUTCOME_LINES_PER_WRITE = 4096

_SEED_HELP = "use a deterministic DRBG seeded from S instead of the OS entropy source"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rng", help="certified RNG: known-answer tests, raw output, scaled outcomes")
    rng_sub = p.add_subparsers(dest="rng_command", metavar="ACTION")
    rng_sub.required = True

    kat = rng_sub.add_parser(
        "kat", help="run HMAC_DRBG known-answer vectors (built in, or from a JSON file)"
    )
    kat.add_argument(
        "file",
        nargs="?",
        help="a vector file in the format of the built-in firmware/rng/vectors/hmac_drbg_sha256.json "
        "(default: the 22 NIST CAVP SHA-256 vectors built into the product)",
    )
    kat.add_argument("--json", action="store_true", help="print one JSON document instead")
    kat.set_defaults(func=_kat)

    dump = rng_sub.add_parser("dump", help="write raw DRBG output bytes to stdout")
    dump.add_argument("--bytes", type=non_negative_int, required=True, metavar="N", help="how many bytes to write")
    dump.add_argument("--seed", metavar="S", help=_SEED_HELP)
    dump.set_defaults(func=_dump)

    outcomes = rng_sub.add_parser(
        "outcomes", help="write scaled outcomes in [0, N) through the production scaling"
    )
    outcomes.add_argument("--range", type=positive_int, required=True, metavar="N", help="each outcome is one of 0..N-1")
    outcomes.add_argument("--count", type=non_negative_int, required=True, metavar="M", help="how many outcomes")
    outcomes.add_argument("--seed", metavar="S", help=_SEED_HELP)
    outcomes.set_defaults(func=_outcomes)

    _register_selftest(rng_sub)


def _register_selftest(rng_sub: argparse._SubParsersAction) -> None:
    """Add ``egm rng selftest`` (:mod:`firmware.rng.selftest`)."""
    from firmware.rng.selftest import register

    register(rng_sub)


def _service(seed: str | None) -> RngService:
    from firmware.rng.service import RngService

    return RngService.production() if seed is None else RngService.seeded(seed)


def _kat(args: argparse.Namespace) -> int:
    from firmware.commands._common import emit_json
    from firmware.rng.kat import BUILTIN_VECTORS, run_file

    source = BUILTIN_VECTORS if args.file is None else args.file
    results = run_file(source)
    failed = sum(not result.passed for result in results)
    passed = len(results) - failed
    if args.json:
        emit_json(
            {
                "file": "built-in" if args.file is None else str(args.file),
                "vectors": [
                    {"name": r.name, "result": "PASS"}
                    if r.passed
                    else {
                        "name": r.name,
                        "result": "FAIL",
                        "expected": r.expected.hex(),
                        "returned": r.returned.hex(),
                    }
                    for r in results
                ],
                "passed": passed,
                "failed": failed,
            }
        )
    else:
        for result in results:
            print(f"{result.name}: {'PASS' if result.passed else 'FAIL'}")
        print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def _dump(args: argparse.Namespace) -> int:
    rng = _service(args.seed)
    sys.stdout.flush()
    out = sys.stdout.buffer
    remaining = args.bytes
    while remaining:
        n = min(remaining, DUMP_CHUNK_BYTES)
        out.write(rng.random_bytes(n))
        remaining -= n
    out.flush()
    return 0


def _outcomes(args: argparse.Namespace) -> int:
    rng = _service(args.seed)
    randbelow, n = rng.randbelow, args.range
    write = sys.stdout.write
    remaining = args.count
    while remaining:
        batch = min(remaining, OUTCOME_LINES_PER_WRITE)
        write("".join([f"{randbelow(n)}\n" for _ in range(batch)]))
        remaining -= batch
    sys.stdout.flush()
    return 0
