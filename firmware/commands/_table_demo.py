"""``egm table demo``'s machinery: a development PKI, the controller (in this process, its critical
memory in ``DIR/table``) and N player stations, each ``egm run --sim --headless --autoplay`` in its
own process with a configuration whose ``[table] controller`` points at the controller
(``DIR/station-k``), then the figures once R rounds are settled.

:class:`TableDemo` is also the fixture of the table's longer tests: :meth:`TableDemo.start_station`,
:meth:`kill_station` (SIGKILL: a power cut) and :meth:`restart_station` drive the stations one by
one, :meth:`restart_controller` cuts the controller's power (its connections end without a bye, its
ledger is closed wherever the round stood) and starts it again on the same port, where the stations
find it again.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import firmware
from firmware.config.schema import ONE_SEAT_OPTIONS, TableSection
from firmware.games.options import parse_assignments
from firmware.games.registry import make_options
from firmware.ledger.ledger import Ledger
from firmware.table.build import build_controller
from firmware.table.controller import TableController
from firmware.table.identity import ensure_table_pki
from firmware.table.phases import ENDED
from firmware.table.server import TableServer

log = logging.getLogger("egm.table.demo")
ROOT = Path(firmware.__file__).resolve().parents[1]
CONTROLLER = "egm-table"


class TableDemo:
    def __init__(self, root: Path, *, stations: int, game: str = "baccarat-war", seed: str | None = None,
                 betting_window_s: float = 3.0, source: str = "rng", stack: list[str] | None = None,
                 options: Sequence[str] = (), shoe: Any = None, card_wanted: Any = None) -> None:
        """``source`` ``physical``: ``shoe`` is the card-reading shoe's driver and ``card_wanted`` the
        dealer drawing each card (the simulated shoe's ``draw``), as ``egm table serve --sim``."""
        self.root = root
        self.names = [f"station-{k}" for k in range(1, stations + 1)]
        self.game = game
        self.seed = seed
        self.source = source
        self.stack = stack
        self.shoe = shoe
        self.card_wanted = card_wanted
        #: ``KEY=VALUE`` game options (``--option``) for the controller and every station alike;
        #: checked here (OptionError) before anything starts.
        self.options = list(options)
        self.option_tree = parse_assignments(self.options)
        make_options(game, self.option_tree)
        self.settings = TableSection(game=game, betting_window_s=betting_window_s, between_rounds_s=0.2,
                                     listen="127.0.0.1:0", link_timeout_s=5.0)
        self.pki = ensure_table_pki(root, CONTROLLER, self.names)
        self.ledger: Ledger | None = None
        self.controller: TableController | None = None
        self.server: TableServer | None = None
        self.address = ""
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    # --- the controller ------------------------------------------------------------------------
    def start_controller(self) -> TableController:
        self.ledger = Ledger.open(self.root / "table")
        settings = self.settings
        if self.address:                                   # a restart: the same port again
            settings = TableSection.model_validate({**settings.model_dump(), "listen": self.address})
        self.controller = build_controller(self.ledger, settings, source=self.source, stack=self.stack,
                                           seed=self.seed, options=self.option_tree, shoe=self.shoe)
        if self.card_wanted is not None:
            self.controller.cards.card_wanted = self.card_wanted
        self.server = TableServer(self.controller, self.pki, settings.listen)
        host, port = self.server.start()
        self.address = f"{host}:{port}"
        return self.controller

    def stop_controller(self, *, bye: bool = True) -> None:
        if self.server is not None:
            self.server.stop(bye=bye)
        if self.ledger is not None:
            self.ledger.close()
        self.server = self.controller = self.ledger = None

    def restart_controller(self) -> TableController:
        self.stop_controller(bye=False)
        return self.start_controller()

    # --- the stations --------------------------------------------------------------------------
    def station_dir(self, name: str) -> Path:
        return self.root / name

    def station_config(self, name: str) -> Path:
        seat = self.names.index(name) + 1
        path = self.station_dir(name) / "egm.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f'[terminal]\nid = "{name}"\n\n[host]\nenabled = false\npki = "{self.pki}"\n\n'
            f'[games]\ndefault = "{self.game}"\n\n'
            f'[table]\ncontroller = "{self.address}"\nseat = {seat}\npki = "{self.pki}"\n'
            f'controller_name = "{CONTROLLER}"\ngame = "{self.game}"\n' + self._options_toml(), encoding="utf-8")
        return path

    def _options_toml(self) -> str:
        """The ``--option`` pairs as the station's ``[games.options.GAME]``, over the built-in option
        tables (a table written replaces them all; dotted keys, the pairs' values as strings: the
        options' models read them as ``--option`` does)."""
        if not self.options:
            return ""
        tables = {game: dict(table) for game, table in ONE_SEAT_OPTIONS.items()}
        lines = []
        for game, table in tables.items():
            if game != self.game:
                lines += [f"\n[games.options.{game}]", *_dotted(table)]
        lines += [f"\n[games.options.{self.game}]", *_dotted(tables.get(self.game, {})),
                  *(f"{key.strip()} = {json.dumps(value.strip())}"
                    for key, _, value in (pair.partition("=") for pair in self.options))]
        return "\n".join(lines) + "\n"

    def start_station(self, name: str, autoplay: int = 1_000_000) -> subprocess.Popen[bytes]:
        config = self.station_config(name)
        log_file = (self.station_dir(name) / "run.log").open("ab")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               "SDL_VIDEODRIVER": "dummy"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--autoplay", str(autoplay),
             "--config", str(config), "--state-dir", str(self.station_dir(name))],
            stdout=log_file, stderr=subprocess.STDOUT, env=env, cwd=self.root)
        log_file.close()
        self.procs[name] = proc
        return proc

    def kill_station(self, name: str, sig: int = signal.SIGKILL) -> None:
        proc = self.procs.pop(name)
        proc.send_signal(sig)
        proc.wait(timeout=60)

    def restart_station(self, name: str) -> subprocess.Popen[bytes]:
        if name in self.procs:
            self.kill_station(name)
        return self.start_station(name)

    def stop_stations(self) -> None:
        for name in list(self.procs):
            self.kill_station(name, signal.SIGTERM)

    # --- a run ---------------------------------------------------------------------------------
    def wait_settled(self, rounds: int, timeout_s: float) -> bool:
        """Until ``rounds`` rounds are settled; then the table pauses (no new window) and the last
        results are acknowledged."""
        c = self.controller
        assert c is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with c.lock:
                if c.meters()["games_played"] >= rounds and c.phase in ENDED:
                    c.pause()
                    break
            time.sleep(0.05)
        else:
            return False
        while c.results and time.monotonic() < deadline:
            time.sleep(0.05)
        return not c.results

    def run(self, rounds: int, timeout_s: float = 600.0) -> dict[str, Any]:
        started = time.monotonic()
        self.start_controller()
        try:
            for name in self.names:
                self.start_station(name)
            ok = self.wait_settled(rounds, timeout_s)
            self.stop_stations()
            return self.report(ok, time.monotonic() - started)
        finally:
            self.stop_stations()
            self.stop_controller()

    def report(self, settled: bool, seconds: float) -> dict[str, Any]:
        c = self.controller
        assert c is not None
        stations = []
        for name in self.names:
            with Ledger.open(self.station_dir(name), read_only=True) as ledger:
                m, denom = ledger.meters, ledger.denom_cents
                stations.append({"station": name, "coin_in": m.get("coin_in", 0) // denom,
                                 "coin_out": m.get("coin_out", 0) // denom, "credits": ledger.credits})
        meters = c.meters()
        lat = sorted(c.latencies)
        identities = {
            "coin_in": sum(s["coin_in"] for s in stations) == meters["coin_in"],
            "coin_out": sum(s["coin_out"] for s in stations) == meters["coin_out"],
        }
        return {
            "ok": settled and all(identities.values()),
            "rounds": meters["games_played"], "game": self.game, "seconds": round(seconds, 1),
            "stations": stations, "controller": meters, "identities": identities,
            "latency_ms": {"samples": len(lat), "p50": _ms(_quantile(lat, 0.50)), "p99": _ms(_quantile(lat, 0.99))},
            "phase": c.phase.value,
        }


def _dotted(table: dict[str, Any], prefix: str = "") -> list[str]:
    """A nested option table as TOML lines with dotted keys (its values are TOML's as JSON writes
    them: booleans, numbers, strings)."""
    out: list[str] = []
    for key, value in table.items():
        if isinstance(value, dict):
            out += _dotted(value, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key} = {json.dumps(value)}")
    return out


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 2)


def print_report(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"{report['game']}: {report['rounds']} rounds in {report['seconds']} s")
    for column in ("", "coin in", "coin out", "credits", "pool commission"):
        table.add_column(column, justify="right" if column else "left")
    for s in report["stations"]:
        table.add_row(s["station"], str(s["coin_in"]), str(s["coin_out"]), str(s["credits"]), "")
    m = report["controller"]
    table.add_row("controller", str(m["coin_in"]), str(m["coin_out"]), "-", str(m["pool_commission"]))
    console.print(table)
    lat = report["latency_ms"]
    console.print(f"betting close -> first card at a station: p50 {lat['p50']} ms, p99 {lat['p99']} ms "
                  f"({lat['samples']} samples)")
    verdict = "hold" if all(report["identities"].values()) else "DO NOT hold"
    console.print(f"stations' coin in/out = controller's: {verdict}")
