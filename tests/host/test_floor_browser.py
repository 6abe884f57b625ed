"""The floor page in a real browser (headless Chromium through Playwright, Debian's
/usr/bin/chromium, never ``playwright install``) against a real host (``egm host serve --listen
--web``) and a real simulated terminal (``egm run --sim``) linked to it over mutual TLS.

A floor manager logs in; the terminal's main door opens (the simulated door switch, ``egm simctl
door open main``) and the floor grid shows it in tilt without a reload; the manager disables it
from its page; the page shows it disabled once the terminal's ``host.disabled`` report arrived, the
terminal itself is disabled, and the command log (and the auditor's operator log) names the manager.
Where Chromium is missing this test skips and says so. With EGM_FLOOR_SCREENSHOTS=DIR it saves the
pictures it took there.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

CHROMIUM = Path("/usr/bin/chromium")
EGM = [sys.executable, "-m", "firmware.cli"]
ARGS_BASE = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run"]
TERMINAL = "EGM-0001"
PASSWORD = "manager-pass-1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spki_pin(cert_path: Path) -> str:
    """base64(SHA-256(SubjectPublicKeyInfo)) of the host's certificate: Chromium trusts exactly
    this key (--ignore-certificate-errors-spki-list), not any certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    spki = cert.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def _simctl(state: Path, *words: str) -> dict:
    out = subprocess.run([*EGM, "simctl", "--state-dir", str(state), "--json", *words],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture
def floor(tmp_path: Path):
    """A host with the floor page and one terminal linked to it; yields (floor URL, terminal state
    dir, PKI dir)."""
    if not CHROMIUM.exists() or shutil.which(str(CHROMIUM)) is None:
        pytest.skip(f"no browser: {CHROMIUM} is not installed (make test installs Debian's chromium "
                    "with apt-get when run as root)")
    from egmproto.pki import ensure_development_pki
    from host.store import HostStore
    from host.store_operators import Operators

    state, host = tmp_path / "t", tmp_path / "h"
    ensure_development_pki(state, TERMINAL)
    pki = state / "pki"
    host.mkdir()
    with HostStore.open(str(host / "host.db")) as store:
        Operators(store).add("maria", "floor-manager", PASSWORD)
        Operators(store).add("otto", "auditor", "auditor-pass-1")
    port = _free_port()
    server = subprocess.Popen([*EGM, "host", "serve", "--state-dir", str(host), "--pki", str(pki), "--listen", str(port),
                               "--web", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    terminal = None
    try:
        line = server.stdout.readline()
        assert "; floor https://" in line, server.stderr.read() if server.poll() is not None else line
        url = line.rsplit("; floor ", 1)[1].strip()
        config = tmp_path / "egm.toml"
        config.write_text(f'[host]\nbroker = "mqtts://127.0.0.1:{port}"\npki = "{pki}"\nack_timeout_s = 1.0\n')
        terminal = subprocess.Popen([*EGM, "run", "--sim", "--headless", "--config", str(config), "--state-dir", str(state)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        yield url, state, pki
    finally:
        for proc in (terminal, server):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)


def test_tilt_then_disable_from_the_floor_page(floor) -> None:
    url, state, pki = floor
    # the page is served with the PKI's host certificate, valid for 127.0.0.1 (checked as a client would)
    where = urlparse(url)
    context = ssl.create_default_context(cafile=str(pki / "ca.cert.pem"))
    with socket.create_connection((where.hostname, where.port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname=where.hostname) as tls:
        assert tls.version() in ("TLSv1.2", "TLSv1.3")
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
    shots = os.environ.get("EGM_FLOOR_SCREENSHOTS")
    pin = _spki_pin(pki / "issued" / "egm-host.cert.pem")
    args = [*ARGS_BASE, f"--ignore-certificate-errors-spki-list={pin}"]
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=args)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(20_000)
            page.goto(url + "login")
            page.fill("input[name=name]", "maria")
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(url + "floor")
            tile = page.locator(f'a.tile[data-terminal="{TERMINAL}"]')
            tile.wait_for()                                   # the terminal's first report, live
            page.evaluate("window.__same_page = true")
            _simctl(state, "door", "open", "main")            # the simulated door switch
            page.wait_for_selector(f'a.tile[data-terminal="{TERMINAL}"][data-state="tilt"]')
            assert page.evaluate("window.__same_page === true"), "the grid changed without a reload"
            assert "door:main" in tile.inner_text() and "TILT" in tile.inner_text()
            if shots:
                page.screenshot(path=str(Path(shots) / "floor-grid.png"), full_page=True)
            tile.click()
            page.wait_for_url(url + f"terminals/{TERMINAL}")
            page.wait_for_selector('.status[data-state="tilt"]')
            page.click("button[value=disable]")
            page.wait_for_url(url + f"terminals/{TERMINAL}")
            assert "Disable queued" in page.locator(".flash").inner_text()
            page.evaluate("window.__same_page = true")
            # disabled only once the terminal applied it and its host.disabled report was stored
            page.wait_for_selector('.status[data-state="disabled"]')
            assert page.evaluate("window.__same_page === true")
            status = _simctl(state, "status")
            assert "host" in status["disabled_by"], status
            log = page.locator("table.commands tbody tr").first.inner_text()
            assert "maria" in log and "disable" in log, log
            page.wait_for_selector("tr.confirmed")
            if shots:
                page.wait_for_timeout(300)
                page.screenshot(path=str(Path(shots) / "floor-terminal.png"), full_page=True)
            # the auditor's operator log names who sent it
            auditor = browser.new_page()
            auditor.goto(url + "login")
            auditor.fill("input[name=name]", "otto")
            auditor.fill("input[name=password]", "auditor-pass-1")
            auditor.click("button[type=submit]")
            auditor.wait_for_url(url + "floor")
            auditor.goto(url + "operator-log")
            rows = auditor.locator("table.oplog tbody tr").all_inner_texts()
            assert any("maria" in r and "disable" in r and TERMINAL in r and "queued" in r for r in rows), rows
        finally:
            browser.close()
