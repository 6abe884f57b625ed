"""The power-fail soak harness (``tests/ledger/test_power_fail.py``, ``make soak``).

Each cycle starts ``egm run --sim --headless`` (the whole terminal: simulated devices, the embedded
broker and reference host) on one state directory, kills it with SIGKILL at a moment chosen by the
cycle's :data:`MODES`, and checks what the kill left. The modes:

* ``start-up``: anywhere in the first 1.8 s (imports, critical-memory verification and repair, the
  self-test, the settlement of what the last kill left open, the host link starting);
* ``play``: autoplay rounds, notes in and vouchers out, 0-0.3 s after the first round (when a
  voucher is printing then, sometimes just after the printer confirmed it: :meth:`Soak._let_printer_finish`);
* ``backlog``: while the host link sends the reports the earlier kills left unacknowledged (at a
  random point of the part the host has not stored yet);
* ``voucher``: no autoplay; a voucher the terminal printed earlier goes into the simulated
  validator (``simctl ticket``), so its redemption goes through the embedded host, and the kill
  lands at one of :data:`VOUCHER_PHASES` (in escrow before the request, the request recorded, the
  host's approval stored, ``redeem_pending`` recorded, the credit recorded, after it).

The checks read critical memory and the host's store in this process, incrementally: only the
records and messages that are new since the last look (:class:`CriticalMemory`,
:class:`HostView`), so a check costs the same at cycle 10,000 as at cycle 1. After every kill:

* the log is gap-free and every new record authentic (its HMAC chained to the one before);
* the accounting identity holds after every record, not just at the end;
* no round is lost (a round dealt while another is open) or paid twice (a round completed that is
  not the open one); games played equals rounds completed;
* every meters snapshot the terminal recorded equals the meters its own log adds up to there;
* only the repair a kill can cause is found at start-up (the mirror some records behind);
* every voucher is credited at most once;
* the host holds no report the terminal did not make, each as the terminal made it (the meters
  of every meters report equal the terminal's meters at that record), and nothing is outstanding
  longer than the backlog's drain time (:meth:`Soak._check_outstanding`).

In ``play`` and ``voucher`` cycles the harness first waits (at most :data:`DRAIN_LIMIT_S`) for the
backlog to drain: the host has stored every report up to this boot's hello and the one after it,
so everything the last kill left and what start-up settled. Then every voucher inserted before is either redeemed
(credited once, the host says redeemed by this terminal) or returned (not credited, the host has
it back as issued), never both.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from firmware.cabinet.control import ControlError, request
from firmware.config import load_config
from firmware.hostlink.outbox import HELLO_EVENT, REPORTED
from firmware.ledger import meters as M
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.ledger.store import GENESIS, PRIMARY_FILE, load_or_create_key, log_mac

#: cycle modes and their weights in the long soak
MODES = {"start-up": 20, "play": 40, "backlog": 20, "voucher": 20}
#: where a voucher cycle's kill lands
VOUCHER_PHASES = ("escrow", "request", "approved", "pending", "credit", "after")
#: printed vouchers not yet redeemed that the play cycles keep in stock for the voucher cycles
VOUCHER_STOCK = 3
#: the backlog must drain within this many seconds of the host link's start
DRAIN_LIMIT_S = 10.0
#: a report may be outstanding this long (or the backlog's drain time, if longer) once the link runs
OUTSTANDING_FLOOR_S = 1.0
#: the only repair a kill may cause: the mirror, written second, some records behind (and then, if
#: those records moved meters, its meters table behind them too)
MIRROR_BEHIND = re.compile(r"^ledger-mirror\.db: \d+ log record\(s\) behind \(")
MIRROR_METERS = "ledger-mirror.db: meters did not match the log, rewritten from it"
#: the soak's configuration: a cash-out every 3 rounds of a run, so vouchers are printed often enough
CONFIG = "[cabinet]\nautoplay_cashout_every = 3\n"


class SoakFailure(AssertionError):
    """A check failed: the message says which cycle and what differed."""


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


@dataclass(slots=True)
class Report:
    """A record the host link reports (numbered as the outbox numbers them)."""

    number: int
    seq: int
    kind: str
    ref: str | None
    time: float                               #: when it was recorded (epoch seconds)
    meters: dict[str, Any] | None = None      #: for a meters snapshot: the meters it must hold


class CriticalMemory:
    """Follows the terminal's critical memory record by record, read-only, from its primary copy.

    The primary is written first, so after a kill it holds every committed record; start-up only
    rolls the mirror forward to it. Each :meth:`read` takes the records after the last one seen,
    checks the chain and the invariants record by record, and folds them into the meters, the
    open round, the reports and the vouchers.
    """

    def __init__(self, state: Path) -> None:
        self.state = state
        self._key: bytes | None = None
        self.last_seq = 0
        self._prev_mac = GENESIS
        self.meters: dict[str, int] = {}
        self.open_round: str | None = None
        self.rounds_completed = 0
        self.last_number = 0                   #: the newest report's number
        self.reports: dict[int, Report] = {}   #: reports the host has not been seen to store
        self.hellos: list[int] = []            #: report numbers of the hellos (one per boot)
        self.printed: dict[str, int] = {}      #: validation -> cents of every voucher printed
        self.credited: Counter[str] = Counter()
        self.voucher_state: dict[str, str] = {}   #: validation -> its newest voucher record's state
        self.voucher_number: dict[str, int] = {}  #: validation -> its newest reported record's number
        self.refused: dict[str, int] = {}         #: validation -> the record that refused it last
        self.printing: str | None = None          #: a voucher issued, the printer's confirmation not recorded
        self.repairs: list[str] = []

    def read(self) -> int:
        """Take and check the records committed since the last call; how many there were."""
        path = self.state / PRIMARY_FILE
        if not path.exists():
            return 0
        if self._key is None:
            self._key = load_or_create_key(self.state, create=False)
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        try:
            rows = conn.execute("SELECT seq, kind, ref, time, body, mac FROM log WHERE seq > ? ORDER BY seq",
                                (self.last_seq,)).fetchall()
        finally:
            conn.close()
        for seq, kind, ref, stamp, body, mac in rows:
            self._take(seq, kind, ref, stamp, body, mac)
        if self.meters.get("games_played", 0) != self.rounds_completed:
            raise SoakFailure(f"games played {self.meters.get('games_played', 0)} but "
                              f"{self.rounds_completed} rounds completed")
        return len(rows)

    def _take(self, seq: int, kind: str, ref: str | None, stamp: str, text: str, mac: bytes) -> None:
        assert self._key is not None
        if seq != self.last_seq + 1:
            raise SoakFailure(f"critical memory: record {seq} follows {self.last_seq} (a gap)")
        if mac != log_mac(self._key, seq, kind, ref, stamp, text, self._prev_mac):
            raise SoakFailure(f"critical memory: record {seq} ({kind}) is not authentic")
        self.last_seq, self._prev_mac = seq, mac
        body = json.loads(text)
        M.apply(self.meters, M.deltas(kind, body))
        if (difference := accounting_difference(self.meters)) != 0:
            raise SoakFailure(f"accounting identity off by {difference} cents after record {seq} ({kind})")
        if kind.startswith("round."):
            self._round(seq, kind, ref)
        elif kind == "meters":
            expected = M.report(self.meters)
            if body["meters"] != expected or body["credits"] != self.meters.get("credits", 0):
                raise SoakFailure(f"meters snapshot {seq} differs from the log: {body['meters']} != {expected}")
        elif kind == "ticket_out":
            self.printed[ref] = body["cents"]
            self.printing = None
        elif kind == "ticket_in":
            self.credited[ref] += 1
            if self.credited[ref] > 1:
                raise SoakFailure(f"voucher {ref} credited {self.credited[ref]} times (record {seq})")
        elif kind == "voucher":
            self.voucher_state[ref] = body["state"]
            self.printing = ref if body["state"] == "issued" else None if ref == self.printing else self.printing
        elif kind == "event" and body.get("event") == "voucher_refused":
            self.refused[body["validation"]] = seq
        elif kind == "event" and body.get("event") == "critical_memory_repaired":
            self.repairs.extend(body["details"])
            behind = [d for d in body["details"] if MIRROR_BEHIND.match(d)]
            odd = [d for d in body["details"] if d not in behind and not (behind and d == MIRROR_METERS)]
            if odd:
                raise SoakFailure(f"start-up repaired more than the mirror's tail (record {seq}): {odd}")
        if kind in REPORTED:
            self.last_number += 1
            meters = M.report(self.meters) if kind == "meters" else None
            self.reports[self.last_number] = Report(self.last_number, seq, kind, ref, _epoch(stamp), meters)
            if kind == "event" and body.get("event") == HELLO_EVENT:
                self.hellos.append(self.last_number)
            if kind in ("voucher", "ticket_in"):
                self.voucher_number[ref] = self.last_number

    def _round(self, seq: int, kind: str, ref: str | None) -> None:
        if kind == "round.deal":
            if self.open_round is not None:
                raise SoakFailure(f"round {self.open_round} was lost: round {ref} dealt at record {seq}")
            self.open_round = ref
            return
        if ref != self.open_round:
            what = "paid twice" if kind == "round.complete" else "continued"
            raise SoakFailure(f"round {ref} {what} at record {seq} while the open round is {self.open_round}")
        if kind == "round.complete":
            self.open_round = None
            self.rounds_completed += 1


class HostView:
    """What the embedded host stored for the terminal, compared with what the terminal made."""

    def __init__(self, host_db: Path, terminal_id: str) -> None:
        self.host_db = host_db
        self.terminal_id = terminal_id
        self.stored = 0                    #: every report up to this number is stored at the host
        self._store: Any = None

    @property
    def store(self) -> Any:
        if self._store is None:
            from host.store import HostStore

            self._store = HostStore.open(str(self.host_db))
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def read(self, memory: CriticalMemory) -> None:
        """Advance over the reports the host stored in order, checking each against the terminal's."""
        if not self.host_db.exists():
            return
        while self.stored < memory.last_number:
            messages = self.store.messages(self.terminal_id, after=self.stored,
                                           limit=min(1000, memory.last_number - self.stored))
            for message in messages:
                if message["seq"] != self.stored + 1:
                    return                         # not stored yet (the hello goes first, alone)
                self._compare(message, memory.reports.pop(message["seq"]))
                self.stored += 1
            if len(messages) < 1000:
                return

    def _compare(self, message: dict[str, Any], report: Report) -> None:
        body = message["body"]
        if (message["type"] in ("meters", "round") or report.kind in ("meters", "round.complete")) \
                and message["type"] != REPORTED[report.kind]:
            raise SoakFailure(f"host report {report.number} is a {message['type']}, the terminal's "
                              f"record {report.seq} a {report.kind}")
        if report.meters is not None and body["meters"] != report.meters:
            raise SoakFailure(f"the host's meters (report {report.number}) differ from the terminal's "
                              f"at record {report.seq}: {body['meters']} != {report.meters}")
        if report.kind == "round.complete" and body["record"]["round_id"] != report.ref:
            raise SoakFailure(f"host report {report.number} is round {body['record']['round_id']}, "
                              f"the terminal's record {report.seq} round {report.ref}")

    def vouchers(self) -> dict[str, dict[str, Any]]:
        return {v["validation"]: v for v in self.store.vouchers(self.terminal_id)}


@dataclass
class Run:
    """One started terminal and what its output said."""

    proc: subprocess.Popen
    started: float
    idle: float | None = None              #: monotonic time of the "cabinet:" line (power-up done)
    link_up: float | None = None           #: monotonic time of the "host link:" line
    link_wall: float | None = None
    backlog: int | None = None             #: "reports outstanding" when the link started
    rounds: int = 0
    first_round: threading.Event = field(default_factory=threading.Event)
    reader: threading.Thread | None = None     #: the thread following its output
    linked: threading.Event = field(default_factory=threading.Event)

    def follow(self) -> None:
        assert self.proc.stdout is not None
        with self.proc.stdout:
            for line in self.proc.stdout:
                self._line(line)

    def _line(self, line: bytes) -> None:
        if line.startswith(b"  round "):
            self.rounds += 1
            self.first_round.set()
        elif line.startswith(b"cabinet: "):
            self.idle = time.monotonic()
        elif line.startswith(b"host link:"):
            self.link_up, self.link_wall = time.monotonic(), time.time()
            found = re.search(rb"reports outstanding: (\d+)", line)
            self.backlog = int(found.group(1)) if found else None
            self.linked.set()


class Soak:
    """``cycles`` kill/restart cycles on ``work``/soak; ``schedule`` fixes the modes (else drawn; a
    voucher cycle before any voucher is printed is a play cycle, and the voucher cycle comes later).

    :meth:`run` raises :class:`SoakFailure` when a check fails that leaves nothing sound to go on
    from (critical memory, the rounds, the backlog not draining); a voucher or an outstanding report
    found wrong is a *finding*, listed in the summary's ``findings`` while the soak goes on.
    """

    def __init__(self, work: Path, *, cycles: int, seed: int, schedule: list[str] | None = None,
                 log_every: int = 50, name: str = "soak", stop: threading.Event | None = None) -> None:
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.stop = stop or threading.Event()          #: set by another lane that failed: end early
        self.state = work / "soak"
        self.cycles = cycles
        self.rnd = random.Random(seed)
        self.schedule = schedule
        self.log_every = log_every
        self.config = work / "soak.toml"
        self.config.write_text(CONFIG)
        self.terminal_id = load_config(self.config).terminal.id
        self.memory = CriticalMemory(self.state)
        self.host = HostView(self.state / "host" / "host.db", self.terminal_id)
        self.stderr = work / "terminal.stderr"
        self.cycle = 0
        self.times: list[dict[str, Any]] = []
        self.kills: Counter[str] = Counter()
        self.phases: Counter[str] = Counter()          #: voucher kills by phase
        self.outcomes: Counter[str] = Counter()        #: voucher insertions: credited / returned
        self.inserted: set[str] = set()
        self._unverified: set[str] = set()             #: inserted, the host's state not checked since
        self.drains: list[float] = []
        self.backlogs: list[int] = []
        self.voucher_checks = 0
        self.findings: list[str] = []

    # --- the loop -------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        started = time.monotonic()
        owed: list[str] = []                       # voucher cycles due before a voucher was printed
        try:
            for cycle in range(1, self.cycles + 1):
                if self.stop.is_set():
                    raise SoakFailure("stopped: another lane failed")
                self.cycle = cycle
                mode = self.schedule[self.cycle - 1] if self.schedule else self._draw()
                if mode.startswith("voucher") and not self._available():
                    owed.append(mode)
                    mode = "play"
                elif owed and not mode.startswith("voucher") and self._available():
                    mode = owed.pop(0)
                self._one(mode)
                if self.cycle % self.log_every == 0 or self.cycle == self.cycles:
                    print(f"{self.name}: cycle {self.cycle}/{self.cycles}, {self.memory.rounds_completed} rounds, "
                          f"{len(self.inserted)} vouchers inserted, {time.monotonic() - started:.0f} s",
                          flush=True)
            self._final()
        except SoakFailure as exc:
            self.stop.set()
            raise SoakFailure(f"{self.name}, cycle {self.cycle}: {exc}") from None
        finally:
            self.host.close()
        return self.summary(time.monotonic() - started)

    def _draw(self) -> str:
        return self.rnd.choices(list(MODES), weights=list(MODES.values()))[0]

    def _available(self) -> list[str]:
        return [v for v in self.memory.printed if not self.memory.credited[v]]

    def _start(self, autoplay: bool) -> Run:
        cmd = [sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--config", str(self.config),
               "--state-dir", str(self.state)]
        if autoplay:
            cmd[5:5] = ["--autoplay", "1000000"]
        with self.stderr.open("wb") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=self._env())
        run = Run(proc, time.monotonic())
        run.reader = threading.Thread(target=run.follow, daemon=True)
        run.reader.start()
        return run

    def _env(self) -> dict[str, str]:
        """The terminal's environment: unbuffered output, and compiled bytecode kept (in the work
        folder) from one start to the next, as an installed cabinet keeps it, even where the
        developer's environment turns bytecode files off."""
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPYCACHEPREFIX": str(self.work / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        return env

    def _kill(self, run: Run) -> None:
        run.proc.send_signal(signal.SIGKILL)
        run.proc.wait(timeout=30)
        if run.proc.returncode != -signal.SIGKILL:
            raise SoakFailure(f"the terminal ended by itself ({run.proc.returncode}): {self._stderr_tail()}")
        if run.reader is not None:              # it closes the pipe at its end (closing it here, under
            run.reader.join(timeout=5.0)        # a read in progress, made the read fail)

    def _stderr_tail(self) -> str:
        return self.stderr.read_text(errors="replace")[-2000:]

    def _wait(self, event: threading.Event, run: Run, what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not event.wait(0.01):
            if run.proc.poll() is not None or time.monotonic() > deadline:
                raise SoakFailure(f"no {what} (exit {run.proc.poll()}): {self._stderr_tail()}")

    def _one(self, wanted: str) -> None:
        """One cycle; ``wanted`` is a mode of :data:`MODES`, or ``voucher:PHASE`` for one phase."""
        mode, _, phase_wanted = wanted.partition(":")
        t0 = time.monotonic()
        mark = self.memory.last_number
        run = self._start(autoplay=mode != "voucher")
        drain = None
        phase = None
        if mode == "start-up":
            time.sleep(self.rnd.uniform(0.0, 1.8))
        else:
            self._wait(run.linked, run, "host link")
            self.backlogs.append(run.backlog or 0)
            if mode == "backlog":
                self._backlog_kill_point(run)
            else:
                drain = self._drain(run, mark)
                if mode == "play":
                    self._wait(run.first_round, run, "round")
                    time.sleep(self.rnd.uniform(0.0, 0.3))
                    self._let_printer_finish()
                else:
                    phase = self._redeem(run, phase_wanted or self.rnd.choice(VOUCHER_PHASES))
        killed, killed_wall = time.monotonic(), time.time()
        self._kill(run)
        self.memory.read()
        self.host.read(self.memory)
        if drain is not None:
            self._check_outstanding(run, drain, killed_wall)
        self.kills[mode] += 1
        done = time.monotonic()
        self.times.append({"cycle": self.cycle, "mode": mode, "phase": phase, "total": done - t0,
                           "to_idle": None if run.idle is None else run.idle - t0,
                           "to_link": None if run.link_up is None else run.link_up - t0,
                           "drain": drain, "killed_at": killed - t0, "checks": done - killed,
                           "rounds": run.rounds})

    def _let_printer_finish(self) -> None:
        """When a voucher is printing at the kill, let the printer confirm it first (and kill 0-0.1 s
        later) if fewer than :data:`VOUCHER_STOCK` printed vouchers wait to be inserted (one time in
        five otherwise): nearly every cash-out would be killed mid-print and voided, and a voucher
        printed leaves no credits, so the next run waits a second for a note."""
        self.memory.read()
        if self.memory.printing is None or (len(self._available()) >= VOUCHER_STOCK and self.rnd.random() >= 0.2):
            return
        deadline = time.monotonic() + 5.0
        while self.memory.printing is not None and time.monotonic() < deadline:
            time.sleep(0.005)
            self.memory.read()
        time.sleep(self.rnd.uniform(0.0, 0.1))

    # --- the host link --------------------------------------------------------------------------
    def _follow(self) -> None:
        self.memory.read()
        self.host.read(self.memory)

    def _drain(self, run: Run, mark: int) -> float:
        """Wait until the host stored every report up to this boot's hello and the one after it; the
        drain time (from the link's start). Then check the vouchers inserted before.

        The hello goes first and alone, then the backlog in order, then what this boot made; the
        host handles one message at a time (stores it, acts on it, acknowledges it). So once the
        report after the hello is stored, every report before it was stored *and acted on*."""
        assert run.link_up is not None
        while True:
            self._follow()
            hello = next((n for n in self.memory.hellos if n > mark), None)
            if hello is not None and self.host.stored > hello:
                break
            if time.monotonic() - run.link_up > DRAIN_LIMIT_S or run.proc.poll() is not None:
                raise SoakFailure(f"the backlog did not drain in {DRAIN_LIMIT_S:g} s: the host stored "
                                  f"reports 1..{self.host.stored}, the terminal made {self.memory.last_number} "
                                  f"(this boot's hello: {hello}); {self.host.store.sequence(self.terminal_id)}")
            time.sleep(0.005)
        drain = time.monotonic() - run.link_up
        self.drains.append(drain)
        self._check_vouchers()
        return drain

    def _backlog_kill_point(self, run: Run) -> None:
        """Return when the host has stored part of what is outstanding (a random point of it), or
        soon after the link starts when nothing is."""
        self._follow()
        if self.memory.last_number <= self.host.stored + 1:
            time.sleep(self.rnd.uniform(0.0, 0.2))
            return
        target = self.rnd.randint(self.host.stored + 1, self.memory.last_number - 1)
        deadline = time.monotonic() + DRAIN_LIMIT_S
        while self.host.stored < target and time.monotonic() < deadline:
            time.sleep(0.002)
            self._follow()
        if self.host.stored < target:
            raise SoakFailure(f"the host stored reports up to {self.host.stored} only; {target} "
                              f"expected within {DRAIN_LIMIT_S:g} s")

    def _check_outstanding(self, run: Run, drain: float, killed_wall: float) -> None:
        """Nothing outstanding at the kill that is older than the drain time (at least
        :data:`OUTSTANDING_FLOOR_S`), counted from its record or the link's start, the later."""
        assert run.link_wall is not None
        bound = max(drain, OUTSTANDING_FLOOR_S)
        for report in self.memory.reports.values():
            waited = killed_wall - max(report.time, run.link_wall)
            if waited > bound:
                self._finding(f"report {report.number} (record {report.seq}, {report.kind}) was "
                                  f"outstanding {waited:.2f} s at the kill, the drain took {drain:.2f} s")
                break

    # --- vouchers -------------------------------------------------------------------------------
    def _redeem(self, run: Run, phase: str) -> str:
        """Insert a printed voucher and return at ``phase`` of its redemption."""
        validation = self.rnd.choice(self._available())
        self.inserted.add(validation)
        self._unverified.add(validation)
        deadline = time.monotonic() + 10.0
        while True:
            with contextlib.suppress(ControlError):
                if request(self.state, "sim", {"words": ["ticket", validation]}, timeout=5.0).get("inserted"):
                    break
            if time.monotonic() > deadline:
                raise SoakFailure(f"the validator did not take voucher {validation}: {request(self.state, 'status')}")
            time.sleep(0.01)
        self.phases[phase] += 1
        if phase == "escrow":
            time.sleep(self.rnd.uniform(0.0, 0.45))
            return phase
        reached = {"request": lambda: self.memory.voucher_state.get(validation) == "host_request",
                   "approved": lambda: self._host_state(validation) == "authorised",
                   "pending": lambda: self.memory.voucher_state.get(validation) == "redeem_pending",
                   "credit": lambda: self.memory.credited[validation] > 0,
                   "after": lambda: self.memory.credited[validation] > 0}[phase]
        deadline = time.monotonic() + 5.0
        start = self.memory.last_seq
        while time.monotonic() < deadline:
            self.memory.read()
            if reached():
                break
            if self._refused_since(start, validation):
                self.phases[f"{phase} (refused)"] += 1
                return f"{phase} (refused)"
            time.sleep(0.002)
        else:
            raise SoakFailure(f"voucher {validation}: phase {phase} not reached in 5 s "
                              f"(its last record: {self.memory.voucher_state.get(validation)})")
        if phase == "after":
            time.sleep(self.rnd.uniform(0.0, 0.2))
        return phase

    def _host_state(self, validation: str) -> str | None:
        if not self.host.host_db.exists():
            return None
        return self.host.vouchers().get(validation, {}).get("state")

    def _refused_since(self, seq: int, validation: str) -> bool:
        return self.memory.refused.get(validation, 0) > seq

    def _check_vouchers(self, *, final: bool = False) -> None:
        """Every voucher inserted, once the host stored a report after its last record: redeemed (credited once,
        the host says redeemed here) or returned (not credited, the host has it as issued). The host
        acts on a report just after storing it, so a state that differs is looked at again for up
        to a second before it is a failure. After the ``final`` clean stop nothing more will come:
        a voucher whose last record is the last report is due too (a redemption abandoned as the
        last run stopped is the last record there is)."""
        due = [v for v in self._unverified
               if self.memory.voucher_number.get(v, 0) < self.host.stored + (1 if final else 0)]
        deadline = time.monotonic() + 1.0
        while due:
            host = self.host.vouchers()
            wrong = [(v, got, want) for v in due
                     if (got := self._voucher_at_host(host, v)) != (want := self._voucher_expected(v))]
            if not wrong:
                break
            if time.monotonic() > deadline:
                for validation, got, want in wrong:
                    self._finding(
                        f"voucher {validation} ({'credited' if self.memory.credited[validation] else 'not credited'}"
                        f" by the terminal, its last record {self.memory.voucher_state.get(validation)}, report "
                        f"{self.memory.voucher_number.get(validation)}, stored at the host): the host has "
                        f"(state, held by, redeemed by) = {got}, expected {want}")
                break
            time.sleep(0.02)
        for validation in due:
            self._unverified.discard(validation)
            self.outcomes["credited" if self.memory.credited[validation] else "returned"] += 1
            self.voucher_checks += 1

    def _finding(self, what: str) -> None:
        """A failed check that leaves the harness's own view intact: recorded with its cycle, the
        soak goes on (so one run finds them all) and fails at the end."""
        self.findings.append(f"{self.name}, cycle {self.cycle} ({self.times[-1]['mode'] if self.times else '-'} before): {what}")
        print(f"FINDING {self.findings[-1]}", flush=True)

    @staticmethod
    def _voucher_at_host(host: dict[str, dict[str, Any]], validation: str) -> tuple[Any, Any, Any]:
        held = host.get(validation, {})
        return held.get("state"), held.get("held_by"), held.get("redeemed_by")

    def _voucher_expected(self, validation: str) -> tuple[Any, Any, Any]:
        return ("redeemed", None, self.terminal_id) if self.memory.credited[validation] else ("issued", None, None)

    # --- the end --------------------------------------------------------------------------------
    def _final(self) -> None:
        """A clean start finishes what the last kill left, plays a round and stops (delivering the
        outbox); then the host holds every report, its newest meters are the terminal's, and a
        full verification of critical memory agrees with the incremental one."""
        cmd = [sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--autoplay", "1",
               "--config", str(self.config), "--state-dir", str(self.state)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=self._env())
        if proc.returncode != 0:
            raise SoakFailure(f"the last clean start failed: {proc.stderr[-2000:]}")
        self._follow()
        if self.host.stored != self.memory.last_number:
            raise SoakFailure(f"after a clean stop the host stored reports 1..{self.host.stored} of "
                              f"{self.memory.last_number}")
        self._check_vouchers(final=True)
        if self._unverified:
            raise SoakFailure("vouchers not checked at the host: " + ", ".join(
                f"{v} (its last record {self.memory.voucher_state.get(v)}, report "
                f"{self.memory.voucher_number.get(v)}; the host stored 1..{self.host.stored})"
                for v in sorted(self._unverified)))
        with Ledger.open(self.state, read_only=True) as ledger:
            report = ledger.meters_report()
            if ledger.open_round is not None or accounting_difference(ledger.meters) != 0:
                raise SoakFailure("after the clean start a round is open or the identity is off")
            if report["meters"] != M.report(self.memory.meters) or ledger.rows != self.memory.last_seq:
                raise SoakFailure("the full verification disagrees with the incremental checks")
        host_meters = self.host.store.meters(self.terminal_id)[self.terminal_id]
        if host_meters["meters"] != report["meters"] or host_meters["credits"] != report["credits"]:
            raise SoakFailure(f"the host's meters {host_meters} are not the terminal's {report}")

    def summary(self, wall: float) -> dict[str, Any]:
        return summarise([self], wall)


def _stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {"median": round(statistics.median(ordered), 3),
            "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
            "mean": round(statistics.fmean(ordered), 3)}


def summarise(soaks: list[Soak], wall: float) -> dict[str, Any]:
    """The figures of one soak, or of several lanes run side by side (``wall``: the whole run's)."""
    times = [t for soak in soaks for t in soak.times]
    totals = [t["total"] for t in times]
    first = [t["total"] for soak in soaks for t in soak.times[:50]]
    last = [t["total"] for soak in soaks for t in soak.times[-50:]]

    def total(counter: str) -> dict[str, int]:
        return dict(sum((getattr(soak, counter) for soak in soaks), Counter()))

    return {
        "lanes": len(soaks), "cycles": len(times), "wall_s": round(wall, 1),
        "wall_per_cycle_s": round(wall / len(times), 3) if times else None,
        "per_cycle": _stats(totals), "first_50": _stats(first), "last_50": _stats(last),
        "by_mode": {m: _stats([t["total"] for t in times if t["mode"] == m]) for m in MODES},
        "to_idle": _stats([t["to_idle"] for t in times if t["to_idle"] is not None]),
        "to_link": _stats([t["to_link"] for t in times if t["to_link"] is not None]),
        "checks": _stats([t["checks"] for t in times]),
        "drain": _stats([d for soak in soaks for d in soak.drains]),
        "backlog_at_link_start": _stats([float(b) for soak in soaks for b in soak.backlogs]),
        "kills": total("kills"), "voucher_phases": total("phases"), "voucher_outcomes": total("outcomes"),
        "vouchers_inserted": sum(len(soak.inserted) for soak in soaks),
        "vouchers_printed": sum(len(soak.memory.printed) for soak in soaks),
        "rounds_completed": sum(soak.memory.rounds_completed for soak in soaks),
        "records": sum(soak.memory.last_seq for soak in soaks),
        "reports": sum(soak.memory.last_number for soak in soaks),
        "repairs_at_start_up": sum(len(soak.memory.repairs) for soak in soaks),
        "findings": [f for soak in soaks for f in soak.findings],
    }


def soak_in_lanes(work: Path, *, cycles: int, lanes: int, seed: int) -> tuple[list[Soak], dict[str, Any]]:
    """``cycles`` cycles over ``lanes`` terminals soaked side by side, each its own state
    directory, embedded host and seed (a machine with more cores than one terminal start uses
    finishes sooner); the first lane to fail stops the others, and its failure is raised."""
    from concurrent.futures import ThreadPoolExecutor

    stop = threading.Event()
    share = [cycles // lanes + (1 if i < cycles % lanes else 0) for i in range(lanes)]
    soaks = [Soak(work / f"lane{i + 1}", cycles=n, seed=seed + i, name=f"lane {i + 1}", stop=stop)
             for i, n in enumerate(share) if n]
    started = time.monotonic()
    with ThreadPoolExecutor(len(soaks)) as pool:
        futures = [pool.submit(soak.run) for soak in soaks]
        errors = [f.exception() for f in futures]
    failures = [e for e in errors if e is not None and "another lane failed" not in str(e)]
    if failures:
        raise failures[0]
    return soaks, summarise(soaks, time.monotonic() - started)
