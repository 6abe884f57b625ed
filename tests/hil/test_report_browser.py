"""report.html in a real browser (headless Chromium through Playwright): every link and image
resolves (images decoded: naturalWidth > 0), no section is empty, and the summary's counts are
run.json's. Chromium is Debian's /usr/bin/chromium (`make test` installs it when it can); where it is
missing this test skips and says so."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from firmware.hil.runner import run
from tests.hil.synthetic import TESTS, tiny_png, write_suite

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


WITH_PICTURE = TESTS + f'''

@pytest.mark.hil(id="syn.picture", title="attaches a picture", **M)
def test_picture(record):
    record.attach("screen", {tiny_png()!r}, "png")
    record.measure("pictures", 1, equals=1)
'''


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("hil-browser")
    suite = write_suite(tmp / "suite", WITH_PICTURE)
    run("sim", (), tmp / "report", None, "Tess", 5.0, progress=False, suite=suite, out=io.StringIO())
    return tmp / "report"


@pytest.fixture(scope="module")
def page(report):
    if not CHROMIUM.exists() or shutil.which(str(CHROMIUM)) is None:
        pytest.skip(f"no browser: {CHROMIUM} is not installed (make test installs Debian's chromium "
                    "with apt-get when run as root)")
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page()
            page.goto((report / "report.html").as_uri(), wait_until="load")
            yield page
        finally:
            browser.close()


def test_every_link_and_image_resolves(page, report):
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    assert hrefs
    for href in hrefs:
        url = urlparse(href)
        assert url.scheme == "file", href
        if url.fragment:
            assert page.locator(f"[id='{url.fragment}']").count() == 1, f"no anchor {url.fragment}"
        else:
            assert Path(unquote(url.path)).is_file(), f"broken link {href}"
    images = page.eval_on_selector_all("img", "els => els.map(e => [e.src, e.complete, e.naturalWidth])")
    assert images, "the report shows the attached picture"
    for src, complete, width in images:
        assert complete and width > 0, f"image {src} did not load"
        assert Path(unquote(urlparse(src).path)).is_file()


def test_no_section_is_empty(page):
    sections = page.eval_on_selector_all("section", """els => els.map(s => {
        const heading = s.querySelector('h2, h3');
        const text = s.innerText.replace(heading ? heading.innerText : '', '').trim();
        return [s.id, text.length];
    })""")
    assert len(sections) > 5
    for sid, length in sections:
        assert length > 0, f"section {sid} is empty"
    # every sub-heading of a test (steps, measurements, notes, evidence) is followed by something
    empty = page.eval_on_selector_all("h4", """els => els.filter(h => {
        const next = h.nextElementSibling;
        return !next || /^H[1-6]$/.test(next.tagName) || !next.innerText.trim();
    }).map(h => h.innerText)""")
    assert empty == []


def test_summary_counts_are_run_json(page, report):
    doc = json.loads((report / "run.json").read_text())
    shown = dict(page.eval_on_selector_all("#counts td[data-verdict]",
                                           "els => els.map(e => [e.dataset.verdict, Number(e.innerText)])"))
    assert shown == {**doc["counts"], "total": len(doc["tests"])}
    rows = page.eval_on_selector_all("#tests tr td:nth-child(5)", "els => els.map(e => e.innerText)")
    assert sorted(rows) == sorted(t["verdict"] for t in doc["tests"])
