"""The PAR sheet as one self-contained HTML report, for a lab or a regulator to read and archive.

``render_html(sheet)`` gives a single HTML document: inline CSS, plots as inline SVG made by
matplotlib, no scripts, fonts or external URLs, so the file opens anywhere offline and can be
signed and stored as it is. The same sheet always renders to the same bytes (no dates, fixed SVG
ids), so two reports can be compared with ``cmp``.

It shows the configuration (options flattened with dots, method, seats, unit), a summary table of
every wager (return, house edge, hit frequency, variance, standard deviation, element of risk,
and for Monte Carlo the sample size, standard error and 95% interval), each wager's outcome table
with its exact fractions, and plots: the return per wager, each wager's outcome distribution, the
war-length distribution (``extras["war"]``) and, given :func:`convergence`, the running return of
a seeded simulation with its 95% band against the sheet's figure. Other extras are shown as small
key/value tables.

:func:`convergence` plays rounds through the terminal's own kernel in batches on one seeded DRBG
*and one shoe*, so the batches are exactly one long run: the first chunk of the Monte Carlo run
(:func:`firmware.math.montecarlo.run`) of the same seed. Its rounds are counted as the sheet
counts them (a raise with the wager it raises), so the convergence table compares like with like.
"""

from __future__ import annotations

import html
import io
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from firmware.games.options import GameOptions
from firmware.math.sheet import Z95, Number, ParSheet, WagerPar

if TYPE_CHECKING:
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

Point = tuple[int, float, float, float]


@dataclass(frozen=True, slots=True)
class Agreement:
    """A convergence row: the last point of a wager's simulation against the sheet's figure."""

    name: str
    rounds: int
    simulated: float
    interval: tuple[float, float]     #: 95%, widened by the sheet's own error where it has one
    sheet: float
    deviation: float                  #: (sheet - simulated) in combined standard errors

    @property
    def inside(self) -> bool:
        return self.interval[0] <= self.sheet <= self.interval[1]


def _agreement(name: str, point: Point, wager: WagerPar) -> Agreement:
    rounds, rtp, low, high = point
    se = math.hypot((high - low) / (2 * Z95), wager.standard_error or 0.0)
    target = float(wager.rtp)
    deviation = (target - rtp) / se if se else (0.0 if target == rtp else math.copysign(math.inf, target - rtp))
    return Agreement(name, rounds, rtp, (rtp - Z95 * se, rtp + Z95 * se), target, deviation)

#: matplotlib settings of every plot: fixed SVG ids (deterministic output), text kept as text.
#: The plots' text size, points.
_FONT_SIZE = 9
#: matplotlib's rc parameters for every plot (each parameter takes a value of its own type).
_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "egm-par-report",
    "svg.fonttype": "none",
    "font.size": _FONT_SIZE,
    #: DejaVu Sans (matplotlib's own, used to lay out the plot) first, then the widest fallbacks.
    "font.family": ["sans-serif"],
    "font.sans-serif": ["DejaVu Sans", "Verdana", "Arial"],
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
_WIN, _PUSH, _LOSS = "#2e7d32", "#9e9e9e", "#c62828"
_BAR, _BAND, _TARGET = "#1565c0", "#90caf9", "#c62828"


# --- convergence ----------------------------------------------------------------------------------
def convergence(
    game_id: str,
    options: GameOptions,
    *,
    rounds: int,
    seed: str = "convergence",
    points: int = 40,
    seats: int = 1,
    unit: int = 10,
    progress: Callable[[int], None] | None = None,
) -> dict[str, list[Point]]:
    """Per wager, ``(rounds so far, running rtp, ci95 low, ci95 high)`` at about ``points``
    log-spaced checkpoints of one seeded run of ``rounds`` rounds (the last one at ``rounds``).

    The rounds are counted as the sheet counts them (:class:`firmware.math.montecarlo.AutomaticPlay`):
    Three Card Poker's ANTE with its PLAY, per unit of initial stake, so every point compares with
    the sheet's figure of the same wager. ``options`` is the game's options object or an option
    table (``make_options`` builds it). A wager never staked is left out. ``progress`` is called
    with the rounds played as they are played.
    """
    from firmware.games.registry import make_options
    from firmware.math.montecarlo import AutomaticPlay

    if rounds < 1:
        raise ValueError("convergence needs at least one round")
    if options is None or isinstance(options, Mapping):
        options = make_options(game_id, options or {})
    play = AutomaticPlay(game_id, options, seats=seats, unit=unit, seed=seed)
    series: dict[str, list[Point]] = {}
    done = 0
    for mark in checkpoints(rounds, points):
        play.play(mark - done, progress)
        done = mark
        for name, tally in play.tallies.items():
            if not tally.staked:
                continue
            rtp = 1 + tally.net / tally.staked
            se = tally.standard_error()
            half = Z95 * se if se is not None else 0.0
            series.setdefault(name, []).append((done, rtp, rtp - half, rtp + half))
    return series


def checkpoints(rounds: int, points: int) -> list[int]:
    """About ``points`` log-spaced round counts from 10 (or fewer) up to exactly ``rounds``."""
    first = min(rounds, 10)
    if points <= 1 or first >= rounds:
        return [rounds]
    ratio = rounds / first
    marks = {round(first * ratio ** (i / (points - 1))) for i in range(points)}
    marks.add(rounds)
    return sorted(m for m in marks if 1 <= m <= rounds)


# --- HTML -----------------------------------------------------------------------------------------
def write_html(sheet: ParSheet, path: str | Path, *,
               convergence: Mapping[str, Sequence[Point]] | None = None,
               elapsed: Mapping[str, float] | None = None) -> None:
    """Write :func:`render_html` to ``path`` (UTF-8)."""
    Path(path).write_text(render_html(sheet, convergence=convergence, elapsed=elapsed), encoding="utf-8")


def render_html(sheet: ParSheet, *, convergence: Mapping[str, Sequence[Point]] | None = None,
                elapsed: Mapping[str, float] | None = None) -> str:
    """The PAR sheet as one self-contained HTML document (see the module docstring).

    ``elapsed`` names the phases that made the report and their seconds (``{"sheet": 0.2,
    "convergence run (200,000 rounds)": 95.0}``); by default the sheet's own time is shown.
    """
    if elapsed is None:
        elapsed = {"sheet": sheet.elapsed} if sheet.elapsed else {}
    plots = _Plots()
    name = _game_name(sheet.game)
    title = f"PAR sheet: {name} ({sheet.game})" if name != sheet.game else f"PAR sheet: {sheet.game}"
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<header>",
        f"<h1>PAR sheet: {_e(name)} <span class=\"id\">{_e(sheet.game)}</span></h1>",
        f'<p class="meta">Method: <b>{_e(sheet.method)}</b> &middot; seats: <b>{sheet.seats}</b>'
        f" &middot; unit: <b>{_e(_unit(sheet.unit))}</b>"
        + (" &middot; computed in " + ", ".join(f"{_e(k)} {v:.2f} s" for k, v in elapsed.items())
           if elapsed else "")
        + "</p>",
        _contents(sheet, convergence),
        "</header>",
        '<section id="configuration">',
        "<h2>Configuration</h2>",
        _kv_table(
            [("game", sheet.game), ("method", sheet.method), ("seats", sheet.seats),
             ("unit", _unit(sheet.unit))],
            head=("setting", "value"),
        ),
        "<h3>Options</h3>",
        _kv_table(_flatten(sheet.options), head=("option", "value")) if sheet.options
        else "<p>No options.</p>",
        "</section>",
        '<section id="summary">',
        "<h2>Summary</h2>",
        _summary_table(sheet),
    ]
    if sheet.wagers:
        out.append(plots.figure(_plot_returns, sheet, caption=(
            "Return to player per wager (per unit of initial stake); the line is 100%."
            + (" Bars of Monte Carlo wagers carry their 95% interval."
               if any(w.ci95 for w in sheet.wagers.values()) else ""))))
    out.append("</section>")
    for wager in sheet.wagers.values():
        out.append(_wager_section(wager, plots))
    war = sheet.extras.get("war")
    if isinstance(war, Mapping):
        out.append(_war_section(war, plots))
    if convergence is not None:
        out.append(_convergence_section(sheet, convergence, plots))
    others = {k: v for k, v in sheet.extras.items() if k != "war"}
    if others:
        out.append('<section id="extras">')
        out.append("<h2>Further tables</h2>")
        for key, value in others.items():
            out.append(f'<h3 id="extra-{_anchor(key)}">{_e(key)}</h3>')
            out.append(_render_extra(value))
        out.append("</section>")
    out += [
        "<footer>Figures are rounded for display; the sheet's JSON (<code>ParSheet.to_json()</code>)"
        " keeps them in full. Generated by <code>firmware.math.report</code>.</footer>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(out)


def _contents(sheet: ParSheet, convergence: Mapping[str, Any] | None) -> str:
    items = [("configuration", "Configuration"), ("summary", "Summary")]
    items += [(f"wager-{_anchor(n)}", f"Wager {n}") for n in sheet.wagers]
    if isinstance(sheet.extras.get("war"), Mapping):
        items.append(("war-length", "War length"))
    if convergence is not None:
        items.append(("convergence", "Convergence"))
    if any(k != "war" for k in sheet.extras):
        items.append(("extras", "Further tables"))
    links = " &middot; ".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in items)
    return f'<nav class="toc">{links}</nav>'


def _summary_table(sheet: ParSheet) -> str:
    wagers = list(sheet.wagers.values())
    if not wagers:
        return "<p>No wagers.</p>"
    has_eor = any(w.element_of_risk is not None for w in wagers)
    has_mc = any(w.sample_size for w in wagers)
    has_precision = any(w.precision is not None for w in wagers)
    head = ["Wager", "Method", "RTP", "House edge", "Hit frequency", "Variance", "SD"]
    if has_eor:
        head.append("Element of risk")
    if has_mc:
        head += ["Sample size", "Std. error", "95% interval"]
    if has_precision:
        head.append("Precision")
    head.append("Notes")
    rows = []
    for w in wagers:
        eor = w.element_of_risk
        cells = [
            f'<th scope="row"><a href="#wager-{_anchor(w.name)}">{_e(w.name)}</a></th>',
            _td(w.method),
            _td(_pct(w.rtp), "num rtp"),
            _td(_pct(w.house_edge), "num"),
            _td(_pct(w.hit_frequency), "num"),
            _td(_g(w.variance), "num"),
            _td(_g(w.standard_deviation), "num"),
        ]
        if has_eor:
            cells.append(_td(_pct(eor) if eor is not None else "", "num"))
        if has_mc:
            se, ci = w.standard_error, w.ci95
            cells += [
                _td(f"{w.sample_size:,}" if w.sample_size else "", "num"),
                _td(_pct(se) if se is not None else "", "num"),
                _td(_interval(ci) if ci else "", "num ci"),
            ]
        if has_precision:
            cells.append(_td(f"{w.precision:.3g}" if w.precision is not None else "", "num"))
        notes = "".join(f"<li>{_e(n)}</li>" for n in w.notes)
        cells.append(f'<td class="notes">{f"<ul>{notes}</ul>" if notes else ""}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return _table(head, rows, cls="summary")


def _wager_section(w: WagerPar, plots: _Plots) -> str:
    lines = w.outcomes
    has_count = any(o.count is not None for o in lines)
    has_exact = any(isinstance(o.probability, Fraction) for o in lines)
    has_stake = any(o.stake != 1 for o in lines)
    head = ["Outcome", "Pays (net)"]
    if has_stake:
        head.append("Staked")
    head += ["Probability", "1 in"]
    if has_count:
        head.append("Count")
    if has_exact:
        head.append("Exact probability")
    rows = []
    for o in lines:
        cells = [_td(o.label), _td(_pay(o.net), "num")]
        if has_stake:
            cells.append(_td(_pay(o.stake, sign=False), "num"))
        cells += [_td(_g(o.probability, 8), "num"), _td(_one_in(o.probability), "num")]
        if has_count:
            cells.append(_td(f"{o.count:,}" if o.count is not None else "", "num"))
        if has_exact:
            p = o.probability
            cells.append(_td(_fraction(p) if isinstance(p, Fraction) else "", "frac"))
        rows.append(f"<tr>{''.join(cells)}</tr>")
    total_p = sum((o.probability for o in lines), Fraction(0))
    foot = [_td("total", "total"), _td("")]
    if has_stake:
        foot.append(_td(""))
    foot += [_td(_g(total_p, 12), "num"), _td("")]
    if has_count:
        counts = [o.count for o in lines if o.count is not None]
        foot.append(_td(f"{sum(counts):,}" if len(counts) == len(lines) else "", "num"))
    if has_exact:
        foot.append(_td(_fraction(total_p) if isinstance(total_p, Fraction) else "", "frac"))
    figures = (f"RTP {_pct(w.rtp)} &middot; house edge {_pct(w.house_edge)} &middot; "
               f"hit frequency {_pct(w.hit_frequency)} &middot; SD {_e(_g(w.standard_deviation))}")
    if w.ci95:
        figures += f" &middot; 95% interval {_e(_interval(w.ci95))}"
    parts = [
        f'<section id="wager-{_anchor(w.name)}" class="wager">',
        f"<h2>Wager <code>{_e(w.name)}</code> <span class=\"method\">{_e(w.method)}</span></h2>",
        f'<p class="meta">{figures}</p>',
        _table(head, rows, cls="outcomes", foot=f"<tr>{''.join(foot)}</tr>"),
    ]
    if any(float(o.probability) > 0 for o in lines):
        parts.append(plots.figure(_plot_outcomes, w, caption=(
            f"Outcome distribution of {w.name}: probability of each result (green pays, grey "
            "pushes, red loses), labelled with its value; the axis is logarithmic where the "
            "probabilities span more than two decades.")))
    parts.append("</section>")
    return "\n".join(parts)


def _war_section(war: Mapping[str, Any], plots: _Plots) -> str:
    facts = [("probability of a war", _g(war.get("probability"), 8)),
             ("average war steps, given a war", _g(war.get("average_steps"), 8))]
    if "misdeal_probability" in war:
        facts.append(("misdeal probability (max_war_steps, or the shoe out of cards)",
                      _g(war.get("misdeal_probability"), 8)))
    length = [e for e in war.get("length") or [] if isinstance(e, Mapping)]
    parts = ['<section id="war-length">', "<h2>War length</h2>", _kv_table(facts)]
    if length:
        parts.append(plots.figure(_plot_war_length, length, caption=(
            "War-length distribution: probability that a war ends at each step, given a war "
            "(logarithmic axis).")))
        rows = [f"<tr>{_td(str(e.get('steps')), 'num')}{_td(_g(e.get('probability'), 8), 'num')}"
                f"{_td(_one_in(e.get('probability')), 'num')}</tr>" for e in length]
        parts.append("<details><summary>War length table</summary>"
                     + _table(["Steps", "Probability (given a war)", "1 in"], rows)
                     + "</details>")
    parts.append("</section>")
    return "\n".join(parts)


#: Two-sided 99.9% normal quantile: a deviation beyond it is no longer plausibly chance.
Z999 = 3.2905267314919255


def _convergence_section(sheet: ParSheet, series: Mapping[str, Sequence[Point]],
                         plots: _Plots) -> str:
    shown = [n for n in series if n in sheet.wagers and series[n]]
    parts = ['<section id="convergence">', "<h2>Convergence</h2>"]
    if not shown:
        parts += ["<p>No simulated wager is on this sheet.</p>", "</section>"]
        return "\n".join(parts)
    rows = []
    checks = [_agreement(name, series[name][-1], sheet.wagers[name]) for name in shown]
    for c in checks:
        rows.append(f"<tr><th scope=\"row\">{_e(c.name)}</th>{_td(f'{c.rounds:,}', 'num')}"
                    f"{_td(_pct(c.simulated), 'num')}{_td(_interval(c.interval), 'num ci')}"
                    f"{_td(_pct(c.sheet), 'num')}{_td(f'{c.deviation:+.2f}', 'num')}"
                    f"{_td('yes' if c.inside else 'no')}</tr>")
    parts.append(_table(["Wager", "Rounds", "Simulated RTP", "95% interval", "Sheet RTP",
                         "Deviation (std. errors)", "Sheet inside the interval"], rows))
    parts.append(
        "<p>Each row compares the same wager counted the same way: the simulation counts a raise "
        "with the wager it raises (Three Card Poker's ANTE with its PLAY) per unit of initial "
        "stake, and a voided wager as staked and returned, as the sheet does. The interval is the "
        "simulation's 95% interval; for a wager the sheet itself took from Monte Carlo it is "
        "widened by the sheet's own standard error (two independent simulations). The deviation "
        "is the sheet's figure less the simulated one, in standard errors.</p>")
    missing = [n for n in sheet.wagers if n not in shown]
    if missing:
        parts.append(f"<p>Not simulated as one wager (the kernel settles its parts separately): "
                     f"{_e(', '.join(missing))}.</p>")
    failed = [c for c in checks if not c.inside]
    if failed:
        chance = 1 - 0.95 ** len(checks)
        items = []
        for c in failed:
            why = (f"within {Z999:.2f} standard errors (a 99.9% interval), so no evidence "
                   "against the sheet: a 95% interval misses the true figure in one run in "
                   f"twenty by chance, and with {len(checks)} wager(s) compared at least one "
                   f"misses in {chance:.0%} of runs. More rounds (--convergence-rounds, or "
                   "egm par --verify) settle it."
                   if abs(c.deviation) <= Z999 else
                   f"beyond {Z999:.2f} standard errors: by chance in fewer than one run in a "
                   "thousand. The sheet and the kernel disagree on this wager; do not use the "
                   "sheet before the difference is explained.")
            items.append(f"<li><b>{_e(c.name)}</b>: the sheet's {_pct(c.sheet)} lies "
                         f"{abs(c.deviation):.2f} standard errors from the simulated "
                         f"{_pct(c.simulated)}: {_e(why)}</li>")
        parts.append(f'<div class="explain"><p>Outside the interval:</p><ul>{"".join(items)}</ul></div>')
    parts.append(plots.figure(_plot_convergence, sheet, {n: series[n] for n in shown}, caption=(
        "Running return of one seeded simulation through the terminal's kernel, with its 95% "
        "interval, against the number of rounds (logarithmic); the red line is the sheet's "
        "figure.")))
    parts.append("</section>")
    return "\n".join(parts)


def _render_extra(value: Any) -> str:
    if isinstance(value, Mapping):
        return _kv_table(_flatten(value)) if value else "<p>(empty)</p>"
    if isinstance(value, list | tuple) and value and all(isinstance(v, Mapping) for v in value):
        columns: list[str] = []
        for row in value:
            for key in row:
                if key not in columns:
                    columns.append(str(key))
        rows = ["<tr>" + "".join(_td(_scalar(row.get(c)), _num_class(row.get(c))) for c in columns)
                + "</tr>" for row in value]
        return _table(columns, rows, cls="extra")
    return _kv_table([("value", value)])


# --- plots ----------------------------------------------------------------------------------------
class _Plots:
    """Renders figures to inline SVG, each with its own id prefix (ids are unique in the page)."""

    def __init__(self) -> None:
        self.count = 0

    def figure(self, draw: Callable[..., None], *args: object, caption: str) -> str:
        import matplotlib
        from matplotlib.figure import Figure

        self.count += 1
        with matplotlib.rc_context(_RC):
            fig = Figure()
            draw(fig, *args)
            buf = io.StringIO()
            fig.savefig(buf, format="svg", metadata={"Date": None})
        svg = _inline_svg(buf.getvalue(), f"f{self.count}-", caption)
        return f'<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>'


def _inline_svg(svg: str, prefix: str, label: str) -> str:
    """matplotlib's SVG document as an element inside HTML: no XML prolog, metadata or namespace
    URIs (the HTML parser puts ``<svg>`` in its namespace), ids prefixed to be unique."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(?::\w+)?="[^"]*"', "", svg)
    svg = re.sub(r'(\bid="|url\(#|href="#)', lambda m: m.group(1) + prefix, svg)
    svg = svg.replace("<svg ", f'<svg class="plot" role="img" aria-label="{_e(label)}" ', 1)
    return svg.strip()


def _log_axis(axis: Axis, set_scale: Callable[[str], object]) -> None:
    """A log scale labelled in plain text (``1e-06``; mathtext labels cost ~25 ms each), decades
    only (minor ticks are most of a plot's drawing time)."""
    from matplotlib.ticker import LogFormatter, LogLocator, NullLocator

    set_scale("log")
    axis.set_major_locator(LogLocator(numticks=7))
    axis.set_major_formatter(LogFormatter(labelOnlyBase=True))
    axis.set_minor_locator(NullLocator())


def _margins(fig: Figure, labels: Sequence[str] = (), *, ylabel: bool = False, left: float = 0.0,
             top: float = 0.4, bottom: float = 0.5) -> None:
    """Room (inches) for the tick labels ``labels``, axis labels and title, measured from the
    font instead of a tight bounding box (which draws the whole figure once more), with slack for
    a viewer that renders the SVG text in another font."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    measure = TextToPath().get_text_width_height_descent
    font = FontProperties(size=_FONT_SIZE)
    widest = max((measure(label, font, ismath=False)[0] for label in labels), default=0.0) / 72
    left = max(left, widest * 1.12 + 0.25 + (0.3 if ylabel else 0.0))
    width, height = fig.get_size_inches()
    fig.subplots_adjust(left=left / width, right=1 - 0.2 / width,
                        bottom=bottom / height, top=1 - top / height)


def _plot_returns(fig: Figure, sheet: ParSheet) -> None:
    wagers = list(sheet.wagers.values())
    fig.set_size_inches(7.5, 0.42 * len(wagers) + 1.1)
    ax = fig.subplots()
    names = [_t(w.name) for w in wagers]
    values = [float(w.rtp) * 100 for w in wagers]
    y = list(range(len(wagers)))[::-1]
    err = [[0.0] * len(wagers), [0.0] * len(wagers)]
    for i, w in enumerate(wagers):
        if w.ci95:
            err[0][i] = values[i] - w.ci95[0] * 100
            err[1][i] = w.ci95[1] * 100 - values[i]
    has_err = any(err[0]) or any(err[1])
    ax.barh(y, values, color=_BAR, height=0.6, xerr=err if has_err else None,
            error_kw={"ecolor": "#000000", "capsize": 3, "linewidth": 0.8})
    ax.axvline(100, color=_TARGET, linestyle="--", linewidth=1)
    ax.set_yticks(y, names)
    _margins(fig, names)
    top = max([*values, *(v + e for v, e in zip(values, err[1], strict=True)), 100.0])
    ax.set_xlim(0, top * 1.12)
    for yi, v in zip(y, values, strict=True):
        if v > top * 0.3:      # inside the bar, clear of the 100% line
            ax.text(v - top * 0.015, yi, f"{v:.4f}%", va="center", ha="right", fontsize=8,
                    color="#ffffff")
        else:
            ax.text(max(v, 0) + top * 0.01, yi, f"{v:.4f}%", va="center", ha="left", fontsize=8)
    ax.set_xlabel("return to player (%)")
    ax.set_title("Return per wager")


def _plot_outcomes(fig: Figure, w: WagerPar) -> None:
    lines = [o for o in w.outcomes if float(o.probability) > 0]
    fig.set_size_inches(7.5, 0.3 * len(lines) + 1.1)
    ax = fig.subplots()
    probs = [float(o.probability) for o in lines]
    y = list(range(len(lines)))[::-1]
    colors = [_WIN if o.net > 0 else _LOSS if o.net < 0 else _PUSH for o in lines]
    ax.barh(y, probs, color=colors, height=0.65)
    labels = [_t(_short(f"{o.label} ({_pay(o.net)})", 64)) for o in lines]
    ax.set_yticks(y, labels)
    _margins(fig, labels)
    # Logarithmic when the results that can be seen at all (not below 1e-12 of the most likely,
    # such as a misdeal tail) span more than two decades.
    top = max(probs)
    seen = min(p for p in probs if p >= top * 1e-12)
    log = top / seen > 100
    if log:
        _log_axis(ax.xaxis, ax.set_xscale)
        low = seen / 3
        ax.set_xlim(low, 3)
    else:
        ax.set_xlim(0, top * 1.2)
    for yi, p in zip(y, probs, strict=True):
        x = max(p, low) * 1.08 if log else p + top * 0.01
        ax.text(x, yi, f"{p:.4g}", va="center", ha="left", fontsize=7)
    ax.set_xlabel("probability" + (" (log scale)" if log else ""))
    ax.set_title(_t(f"{w.name}: outcome distribution"))


def _plot_war_length(fig: Figure, length: list[Mapping[str, Any]]) -> None:
    fig.set_size_inches(7.5, 2.8)
    ax = fig.subplots()
    _margins(fig, ylabel=True, left=0.85)
    points = [(int(e["steps"]), float(e["probability"])) for e in length
              if e.get("steps") is not None and e.get("probability")]
    ax.bar([s for s, _ in points], [p for _, p in points], color=_BAR, width=0.75)
    _log_axis(ax.yaxis, ax.set_yscale)
    ax.set_xlabel("war steps until the war ends")
    ax.set_ylabel("probability given a war")
    ax.set_title("War-length distribution")
    ax.grid(axis="y", which="major", linewidth=0.4, alpha=0.6)


def _plot_convergence(fig: Figure, sheet: ParSheet, series: Mapping[str, Sequence[Point]]) -> None:
    names = list(series)
    cols = 2 if len(names) > 1 else 1
    rows = math.ceil(len(names) / cols)
    fig.set_size_inches(7.5 if cols == 2 else 6, 2.5 * rows + 0.3)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, name in zip(axes.flat, names, strict=False):
        pts = series[name]
        x = [p[0] for p in pts]
        rtp = [p[1] * 100 for p in pts]
        low = [p[2] * 100 for p in pts]
        high = [p[3] * 100 for p in pts]
        target = float(sheet.wagers[name].rtp) * 100
        ax.fill_between(x, low, high, color=_BAND, alpha=0.6, linewidth=0, label="95% interval")
        ax.plot(x, rtp, color=_BAR, linewidth=1.2, label="simulated")
        ax.axhline(target, color=_TARGET, linestyle="--", linewidth=1, label=f"sheet {target:.4f}%")
        _log_axis(ax.xaxis, ax.set_xscale)
        # Early checkpoints have wide bands: scale to the later two thirds and the sheet's value.
        tail = slice(len(pts) // 3, None)
        lo = min([*low[tail], target])
        hi = max([*high[tail], target])
        pad = (hi - lo) * 0.15 or 1.0
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_title(_t(name))
        ax.set_xlabel("rounds")
        ax.set_ylabel("RTP (%)")
        ax.legend(fontsize=7, loc="best", frameon=False)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.suptitle("Convergence of the simulated return to the sheet")
    _margins(fig, ylabel=True, left=0.75, top=0.75)
    fig.subplots_adjust(hspace=0.6, wspace=0.3)


# --- formatting -----------------------------------------------------------------------------------
def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _t(text: str) -> str:
    """Text for matplotlib: a ``$`` is literal, not mathtext."""
    return text.replace("$", r"\$")


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _anchor(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "x"


def _td(text: str, cls: str = "") -> str:
    return f'<td class="{cls}">{_e(text)}</td>' if cls else f"<td>{_e(text)}</td>"


def _table(head: Sequence[str], rows: Sequence[str], *, cls: str = "", foot: str = "") -> str:
    th = "".join(f'<th scope="col">{_e(h)}</th>' for h in head)
    attr = f' class="{cls}"' if cls else ""
    tfoot = f"<tfoot>{foot}</tfoot>" if foot else ""
    return (f'<div class="scroll"><table{attr}><thead><tr>{th}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody>{tfoot}</table></div>")


def _kv_table(items: Sequence[tuple[str, Any]], head: tuple[str, str] | None = None) -> str:
    rows = [f'<tr><th scope="row">{_e(k)}</th>{_td(_scalar(v), _num_class(v))}</tr>'
            for k, v in items]
    thead = (f'<thead><tr><th scope="col">{_e(head[0])}</th><th scope="col">{_e(head[1])}</th>'
             "</tr></thead>") if head else ""
    return f'<div class="scroll"><table class="kv">{thead}<tbody>{"".join(rows)}</tbody></table></div>'


def _flatten(value: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Nested tables as ``a.b.c`` keys."""
    out: list[tuple[str, Any]] = []
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping) and item:
            out += _flatten(item, name + ".")
        else:
            out.append((name, item))
    return out


def _scalar(value: Any) -> str:
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, list | tuple):
        with suppress(TypeError, ValueError):
            value = value.item()          # numpy scalars
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Fraction) and value.denominator == 1:
        value = int(value)
    if isinstance(value, Fraction):
        text = _fraction(value)
        return _g(value, 10) if len(text) > 24 else f"{text} ≈ {_g(value, 10)}"
    if isinstance(value, float):
        return _g(value, 10)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 1000 else str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(
            v is None or isinstance(v, str | int | float | bool) for v in value):
        return ", ".join(_scalar(v) for v in value)
    return json.dumps(value, default=_json_default, ensure_ascii=False, sort_keys=False)


def _json_default(value: object) -> object:
    if isinstance(value, Fraction):
        return _fraction(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def _num_class(value: object) -> str:
    return "num" if isinstance(value, int | float | Fraction) and not isinstance(value, bool) else ""


def _g(value: Number | None, digits: int = 6) -> str:
    if value is None:
        return "—"
    return f"{float(value):.{digits}g}"


def _pct(value: Number) -> str:
    return f"{float(value) * 100:.4f}%"


def _interval(ci: Sequence[float]) -> str:
    return f"[{_pct(ci[0])}, {_pct(ci[1])}]"


def _fraction(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def _one_in(p: Number | None) -> str:
    if p is None or float(p) <= 0:
        return ""
    x = 1 / float(p)
    return f"{x:,.2f}" if x < 100 else f"{x:,.0f}" if x < 1e15 else f"{x:.3g}"


def _pay(value: Number, *, sign: bool = True) -> str:
    """A net pay: ``+40``, ``-1``, ``0``, ``+0.5``; a fraction without a short decimal as ``p/q``."""
    if isinstance(value, Fraction) and value.denominator == 1:
        value = int(value)
    if isinstance(value, int):
        return f"{value:+d}" if sign and value else str(value)
    if isinstance(value, Fraction):
        den = value.denominator
        for f in (2, 5):
            while den % f == 0:
                den //= f
        if den == 1 and value.denominator <= 10**6:
            return f"{float(value):+g}" if sign else f"{float(value):g}"
        text = f"{value.numerator:+d}/{value.denominator}" if sign else _fraction(value)
        return f"{text} ≈ {float(value):.6g}"
    return f"{float(value):+.6g}" if sign else f"{float(value):.6g}"


def _unit(unit: int | None) -> str:
    return "—" if unit is None else f"{unit} credits"


def _game_name(game_id: str) -> str:
    try:
        from firmware.games.registry import get_game

        return get_game(game_id).name
    except Exception:         # an unknown or unbuilt game still gets its report
        return game_id


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
color:#1a1a1a;background:#fff;max-width:1100px;margin:0 auto;padding:1em 1.5em 3em}
h1{font-size:1.6em;margin:.2em 0}h1 .id{font:600 .6em ui-monospace,Menlo,Consolas,monospace;
color:#555;background:#eef;padding:.1em .4em;border-radius:4px;vertical-align:middle}
h2{font-size:1.25em;border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:1.8em}
h3{font-size:1.05em;margin:1.2em 0 .4em}
.meta{color:#444}.method{font-size:.7em;color:#555;font-weight:normal;border:1px solid #bbb;
border-radius:4px;padding:0 .4em;vertical-align:middle}
nav.toc{font-size:.9em;margin:.6em 0}nav.toc a{color:#1565c0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:.4em 0 .8em;font-size:.92em}
th,td{border:1px solid #d0d0d0;padding:.25em .55em;text-align:left;vertical-align:top}
thead th{background:#f0f3f8}tbody tr:nth-child(even){background:#fafafa}
tfoot td{font-weight:600;background:#f5f5f5}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.rtp{font-weight:600}td.ci{white-space:nowrap}
td.frac{font:.75em ui-monospace,Menlo,Consolas,monospace;word-break:break-all;max-width:28em}
td.notes{font-size:.85em;max-width:30em}td.notes ul{margin:0;padding-left:1.1em}
table.kv th{font-weight:500;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
figure{margin:.8em 0 1.2em}figcaption{font-size:.85em;color:#555;margin-top:.2em}
svg.plot{max-width:100%;height:auto;display:block}
details summary{cursor:pointer;color:#1565c0;font-size:.9em}
footer{margin-top:3em;font-size:.8em;color:#666;border-top:1px solid #ddd;padding-top:.6em}
@media print{nav.toc{display:none}section{break-inside:avoid-page}}
""".strip()


__all__ = ["checkpoints", "convergence", "render_html", "write_html"]
