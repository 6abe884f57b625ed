"""What the lab suite's RNG and math tests share: the installed ``egm`` as a subprocess, the
mechanisms the product offers, and the statistics the tests judge the output with.

The statistics are computed here, on scipy, and not with the product's own battery
(:mod:`firmware.rng.battery`), so that a test of the RNG does not rest on the code under test:

* :func:`uniform_chi2`: Pearson's goodness of fit of counts against equal probabilities.
* :func:`position_chi2`: card-by-position counts after ``s`` shuffles that each started from the
  same order. The count matrix is a sum of ``s`` independent uniform permutation matrices, whose
  covariance is ``Q (x) Q / (n - 1)`` (``Q`` the centring projection, rank ``n - 1``), so
  Pearson's statistic is ``n / (n - 1)`` times a chi-square with ``(n - 1)^2`` degrees of
  freedom; the factor is divided out (without it the statistic reads high and a sound shuffle
  fails too often).
* :func:`sidak`: the per-check significance that keeps a family of ``k`` independent checks at a
  chosen family-wise false-alarm rate: ``1 - (1 - family) ** (1 / k)``.
* :func:`overlaps`: where 16-byte blocks of several output streams coincide (cold boots).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

import numpy as np
from scipy.stats import chi2 as chi2_dist

from firmware.rng.mechanisms import MECHANISMS


def egm(*args: str, stdout: IO[bytes] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[bytes]:
    """``egm ARGS`` of the installed product (this interpreter, ``-m firmware.cli``), a fresh process;
    its output captured (or written to ``stdout``)."""
    return subprocess.run([sys.executable, "-m", "firmware.cli", *args], stdout=stdout or subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, check=False)


def mechanisms() -> list[str]:
    """The DRBG mechanisms the installed product offers (``[rng] mechanism``), its default first."""
    return list(MECHANISMS)


def sidak(family: float, k: int) -> float:
    """Per-check significance for ``k`` independent checks at family-wise false-alarm rate ``family``."""
    return float(1 - (1 - family) ** (1 / k))


@dataclass(frozen=True)
class Chi2:
    """A chi-square statistic, its degrees of freedom and upper-tail p-value."""

    statistic: float
    dof: int
    p_value: float


def uniform_chi2(counts: Sequence[int] | np.ndarray) -> Chi2:
    """Pearson's chi-square of ``counts`` against all cells equally likely."""
    observed = np.asarray(counts, dtype=np.float64)
    expected = observed.sum() / observed.size
    statistic = float(np.sum((observed - expected) ** 2) / expected)
    dof = observed.size - 1
    return Chi2(statistic, dof, float(chi2_dist.sf(statistic, dof)))


def position_chi2(counts: np.ndarray) -> Chi2:
    """Card-by-position chi-square of an ``n x n`` count matrix of ``s`` shuffles (see the module
    docstring for the ``(n - 1) / n`` factor)."""
    n = counts.shape[0]
    expected = counts.sum() / (n * n)
    pearson = float(np.sum((counts - expected) ** 2) / expected)
    statistic = pearson * (n - 1) / n
    dof = (n - 1) ** 2
    return Chi2(statistic, dof, float(chi2_dist.sf(statistic, dof)))


@dataclass(frozen=True)
class Overlap:
    """A 16-byte block of stream ``a`` at ``a_offset`` equal to the block of ``b`` at ``b_offset``."""

    a: int
    a_offset: int
    b: int
    b_offset: int


def overlaps(streams: Sequence[bytes], block: int = 16, limit: int = 20) -> list[Overlap]:
    """Coinciding blocks: every ``block``-byte window of each stream (at every offset) looked up
    among the aligned blocks of all streams; a hit in another stream, or in the same stream at
    another offset, is an overlap. Any shared run of ``2 * block - 1`` bytes or more is found,
    whatever its alignment. At most ``limit`` are returned."""
    aligned: dict[bytes, tuple[int, int]] = {}
    for s, data in enumerate(streams):
        for off in range(0, len(data) - block + 1, block):
            aligned.setdefault(data[off:off + block], (s, off))
    found: list[Overlap] = []
    for s, data in enumerate(streams):
        view = memoryview(data)
        for off in range(len(data) - block + 1):
            hit = aligned.get(bytes(view[off:off + block]))
            if hit is not None and hit != (s, off):
                found.append(Overlap(s, off, *hit))
                if len(found) >= limit:
                    return found
    return found
