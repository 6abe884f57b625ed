"""The PAR sheet's HTML report (firmware/math/report.py): self-contained, deterministic, well-formed,
every wager and figure shown; convergence() is one seeded run cut into batches."""

from __future__ import annotations

import re
from fractions import Fraction
from html.parser import HTMLParser

import pytest

from firmware.games.registry import get_game, make_options
from firmware.kernel.simulate import simulate
from firmware.math import montecarlo, report
from firmware.math.sheet import OutcomeLine, ParSheet, WagerPar
from firmware.math.three_card_poker import par_sheet as tcp_par_sheet
from firmware.math.war import par_sheet
from firmware.rng.service import RngService

GAME = "baccarat-war"
ROUNDS = 3_000
SEED = "report-test"

#: HTML elements without an end tag.
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


@pytest.fixture(scope="module")
def sheet() -> ParSheet:
    return par_sheet(get_game(GAME), make_options(GAME, {}))


@pytest.fixture(scope="module")
def page(sheet) -> str:
    return report.render_html(sheet)


@pytest.fixture(scope="module")
def series() -> dict:
    return report.convergence(GAME, {}, rounds=ROUNDS, seed=SEED, points=12)


class _Checker(HTMLParser):
    """Balanced tags (void elements aside), and the parser's own complaints, if any."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.starts: dict[str, int] = {}

    def handle_starttag(self, tag, attrs):
        self.starts[tag] = self.starts.get(tag, 0) + 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.starts[tag] = self.starts.get(tag, 0) + 1

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()

    def error(self, message):                 # older Pythons call this; keep it as a problem
        self.problems.append(message)


def _check(html: str) -> _Checker:
    checker = _Checker()
    checker.feed(html)
    checker.close()
    assert not checker.problems, checker.problems[:5]
    assert not checker.stack, f"unclosed: {checker.stack}"
    return checker


def _self_contained(html: str) -> None:
    low = html.lower()
    assert "http://" not in low and "https://" not in low
    assert "<script" not in low and "<link" not in low and "@import" not in low
    assert "src=" not in low


def test_exact_sheet_page(sheet, page):
    assert page.startswith("<!DOCTYPE html>")
    assert "Baccarat War" in page and GAME in page
    for name in sheet.wagers:
        assert name in page
    # The return of every wager as the summary shows it, and a few known exact figures.
    for wager in sheet.wagers.values():
        assert f"{float(wager.rtp) * 100:.4f}%" in page
    for shown in ("100.0000%", "94.8969%", "97.4485%", "91.8555%", "95.5491%", "45.0000%"):
        assert shown in page
    assert "1/337893" in page                      # FOUR_CARD's suited quads, exactly
    assert "four_card_pays.straight_flush" in page  # nested options flattened with dots
    assert page.count("<svg") >= 3
    assert 'id="war-length"' in page
    assert 'id="convergence"' not in page
    _self_contained(page)
    checker = _check(page)
    assert checker.starts["svg"] == page.count("<svg")


def test_render_is_deterministic(sheet, page):
    assert report.render_html(sheet) == page


def test_svg_ids_unique_and_resolved(page):
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    for ref in set(re.findall(r'(?:url\(#|href="#)([^")]+)', page)):
        assert ref in ids, ref


def test_text_is_escaped():
    line = OutcomeLine("<b>&\"pays\"</b> $5", 1.0, 0)
    sheet = ParSheet("no-such-game", {"note": "<script>x</script>"},
                     {"w<1>": WagerPar("w<1>", [line], notes=["a < b & c"])},
                     extras={"strategy": {"rule": "<i>play</i>"}})
    html = report.render_html(sheet)
    assert "<b>&" not in html and "<script>" not in html and "<i>play" not in html
    assert "&lt;b&gt;&amp;&quot;pays&quot;&lt;/b&gt; $5" in html
    assert "a &lt; b &amp; c" in html and "&lt;i&gt;play&lt;/i&gt;" in html
    _check(html)


def test_convergence_is_one_run(series):
    assert set(series) == {n for n in get_game(GAME).wager_names}
    for points in series.values():
        rounds = [p[0] for p in points]
        assert rounds == sorted(set(rounds)) and rounds[-1] == ROUNDS
        assert 8 <= len(rounds) <= 12
        for _n, rtp, low, high in points:
            assert low <= rtp <= high
    # The batches are one run: the first chunk of the Monte Carlo run of the same seed ...
    options = make_options(GAME, {})
    mc = montecarlo.run(GAME, options, ROUNDS, seed=SEED, processes=1, chunk_rounds=ROUNDS)
    for name, tally in mc.wagers.items():
        _n, rtp, low, high = series[name][-1]
        simulated = montecarlo.wager_par(name, tally)
        assert rtp == pytest.approx(float(simulated.rtp), abs=1e-12)
        assert (low, high) == pytest.approx(simulated.ci95, abs=1e-12)
    # ... and, for a game without raises or voids, egm simulate's figures on the same DRBG.
    single = simulate(get_game(GAME), options, ROUNDS, rng=RngService.seeded(f"{SEED}:0"))
    for name, stats in single.wagers.items():
        assert series[name][-1][1] == pytest.approx(stats.summary()["rtp"], abs=1e-12)


def test_convergence_reports_its_progress():
    seen: list[int] = []
    report.convergence(GAME, {}, rounds=2_500, seed=SEED, points=5, progress=seen.append)
    assert sum(seen) == 2_500 and len(seen) > 2


def _convergence_rows(html: str) -> dict[str, dict[str, str]]:
    """The convergence table: wager -> {column heading: cell text}."""
    section = html[html.index('<section id="convergence">'):]
    section = section[:section.index("</section>")]
    head = re.findall(r'<th scope="col">(.*?)</th>', section)[1:]
    rows = re.findall(r"<tr><th scope=\"row\">(.*?)</th>(.*?)</tr>", section)
    return {name: dict(zip(head, re.findall(r"<td[^>]*>(.*?)</td>", cells), strict=True))
            for name, cells in rows}


def _percent(text: str) -> float:
    return float(text.rstrip("%")) / 100


def test_three_card_poker_convergence_compares_ante_with_play_to_the_sheet():
    """The sheet's ANTE is ANTE with its PLAY (96.63%); the convergence row must simulate that too,
    not the ANTE alone (about 95%, which made the report say 'no' for a correct sheet)."""
    game, rounds, seed = "three-card-poker", 20_000, "tcp-report"
    sheet = tcp_par_sheet(make_options(game, {}))
    series = report.convergence(game, {}, rounds=rounds, seed=seed, points=6)
    rows = _convergence_rows(report.render_html(sheet, convergence=series))
    assert set(rows) == {"ante", "pair_plus"}
    mc = montecarlo.run(game, make_options(game, {}), rounds, seed=seed, processes=1,
                        chunk_rounds=rounds)
    for name, row in rows.items():
        expected = montecarlo.wager_par(name, mc.wagers[name])     # counted as the sheet counts
        target = float(sheet.wagers[name].rtp)
        assert row["Rounds"] == f"{rounds:,}"
        assert _percent(row["Simulated RTP"]) == pytest.approx(float(expected.rtp), abs=5e-7), name
        low, high = (_percent(x) for x in row["95% interval"].strip("[]").split(", "))
        assert (low, high) == pytest.approx(expected.ci95, abs=5e-7)
        assert _percent(row["Sheet RTP"]) == pytest.approx(target, abs=5e-7)
        assert row["Sheet inside the interval"] == ("yes" if low <= target <= high else "no")
        se = (high - low) / (2 * report.Z95)
        assert float(row["Deviation (std. errors)"]) == pytest.approx((target - float(expected.rtp)) / se,
                                                                      abs=0.01)
    # Like for like, the correct sheet is nowhere near a real disagreement.
    assert abs(float(rows["ante"]["Deviation (std. errors)"])) < report.Z999


def test_a_check_outside_the_interval_is_explained():
    lines = [OutcomeLine("win", Fraction(1, 2), 1), OutcomeLine("lose", Fraction(1, 2), -1)]
    sheet = ParSheet("baccarat-war", {}, {"bac": WagerPar("bac", lines), "tie": WagerPar("tie", lines)})
    near = [(1000, 0.97, 0.95, 0.99)]          # the sheet's 100% is 2.9 standard errors off
    far = [(1000, 0.90, 0.88, 0.92)]           # 9.8 standard errors off
    html = report.render_html(sheet, convergence={"bac": near, "tie": far})
    rows = _convergence_rows(html)
    assert rows["bac"]["Sheet inside the interval"] == rows["tie"]["Sheet inside the interval"] == "no"
    assert "lies 2.94 standard errors" in html and "no evidence against the sheet" in html
    assert "lies 9.80 standard errors" in html and "The sheet and the kernel disagree" in html
    html = report.render_html(sheet, convergence={"bac": [(1000, 1.0, 0.98, 1.02)]})
    assert _convergence_rows(html)["bac"]["Sheet inside the interval"] == "yes"
    assert "Outside the interval" not in html
    assert "Not simulated as one wager" in html and "tie" in html


def test_checkpoints():
    assert report.checkpoints(1, 40) == [1]
    assert report.checkpoints(5, 40) == [5]
    marks = report.checkpoints(1_000_000, 40)
    assert marks[0] == 10 and marks[-1] == 1_000_000 and len(marks) == 40
    assert all(b > a for a, b in zip(marks, marks[1:], strict=False))


def test_page_with_convergence(sheet, page, series, tmp_path):
    path = tmp_path / "par.html"
    report.write_html(sheet, path, convergence=series)
    html = path.read_text(encoding="utf-8")
    assert 'id="convergence"' in html
    assert html.count("<svg") == page.count("<svg") + 1
    assert "Convergence of the simulated return" in html
    _self_contained(html)
    _check(html)


def test_monte_carlo_sheet_shows_interval():
    n = 1_000_000
    lines = [
        OutcomeLine("win", 0.45, 1, count=450_000),
        OutcomeLine("push", 0.1, 0, count=100_000),
        OutcomeLine("lose", 0.45, -1, count=450_000),
    ]
    wager = WagerPar("ante", lines, method="monte-carlo", sample_size=n, notes=["seeded run"])
    sheet = ParSheet("split21-stud", {"decks": 1}, {"ante": wager}, seats=3, unit=5,
                     extras={"monte_carlo": {"rounds": n, "seed": "x"}})
    html = report.render_html(sheet)
    low, high = wager.ci95
    assert f"[{low * 100:.4f}%, {high * 100:.4f}%]" in html
    assert "95% interval" in html and "1,000,000" in html
    assert "Exact probability" not in html            # no fractions to show
    assert "monte-carlo" in html and "monte_carlo" in html
    assert html.count("<svg") == 2                    # returns, outcomes
    _self_contained(html)
    _check(html)


def test_outcome_rows_name_what_the_player_gets():
    """A Monte Carlo jackpot 'win' paying 0.9 of the stake used to read 'win' (plot: 'win (-0.1)')."""
    lines = [OutcomeLine("win", 0.2, Fraction(-1, 10), count=200),
             OutcomeLine("lose", 0.8, -1, count=800)]
    sheet = ParSheet("split21-stud", {}, {"jackpot": WagerPar("jackpot", lines, method="monte-carlo",
                                                              sample_size=1000)})
    html = report.render_html(sheet)
    section = html[html.index('id="wager-jackpot"'):]
    cells = re.findall(r"<tr><td>(.*?)</td><td class=\"num\">(.*?)</td>", section)
    assert cells[:2] == [("pays less than the stake", "-0.1"), ("lose", "-1")]
    assert "pays less than the stake (-0.1)" in section          # the plot's label
    assert "win (-0.1)" not in html
