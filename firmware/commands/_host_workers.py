"""``egm host serve --workers N``: N host worker processes on one PostgreSQL database.

The parent checks what the workers need, starts N processes of the same ``egm host serve`` (each
with ``--worker K``: its own MQTT client id, the shared subscription ``$share/egm-host/...``, its
own ``HostServer`` and connection pool on the same ``--db``), restarts a worker that dies (after
:data:`RESTART_DELAY_S`), and stops them all on SIGINT/SIGTERM. What keeps N workers correct on one
database (each report stored once, each voucher approved once, host numbers rising across
workers, the terminal's current key) is in the database, not here: docs/host-store.md.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import subprocess
import sys
import threading
import time

from firmware.errors import UsageError

log = logging.getLogger("egm.host.workers")

RESTART_DELAY_S = 1.0
STOP_TIMEOUT_S = 15.0


def check(args: argparse.Namespace) -> None:
    """A :class:`UsageError` saying why ``--workers`` cannot run as asked."""
    if args.listen is not None:
        raise UsageError("--workers needs a broker with MQTT shared subscriptions ($share/...): the embedded "
                         "broker (amqtt) has none, so every worker would get every report; run Mosquitto "
                         "(deploy/mosquitto/) and give --broker, or use the JetStream source")
    if not args.broker and not args.jetstream:
        raise UsageError("--workers needs --broker URL (a broker with shared subscriptions, e.g. Mosquitto) "
                         "or --jetstream URLs (the floor broker cluster)")
    if not (args.db or "").startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        raise UsageError("--workers needs --db postgresql://...: the workers share one PostgreSQL database "
                         "(its sequence numbers the host's messages across workers; SQLite is one process)")
    if not args.packages_bind.endswith(":0"):
        raise UsageError("--workers: --packages-bind must use port 0 (each worker serves the packages on a "
                         "port of its own)")


def child_argv(args: argparse.Namespace, worker: int) -> list[str]:
    """The command line of worker ``worker``: this serve without ``--workers``."""
    argv = [sys.executable, "-m", "firmware.cli", "--log-level", args.log_level, "host", "serve",
            "--state-dir", str(args.state_dir), "--db", args.db,
            "--name", args.name, "--kem-name", args.kem_name, "--packages-bind", args.packages_bind,
            "--worker", str(worker)]
    if args.broker:
        argv += ["--broker", args.broker]
    if args.pki:
        argv += ["--pki", str(args.pki)]
    if args.plain:
        argv.append("--plain")
    if args.packages_public_host:
        argv += ["--packages-public-host", args.packages_public_host]
    if args.jetstream:                  # the workers are one consumer group of the floor cluster's stream
        argv += ["--jetstream", args.jetstream]
    if args.web and worker == 0:        # one floor page (it reads the shared database)
        argv += ["--web", args.web]
        if args.web_cert:
            argv += ["--web-cert", args.web_cert]
        if args.web_offline_after:
            argv += ["--web-offline-after", str(args.web_offline_after)]
    return argv


def supervise(args: argparse.Namespace) -> int:
    """Run ``args.workers`` workers until SIGINT/SIGTERM; 0."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):
            signal.signal(sig, lambda *_: stop.set())
    procs: dict[int, subprocess.Popen[bytes]] = {}
    restarts = 0
    try:
        for k in range(args.workers):
            procs[k] = subprocess.Popen(child_argv(args, k))
        sys.stdout.write(f"egm host: {args.workers} workers on {args.broker}; store {args.db}; pids "
                         f"{' '.join(str(p.pid) for p in procs.values())}\n")
        sys.stdout.flush()
        while not stop.wait(0.2):
            for k, p in list(procs.items()):
                if p.poll() is not None:
                    log.warning("host worker %d (pid %d) ended with %s; restarting it", k, p.pid, p.returncode)
                    time.sleep(RESTART_DELAY_S)
                    procs[k] = subprocess.Popen(child_argv(args, k))
                    restarts += 1
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for p in procs.values():
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    sys.stdout.write(f"egm host: {args.workers} workers stopped; {restarts} restarts\n")
    return 0
