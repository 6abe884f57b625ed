"""``egm rng``: the certified RNG's lab commands (CONTRACTS.md, ``egm rng ...``).

* ``egm rng kat [FILE] [--mechanism M|all] [--json]``: DRBG known-answer vectors: with no FILE the
  NIST CAVP vectors built into the product (22 HMAC_DRBG and 28 CTR_DRBG; ``--mechanism`` picks
  one set), or FILE (its ``"mechanism"`` key, HMAC_DRBG if absent; ``--mechanism`` must agree);
  ``N passed, M failed`` last, exit 0 only if none failed (1 otherwise).
* ``egm rng dump --bytes N [--mechanism M] [--seed S] [--out FILE]``: N raw bytes of the service's
  output stream (``RngService.random_bytes``) of mechanism M (default hmac-drbg) on stdout or into
  FILE, written in 64 KiB chunks so N may be far larger than memory; a reader that goes away
  (``| head -c 100``) ends it quietly with exit 0.
* ``egm rng outcomes --range N --count M [--mechanism M] [--seed S]``: M outcomes of exactly
  ``RngService.randbelow(N)``, one per line (the lab's scaled-outcome collection tool).
* ``egm rng selftest``: the statistical battery (:mod:`firmware.commands.rng_selftest`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, BinaryIO

from firmware.commands import rng_selftest
from firmware.commands._common import mechanism_option, non_negative_int, positive_int
from firmware.rng.mechanisms import MECHANISMS

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
        "kat", help="run DRBG known-answer vectors (built in, or from a JSON file)"
    )
    kat.add_argument(
        "file",
        nargs="?",
        help="a vector file in the format of the built-in firmware/rng/vectors/*.json "
        "(default: the NIST CAVP vectors built into the product)",
    )
    kat.add_argument("--mechanism", choices=[*MECHANISMS, "all"], default=None, metavar="M",
                     help=f"whose vectors: {', '.join(MECHANISMS)} or all (default: all built-in "
                     "vectors, or the file's own mechanism)")
    kat.add_argument("--json", action="store_true", help="print one JSON document instead")
    kat.set_defaults(func=_kat)

    dump = rng_sub.add_parser("dump", help="write raw DRBG output bytes to stdout or a file")
    dump.add_argument("--bytes", type=non_negative_int, required=True, metavar="N", help="how many bytes to write")
    mechanism_option(dump)
    dump.add_argument("--seed", metavar="S", help=_SEED_HELP)
    dump.add_argument("--out", metavar="FILE", help="write the bytes into FILE instead of stdout")
    dump.set_defaults(func=_dump)

    outcomes = rng_sub.add_parser(
        "outcomes", help="write scaled outcomes in [0, N) through the production scaling"
    )
    outcomes.add_argument("--range", type=positive_int, required=True, metavar="N", help="each outcome is one of 0..N-1")
    outcomes.add_argument("--count", type=non_negative_int, required=True, metavar="M", help="how many outcomes")
    mechanism_option(outcomes)
    outcomes.add_argument("--seed", metavar="S", help=_SEED_HELP)
    outcomes.set_defaults(func=_outcomes)

    rng_selftest.register(rng_sub)


def _service(seed: str | None, mechanism: str) -> RngService:
    from firmware.rng.service import RngService

    if seed is None:
        return RngService.production(mechanism=mechanism)
    return RngService.seeded(seed, mechanism=mechanism)


def _kat(args: argparse.Namespace) -> int:
    from firmware.commands._common import emit_json
    from firmware.errors import UsageError
    from firmware.rng.kat import load_vectors, run_builtin, run_vector

    if args.file is None:
        chosen = tuple(MECHANISMS) if args.mechanism in (None, "all") else (args.mechanism,)
        results = run_builtin(chosen)
    else:
        vectors = load_vectors(args.file)
        declared = vectors[0].mechanism
        if args.mechanism not in (None, "all", declared):
            raise UsageError(f"{args.file} holds {declared} vectors, not {args.mechanism}")
        results = [run_vector(vector) for vector in vectors]
    several = len({r.mechanism for r in results}) > 1
    failed = sum(not result.passed for result in results)
    passed = len(results) - failed
    if args.json:
        emit_json(
            {
                "file": "built-in" if args.file is None else str(args.file),
                "vectors": [
                    {"name": r.name, "mechanism": r.mechanism, "result": "PASS"}
                    if r.passed
                    else {
                        "name": r.name,
                        "mechanism": r.mechanism,
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
            label = f"{result.mechanism} {result.name}" if several else result.name
            print(f"{label}: {'PASS' if result.passed else 'FAIL'}")
        print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def write_stream(rng: RngService, nbytes: int, out: BinaryIO) -> None:
    """Write the next ``nbytes`` of ``rng``'s stream to ``out`` in :data:`DUMP_CHUNK_BYTES` chunks."""
    remaining = nbytes
    random_bytes, write = rng.random_bytes, out.write
    while remaining:
        n = min(remaining, DUMP_CHUNK_BYTES)
        write(random_bytes(n))
        remaining -= n
    out.flush()


def _dump(args: argparse.Namespace) -> int:
    from firmware.errors import UsageError

    rng = _service(args.seed, args.mechanism)
    if args.out is None:
        sys.stdout.flush()
        write_stream(rng, args.bytes, sys.stdout.buffer)
        return 0
    try:
        with open(args.out, "wb") as out:
            write_stream(rng, args.bytes, out)
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    return 0


def _outcomes(args: argparse.Namespace) -> int:
    rng = _service(args.seed, args.mechanism)
    randbelow, n = rng.randbelow, args.range
    write = sys.stdout.write
    remaining = args.count
    while remaining:
        batch = min(remaining, OUTCOME_LINES_PER_WRITE)
        write("".join([f"{randbelow(n)}\n" for _ in range(batch)]))
        remaining -= batch
    sys.stdout.flush()
    return 0
