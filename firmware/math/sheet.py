"""The PAR sheet's data: per wager, every paying result with its probability and pay, and the figures
a regulator reads from them (return, house edge, hit frequency, variance, element of risk).

Every figure of a wager is derived from its outcome table, never computed beside it, so the table
and the summary cannot disagree. Exact sheets keep ``Fraction`` probabilities and pays to the end;
Monte Carlo sheets carry counts and a sample size, and add a standard error and a 95% interval.

Pays are *net* multiples of the wager's initial stake: a 40:1 win is ``40``, a loss ``-1``, a
push ``0``; a Three Card Poker hand that plays and loses both ANTE and PLAY is ``-2`` (per ante).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal, TypeVar

from firmware.games.outcome_label import outcome_label

Number = Fraction | float
Method = Literal["exact", "recursion", "monte-carlo"]

Z95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class OutcomeLine:
    """One result of a wager: how often it happens and what it pays (net, per unit initial stake)."""

    name: str
    probability: Number
    net: Number
    #: Combinations (exact enumeration) or occurrences (Monte Carlo) behind ``probability``.
    count: int | None = None
    #: Units staked in total in this result, per unit initial stake (1, or 2 when PLAY was placed).
    stake: Number = 1

    @property
    def label(self) -> str:
        """The result named by what the player gets (``firmware.games.outcome_label``)."""
        return outcome_label(self.name, self.net, self.stake)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "outcome": self.name,
            "label": self.label,
            "net": _num(self.net),
            "probability": float(self.probability),
        }
        if isinstance(self.probability, Fraction):
            doc["probability_exact"] = f"{self.probability.numerator}/{self.probability.denominator}"
        if self.count is not None:
            doc["count"] = self.count
        if self.stake != 1:
            doc["stake"] = _num(self.stake)
        return doc


@dataclass(slots=True)
class WagerPar:
    """One wager's part of the PAR sheet."""

    name: str
    outcomes: list[OutcomeLine]
    method: Method = "exact"
    #: Monte Carlo: the number of wagers observed (standard error and interval come from it).
    sample_size: int | None = None
    #: ``recursion``: an upper bound on the probability the recursion did not follow to its end.
    precision: float | None = None
    #: What the figure assumes (strategy, number of seats, stake size, ...).
    notes: list[str] = field(default_factory=list)
    #: Monte Carlo: the standard error measured from per-round sums, where seats share a round
    #: (their results are not independent); otherwise it comes from the outcome table.
    measured_standard_error: float | None = None

    # --- figures, all from the outcome table --------------------------------------------------
    @property
    def expected_net(self) -> Number:
        return sum((o.probability * o.net for o in self.outcomes), Fraction(0))

    @property
    def rtp(self) -> Number:
        """Return to player per unit of initial stake: 1 + expected net."""
        return 1 + self.expected_net

    @property
    def house_edge(self) -> Number:
        """The house's expected win as a fraction of the initial stake."""
        return -self.expected_net

    @property
    def average_stake(self) -> Number:
        """Units staked per unit of initial stake (above 1 where a raise such as PLAY is made)."""
        return sum((o.probability * o.stake for o in self.outcomes), Fraction(0))

    @property
    def element_of_risk(self) -> Number | None:
        """House edge per unit of everything staked; only for wagers with a raise."""
        average = self.average_stake
        if average == 1 or not average:
            return None
        return self.house_edge / average

    @property
    def hit_frequency(self) -> Number:
        """How often the wager pays something (net above zero)."""
        return sum((o.probability for o in self.outcomes if o.net > 0), Fraction(0))

    @property
    def variance(self) -> Number:
        mean = self.expected_net
        return sum((o.probability * o.net * o.net for o in self.outcomes), Fraction(0)) - mean * mean

    @property
    def standard_deviation(self) -> float:
        return math.sqrt(max(float(self.variance), 0.0))

    @property
    def standard_error(self) -> float | None:
        """Monte Carlo: the standard error of the return (per unit initial stake)."""
        if not self.sample_size:
            return None
        if self.measured_standard_error is not None:
            return self.measured_standard_error
        return self.standard_deviation / math.sqrt(self.sample_size)

    @property
    def ci95(self) -> tuple[float, float] | None:
        """Monte Carlo: the 95% interval of the return; ``recursion``: the bound of its precision."""
        rtp = float(self.rtp)
        se = self.standard_error
        if se is not None:
            return (rtp - Z95 * se, rtp + Z95 * se)
        return None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "method": self.method,
            "rtp": float(self.rtp),
            "house_edge": float(self.house_edge),
            "hit_frequency": float(self.hit_frequency),
            "variance": float(self.variance),
            "standard_deviation": self.standard_deviation,
        }
        if isinstance(self.rtp, Fraction):
            doc["rtp_exact"] = _fraction_text(self.rtp)
        eor = self.element_of_risk
        if eor is not None:
            doc["element_of_risk"] = float(eor)
            doc["average_stake"] = float(self.average_stake)
        if self.sample_size is not None:
            doc["sample_size"] = self.sample_size
            doc["standard_error"] = self.standard_error
            doc["ci95"] = list(self.ci95) if self.ci95 else None
        if self.precision is not None:
            doc["precision"] = self.precision
        if self.notes:
            doc["notes"] = list(self.notes)
        doc["outcomes"] = [o.to_json() for o in self.outcomes]
        return doc


@dataclass(slots=True)
class ParSheet:
    """A game's PAR sheet under one configuration."""

    game: str
    options: dict[str, Any]
    wagers: dict[str, WagerPar]
    seats: int = 1
    unit: int | None = None
    #: Extra tables: the war-length distribution, the derived strategy, ...
    extras: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0

    @property
    def method(self) -> Method:
        """``exact`` when every wager is exact (or a recursion to its stated precision)."""
        if any(w.method == "monte-carlo" for w in self.wagers.values()):
            return "monte-carlo"
        return "exact"

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "options": self.options,
            "method": self.method,
            "seats": self.seats,
            "unit": self.unit,
            "wagers": {name: w.to_json() for name, w in self.wagers.items()},
            **{k: _jsonable(v) for k, v in self.extras.items()},
            "elapsed_s": round(self.elapsed, 3),
        }


#: An outcome's key in the counts: (name, net, stake), each exact module with its own number types.
_Key = TypeVar("_Key", bound=tuple[str, Number, Number])


def outcomes_from_counts(
    counts: Mapping[_Key, int], total: int, *, exact: bool
) -> list[OutcomeLine]:
    """Outcome lines from ``{(name, net, stake): count}`` out of ``total``, best pay first."""
    lines = []
    for (name, net, stake), count in counts.items():
        p: Number = Fraction(count, total) if exact else count / total
        lines.append(OutcomeLine(name, p, net, count, stake))
    lines.sort(key=lambda o: (-o.net, o.name))
    return lines


def merge_lines(lines: Iterable[OutcomeLine]) -> list[OutcomeLine]:
    """Lines of the same name, pay and stake added together (best pay first)."""
    merged: dict[tuple[str, Number, Number], list[Any]] = {}
    for line in lines:
        key = (line.name, line.net, line.stake)
        entry = merged.setdefault(key, [Fraction(0), None])
        entry[0] = entry[0] + line.probability
        if line.count is not None:
            entry[1] = (entry[1] or 0) + line.count
    out = [OutcomeLine(n, p, net, c, s) for (n, net, s), (p, c) in merged.items()]
    out.sort(key=lambda o: (-o.net, o.name))
    return out


def _fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def _num(value: Number) -> int | float:
    if isinstance(value, Fraction) and value.denominator == 1:
        return int(value)
    if isinstance(value, int):
        return value
    return float(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value
