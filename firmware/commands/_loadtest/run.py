"""The orchestration of ``egm host loadtest`` (docs/loadtest.md): a throwaway state directory, the
PKI, the broker, the host workers, the simulator processes; then the run, the host commands, the
drain and the check."""

from __future__ import annotations

import contextlib
import os
import platform
import random
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from firmware.commands._loadtest import check as checks
from firmware.commands._loadtest.faults import Faults, FaultTargets, kill
from firmware.commands._loadtest.floor_pki import host_tls, make_pki, terminal_ids
from firmware.commands._loadtest.procs import (
    LoadTestError,
    Proc,
    cpu_seconds,
    machine_busy_seconds,
    start_broker,
    start_host,
    start_worker,
    tree_cpu_seconds,
)
from firmware.errors import UsageError

#: terminals in one simulator process at most (docs/loadtest.md, "Simulator processes")
PER_PROCESS = 60
#: a run whose terminals made fewer reports than this share of terminals x rate x duration failed
#: to offer the load asked for (a problem)
SHORTFALL = 0.95


def default_processes(terminals: int) -> int:
    """A few processes, and enough that none holds more than :data:`PER_PROCESS` terminals."""
    return max(min(4, terminals), -(-terminals // PER_PROCESS))


#: the host commands a few terminals get during the run: (fraction of the duration, command)
COMMAND_PLAN = ((0.3, "disable"), (0.5, "send_meters"), (0.7, "enable"))


@dataclass
class Settings:
    terminals: int
    rate: float
    duration: float
    processes: int
    threads: int = 2
    workers: int = 1
    broker: str = "embedded"
    db: str | None = None
    seed: int = 1
    drain_s: float = 60.0
    commanded: int | None = None
    cluster: bool = False
    postgres_local: bool = False
    keep: Path | None = None
    drop_stored: int = 0
    meter_interval_s: float = 60.0
    faults: bool = False

    def check(self) -> None:
        if self.terminals < 1 or self.terminals > 99_999:
            raise UsageError(f"--terminals is 1..99999, not {self.terminals}")
        if not 0 < self.rate <= 100:
            raise UsageError(f"--rate is reports per second per terminal, 0 < R <= 100, not {self.rate}")
        if not 0 < self.duration <= 86_400:
            raise UsageError(f"--duration is 0 < S <= 86400 seconds, not {self.duration}")
        if not 1 <= self.processes <= self.terminals:
            raise UsageError(f"--processes is 1..{self.terminals} (the terminals), not {self.processes}")
        if -(-self.terminals // self.processes) > PER_PROCESS:
            raise UsageError(f"--processes {self.processes} puts more than {PER_PROCESS} terminals in a process: "
                             "each terminal holds about 12 file descriptors (its critical memory 7, its MQTT "
                             "client 3) and paho waits with select(), which takes none above 1023 "
                             f"(at least --processes {default_processes(self.terminals)})")
        if not 1 <= self.threads <= 64:
            raise UsageError(f"--threads is 1..64 per process, not {self.threads}")
        if self.workers < 1:
            raise UsageError(f"--workers is at least 1, not {self.workers}")
        if self.faults and not (self.cluster and self.postgres_local):
            raise UsageError("--faults kills a broker node and pauses PostgreSQL: it needs --cluster and "
                             "--postgres-local (the run's own servers)")
        if self.workers > 1 and not self.cluster:
            raise UsageError("--workers K > 1 needs a broker that shares the host's subscription among "
                             "its workers (--cluster); the embedded broker gives every host all the traffic")


@dataclass
class Run:
    """What the run started (stopped in reverse order) and what it saw."""

    settings: Settings
    state: Path
    procs: list[Proc] = field(default_factory=list)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    progress: dict[str, dict[str, Any]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    queued: dict[str, list[str]] = field(default_factory=dict)
    cluster: Any = None
    postgres: Any = None
    cpu_gone: dict[str, float] = field(default_factory=dict)
    faults: Any = None


def _listen(proc: Proc, run: Run, ready: threading.Event) -> None:
    import json

    while line := proc.line():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if doc.get("event") == "ready":
            run.progress[proc.role] = {"made": 0, "outstanding": 0, **doc}
            ready.set()
        elif doc.get("event") == "progress":
            run.progress[proc.role] = doc
        elif doc.get("event") == "result":
            run.results[proc.role] = doc


def state_root() -> Path:
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())


def execute(s: Settings, show: Callable[[Run, str, float], None]) -> dict[str, Any]:
    """Run the load test; the JSON document (``show(run, phase, fraction)`` follows it)."""
    s.check()

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)           # stopped like Ctrl-C: the children too
    state = Path(tempfile.mkdtemp(prefix="egm-loadtest-", dir=state_root()))
    run = Run(s, state)
    try:
        with contextlib.ExitStack() as stack:
            return _execute(run, stack, show)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):      # a second Ctrl-C must not orphan them
            signal.signal(sig, signal.SIG_IGN)
        for proc in reversed(run.procs):
            proc.stop()
        if s.keep is None:
            shutil.rmtree(state, ignore_errors=True)
        else:
            shutil.copytree(state, s.keep, dirs_exist_ok=True, symlinks=True)
            shutil.rmtree(state, ignore_errors=True)


def _execute(run: Run, stack: contextlib.ExitStack, show: Callable[[Run, str, float], None]) -> dict[str, Any]:
    s, state = run.settings, run.state
    logs = stack.enter_context(open(state / "processes.log", "a"))  # noqa: SIM115 - closed by the stack
    ids = terminal_ids(s.terminals)
    show(run, "certificates", 0.0)
    pki, run.timings["pki_s"] = make_pki(state, ids)
    broker_urls, hosts_broker, host_extra, db = _infrastructure(run, stack, pki, logs)

    def host_up(k: int) -> None:
        proc = start_host(k, state / "host", pki, hosts_broker, db, host_extra, logs)
        old = [i for i, p in enumerate(run.procs) if p.role == proc.role]
        if old:
            run.procs[old[0]] = proc
        else:
            run.procs.append(proc)

    def host_kill(k: int) -> None:
        proc = next(p for p in run.procs if p.role == f"host-{k}")
        kill(proc)
        run.cpu_gone[proc.role] = run.cpu_gone.get(proc.role, 0.0) + (proc.cpu_s or 0.0)

    for k in range(s.workers):
        host_up(k)
    show(run, "terminals", 0.0)
    ready = threading.Event()
    began = time.monotonic()
    sims = []
    for p in range(s.processes):
        mine = list(range(p, s.terminals, s.processes))
        spec = {"terminals": [ids[i] for i in mine], "indexes": mine, "state_dir": str(state / "terminals"),
                "pki": str(pki), "broker": broker_urls[p % len(broker_urls)], "rate": s.rate, "seed": s.seed,
                "threads": s.threads, "drain_s": s.drain_s, "meter_interval_s": s.meter_interval_s,
                "connect_s": 120.0 + 0.3 * s.terminals}
        proc = start_worker(p, spec, state / f"sim-{p}.json", logs)
        run.procs.append(proc)
        sims.append(proc)
        threading.Thread(target=_listen, args=(proc, run, ready), daemon=True).start()
    while len(run.progress) < len(sims):
        if any(p.popen.poll() is not None for p in sims):
            raise LoadTestError(f"a simulator process stopped while starting (see {logs.name})")
        show(run, "connecting", len(run.progress) / len(sims))
        time.sleep(0.1)
    run.timings["connect_s"] = round(time.monotonic() - began, 2)
    opened = sum(run.progress[p.role]["opened"] for p in sims)
    if opened < s.terminals:
        raise LoadTestError(f"only {opened} of {s.terminals} terminals opened their session with the host")
    plan = _command_plan(s, ids)
    store = _store(db)
    stack.callback(store.close)
    go = datetime.now(UTC)
    t0 = time.monotonic()
    for proc in sims:
        proc.tell("go")
    cpu_start = {}
    for proc in run.procs:
        proc.sample()
        cpu_start[proc.role] = proc.cpu_s
    infra_start = _infra_cpu(run)
    machine_start = machine_busy_seconds()
    if s.faults:
        run.faults = Faults(FaultTargets(run.cluster, run.postgres, host_kill, host_up,
                                         worker=s.workers - 1), s.duration).start(t0)
        stack.callback(run.faults.stop)
    while (elapsed := time.monotonic() - t0) < s.duration:
        while plan and plan[0][0] <= elapsed:
            _, terminal, command = plan.pop(0)
            store.queue_command(terminal, command, {"reason": "load test"} if command == "disable" else {})
            run.queued.setdefault(terminal, []).append(command)
        show(run, "running", elapsed / s.duration)
        time.sleep(min(0.5, s.duration - elapsed) if s.duration > elapsed else 0)
    if run.faults is not None:
        run.faults.join()
    stop = datetime.now(UTC)
    for proc in sims:
        proc.tell("stop")
    drain_began = time.monotonic()
    while len(run.results) < len(sims):
        if all(p.popen.poll() is not None for p in sims) and len(run.results) < len(sims):
            time.sleep(0.5)
            if len(run.results) < len(sims):
                raise LoadTestError(f"a simulator process died before reporting (see {logs.name})")
        show(run, "draining", min(1.0, (time.monotonic() - drain_began) / max(s.drain_s, 1)))
        time.sleep(0.2)
    run.timings["drain_s"] = round(time.monotonic() - drain_began, 2)
    cpu = {}
    for proc in run.procs:
        proc.sample()
        before = cpu_start.get(proc.role)
        if proc.cpu_s is not None and before is not None:
            if proc.role in run.cpu_gone:             # killed and started again: both lives
                cpu[proc.role] = round(run.cpu_gone[proc.role] - before + proc.cpu_s, 1)
            else:
                cpu[proc.role] = round(proc.cpu_s - before, 1)
    for role, now in _infra_cpu(run).items():          # a node killed in a fault run: its first life only
        if role in infra_start and now >= infra_start[role]:
            cpu[role] = round(now - infra_start[role], 1)
    busy, total = machine_busy_seconds()
    if total > machine_start[1]:
        cpu["machine_busy"] = round(busy - machine_start[0], 1)
        cpu["machine_available"] = round(total - machine_start[1], 1)
    time.sleep(1.0)                                   # the host stores what the last acks followed
    summaries = [t for r in run.results.values() for t in r["terminals"]]
    engine = checks.engine_for(db)
    stack.callback(engine.dispose)
    dropped = checks.drop_stored(engine, s.drop_stored) if s.drop_stored else 0
    verdict = checks.check(engine, summaries, run.queued, (go, stop))
    run.timings["stored_after_stop_s"] = checks.last_stored_after(engine, stop)
    show(run, "checked", 1.0)
    return _document(run, verdict, summaries, cpu, dropped, (stop - go).total_seconds())


def _infra_cpu(run: Run) -> dict[str, float]:
    """CPU seconds so far of the broker nodes and of PostgreSQL (its backends too), where the run
    started them."""
    found: dict[str, float] = {}
    if run.cluster is not None:
        for node in run.cluster.nodes:
            if node.proc is not None and (cpu := cpu_seconds(node.proc.pid)) is not None:
                found[f"nats-{node.name}"] = cpu
    pg_pid = None if run.postgres is None else run.postgres.pid
    if pg_pid is not None and (cpu := tree_cpu_seconds(pg_pid)) is not None:
        found["postgres"] = cpu
    return found


def _infrastructure(run: Run, stack: contextlib.ExitStack, pki: Path,
                    logs: Any) -> tuple[list[str], str, list[str], str]:
    """The brokers' URLs (the simulator processes spread over them), the host workers' ``--broker``,
    their extra options, the database URL."""
    s, state = run.settings, run.state
    extra: list[str] = []
    if s.cluster:
        from host.jetstream_intake import prepare_stream
        from host.local.nats import NatsCluster
        cluster = NatsCluster(state / "nats", pki).start()
        stack.callback(cluster.stop)
        run.cluster = cluster
        began = time.monotonic()                    # the stream takes messages in before anyone publishes
        prepare_stream(cluster.nats_urls, host_tls(pki))
        run.timings["stream_ready_s"] = round(time.monotonic() - began, 2)
        urls = list(cluster.mqtt_urls)              # each simulator process on one node
        extra = ["--jetstream", ",".join(cluster.nats_urls)]   # the host workers: NATS, every node
    elif s.broker == "embedded":
        broker, url = start_broker(pki, logs)
        run.procs.append(broker)
        urls = [url]
    else:
        urls = [s.broker]
    hosts_broker = "" if s.cluster else urls[0]
    db = s.db
    if s.postgres_local:
        from host.local.postgres import LocalPostgres
        pg = LocalPostgres().start()
        stack.callback(pg.stop)
        run.postgres = pg
        db = pg.create_database("egm_loadtest")
    if db is None:
        (state / "host").mkdir(parents=True, exist_ok=True)
        db = f"sqlite:///{state / 'host' / 'host.db'}"
    return urls, hosts_broker, extra, db


def _store(db: str) -> Any:
    from host.store import HostStore

    return HostStore.open(db)


def _command_plan(s: Settings, ids: list[str]) -> list[tuple[float, str, str]]:
    """(second, terminal, command) for a few terminals, in time order."""
    count = s.commanded if s.commanded is not None else max(1, min(10, s.terminals // 20))
    chosen = random.Random(s.seed).sample(ids, min(count, len(ids)))
    return sorted((at * s.duration, terminal, command) for terminal in chosen for at, command in COMMAND_PLAN)


def _document(run: Run, verdict: dict[str, Any], summaries: list[dict[str, Any]], cpu: dict[str, float],
              dropped: int, seconds: float) -> dict[str, Any]:
    s = run.settings
    actions: dict[str, int] = {}
    for t in summaries:
        for name, n in t["actions"].items():
            actions[name] = actions.get(name, 0) + n
    made = sum(t["made"] for t in summaries)
    problems = list(verdict["problems"])
    outstanding = sum(t["outstanding"] for t in summaries)
    refused = sum(t["link"]["rejected"] for t in summaries)
    replays = sum(t["link"].get("rejected_replay", 0) for t in summaries)
    # several workers number their messages from one sequence but send them independently: one may
    # overtake another's on the way and the older is refused as a replay, then sent again
    # (docs/protocols/host-session.md section 7); any other refusal is a fault
    tolerated = replays if s.workers > 1 else 0
    if outstanding:
        problems.append(f"{outstanding} reports never acknowledged to their terminal after the drain")
    asked = s.terminals * s.rate * seconds
    if made < SHORTFALL * asked:
        problems.append(f"the simulated terminals made {made} reports, {made / max(asked, 1e-9):.0%} of the "
                        f"{asked:.0f} asked for: the machine could not generate the load (they run at lower "
                        "priority than the host, the broker and the database)")
    if refused - tolerated:
        problems.append(f"the terminals refused {refused - tolerated} messages from the host (their "
                        "host.rejected events say why)")
    faults: dict[str, Any] | None = None
    if run.faults is not None:
        faults = {"timeline": run.faults.timeline, "errors": run.faults.errors}
        problems += [f"fault: {e}" for e in run.faults.errors]
    loops = list(run.results.values())
    return {
        "terminals": s.terminals, **{k: verdict[k] for k in ("sent", "stored", "lost", "duplicates")},
        "reports_per_second": verdict["reports_per_second"], "p50_ms": verdict["p50_ms"],
        "p99_ms": verdict["p99_ms"], "ok": not problems,
        "made_during_run": made, "offered_per_second": round(made / max(seconds, 1e-9), 1),
        "latency": {k: verdict[k] for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms", "latency_from")},
        "kinds": verdict["kinds"], "events": verdict["events"], "actions": actions,
        "vouchers": {**verdict["vouchers"], "refused_as_spent": actions.get("redeem_refused_spent", 0),
                     "approved_twice": actions.get("redeemed_twice", 0)},
        "commands": verdict["commands"], "meters_mismatch": verdict["meters_mismatch"],
        "unexpected": verdict["unexpected"], "dropped_on_purpose": dropped,
        "resends": sum(t["link"]["resent"] for t in summaries),
        "rejected_by_terminals": refused, "rejected_as_replay": replays, "left_outstanding": outstanding,
        "latency_timeline": verdict["timeline"], "faults": faults,
        "simulator_errors": sum(r["errors"] for r in loops),
        "simulator_loop_ms_p99": max((r["loop_ms_p99"] for r in loops), default=None),
        "problems": problems,
        "timings": {**run.timings, "run_s": round(seconds, 2)}, "cpu_s": cpu,
        "configuration": {"rate": s.rate, "duration": s.duration, "processes": s.processes, "threads": s.threads,
                          "workers": s.workers, "broker": "cluster" if s.cluster else s.broker,
                          "db": "postgres-local" if s.postgres_local else ("sqlite" if s.db is None else "url"),
                          "seed": s.seed, "drain_s": s.drain_s, "faults": s.faults},
        "machine": {"cpus": os.cpu_count(), "load_avg": [round(x, 2) for x in os.getloadavg()],
                    "python": platform.python_version(), "platform": platform.platform()},
    }
