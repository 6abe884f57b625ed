"""Pictures of the floor page for docs/images (not a test): a floor of twelve terminals made up in
a temporary host store, served over HTTPS as ``egm host serve --web`` serves it, photographed by
headless Chromium. ``python -m tests.host.floor_screenshots docs/images``."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from egmproto.pki import ensure_development_pki
from host.store import HostStore
from host.store_operators import Operators
from host.web.serve import start_web
from tests.host.test_floor_browser import ARGS_BASE, CHROMIUM, _spki_pin

NOW = datetime.now(UTC)
#: terminal, state to make, credits (cents)
FLOOR = [("BJ-0101", "playing", 4_250), ("BJ-0102", "playing", 12_000), ("BJ-0103", "idle", 0),
         ("BJ-0104", "tilt", 2_500), ("BW-0201", "playing", 800), ("BW-0202", "disabled", 0),
         ("BW-0203", "idle", 15_075), ("BW-0204", "offline", 0), ("HE-0301", "playing", 31_500),
         ("HE-0302", "idle", 100), ("HE-0303", "tilt", 0), ("HE-0304", "playing", 6_620)]


def build(store: HostStore, when: list[datetime]) -> None:
    for i, (terminal, state, credits) in enumerate(FLOOR):
        seq = 0
        start = NOW - timedelta(hours=2) if state != "offline" else NOW - timedelta(hours=5)
        stop = NOW - timedelta(seconds=8 + i) if state != "offline" else NOW - timedelta(hours=3)

        def put(type_: str, body: dict, at: datetime, terminal: str = terminal) -> None:
            nonlocal seq
            seq += 1
            when[0] = at
            store.record(terminal, seq, type_, at, body)

        steps = 24
        for k in range(steps + 1):
            at = start + (stop - start) * k / steps
            played = k * (37 + 11 * i)
            meters = {"coin_in": played * 25, "coin_out": played * 23, "bills_in": (k // 3 + 1) * 2_000,
                      "ticket_out": (k // 6) * 1_500, "ticket_in": 0, "jackpot": 0, "games_played": played}
            put("meters", {"meters": meters, "credits": credits if k == steps else (k * 733 + i * 97) % 9_000,
                           "denomination": 1, "reason": "periodic"}, at)
            if state == "playing" and k % 4 == 0 or k == steps and state == "playing":
                put("round", {"record": {"round_id": f"{terminal}-{seq}", "game": "baccarat-war",
                                         "wagers": {"1": {"bac": 25, "war": 25}},
                                         "cards": ["Qs", "2d", "3h", "Ah", "Td", "Ts"], "win": 50}}, at)
        if state == "tilt":
            put("event", {"name": "cabinet.tilt_raised",
                          "data": {"tilt": "door:main" if i < 6 else "printer:paper_out",
                                   "reason": "main door open" if i < 6 else "printer out of paper"}}, stop)
        if state == "disabled":
            put("event", {"name": "host.disabled", "data": {"reason": "cash box count", "seq": 1}}, stop)
        if i == 0:
            put("event", {"name": "ticket_out", "data": {"cents": 4_250, "validation": "001234567890123456"}}, stop)
    when[0] = NOW


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        paths = ensure_development_pki(Path(tmp), "BJ-0101")
        when = [NOW]
        store = HostStore.open(str(Path(tmp) / "host.db"), clock=lambda: when[0])
        stack.callback(store.close)
        build(store, when)
        Operators(store).add("maria", "floor-manager", "manager-pass-1")
        web = start_web(stack, store=store, state_dir=Path(tmp), pki=paths["dir"], cert_name="egm-host", bind="127.0.0.1:0")
        pin = _spki_pin(paths["host_cert"])
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM),
                                        args=[*ARGS_BASE, f"--ignore-certificate-errors-spki-list={pin}"])
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto(web.url + "login")
            page.fill("input[name=name]", "maria")
            page.fill("input[name=password]", "manager-pass-1")
            page.click("button[type=submit]")
            page.wait_for_url(web.url + "floor")
            page.screenshot(path=str(out / "floor-grid.png"))
            page.goto(web.url + "terminals/BJ-0101")
            page.wait_for_timeout(1500)
            page.set_viewport_size({"width": 1280, "height": 1100})
            page.screenshot(path=str(out / "floor-terminal.png"))
            browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images"))
