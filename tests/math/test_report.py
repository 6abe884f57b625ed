"""The PAR sheet's HTML report (firmware/math/report.py): self-contained, deterministic, well-formed,
every wager and figure shown; convergence() is one seeded run cut into batches."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from firmware.games.registry import get_game, make_options
from firmware.kernel.simulate import simulate
from firmware.math import report
from firmware.math.sheet import OutcomeLine, ParSheet, WagerPar
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
    assert set(series) == set(get_game(GAME).wager_names)
    for points in series.values():
        rounds = [p[0] for p in points]
        assert rounds == sorted(set(rounds)) and rounds[-1] == ROUNDS
        assert 8 <= len(rounds) <= 12
        for _n, rtp, low, high in points:
            assert low <= rtp <= high
    game = get_game(GAME)
    single = simulate(game, make_options(GAME, {}), ROUNDS, rng=RngService.seeded(SEED))
    for name, stats in single.wagers.items():
        summary = stats.summary()
        _n, rtp, low, high = series[name][-1]
        assert rtp == summary["rtp"]
        assert [low, high] == summary["ci95"]


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
