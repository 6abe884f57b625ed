"""A tiny synthetic lab suite (a temporary folder of marked tests) for the framework's own tests:
one test per verdict, measurements with limits, an operator step, a test for the cabinet only."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

HEAD = '''
import os
from pathlib import Path

import pytest

from firmware.hil import Blocked

M = dict(standard="gli-11", clause="1.2.3", requirement="A synthetic requirement in our own words.")
'''

TESTS = '''
@pytest.mark.hil(id="syn.pass", title="passes", duration=1, **M)
def test_pass(record):
    record.step("measure a voltage")
    record.measure("supply", 5, low=4.5, high=5.5, unit="V")
    record.measure("label", "ok", equals="ok")
    record.note("a note for the reader")
    record.attach("data", {"a": 1}, "json")


@pytest.mark.hil(id="syn.fail", title="fails a limit", **M)
def test_fail(record):
    record.measure("supply", 6.25, low=4.5, high=5.5, unit="V")
    record.step("never reached")


@pytest.mark.hil(id="syn.soft", title="fails a soft limit at its end", **M)
def test_soft(record):
    record.measure("first", 0, low=1, soft=True)
    record.step("went on after the soft measurement")
    record.measure("second", 2, low=1, soft=True)


@pytest.mark.hil(id="syn.assert", title="fails an assertion", **M)
def test_assert(record):
    assert 1 + 1 == 3, "arithmetic is broken"


@pytest.mark.hil(id="syn.blocked", title="blocked", **M)
def test_blocked(record):
    raise Blocked("the operator could not reach the door")


@pytest.mark.hil(id="syn.error", title="breaks", **M)
def test_error(record):
    {}["missing"]


@pytest.mark.hil(id="syn.skip", title="skips itself", **M)
def test_skip(record):
    pytest.skip("no printer fitted")


@pytest.mark.hil(id="syn.cabinet-only", title="for a cabinet", operator=True, targets=("cabinet",), **M)
def test_cabinet_only(record):
    record.step("should not run on the sim")


@pytest.mark.hil(id="syn.operator", title="asks the operator", operator=True, **M)
def test_operator(record, operator):
    operator.do("press the service key", sim=lambda: None)
    record.measure("answered", True, equals=True)
'''

#: Verdicts the synthetic suite gets on the simulated target.
SIM_VERDICTS = {"syn.pass": "PASS", "syn.fail": "FAIL", "syn.soft": "FAIL", "syn.assert": "FAIL",
                "syn.blocked": "BLOCKED", "syn.error": "ERROR", "syn.skip": "SKIPPED",
                "syn.cabinet-only": "SKIPPED", "syn.operator": "PASS"}


def write_suite(folder: Path, tests: str = TESTS, name: str = "test_synthetic.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(HEAD + tests, encoding="utf-8")
    return folder


def tiny_png(width: int = 4, height: int = 3) -> bytes:
    """A real PNG (grey pixels), made here so the test needs no image library."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
