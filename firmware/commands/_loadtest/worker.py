"""A simulator process: many :class:`SimTerminal` on a few threads (``python -m`` this module SPEC).

It talks to the orchestrator (``run.py``) in lines: it prints JSON lines on stdout (``ready`` once
every terminal's session is open, ``progress`` every second, ``result`` at the end) and reads words
on stdin (``go``: start making reports; ``stop``: stop making them, drain, report and exit).
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from egmproto.mqtt import BrokerAddress, MqttClient, TlsFiles
from egmproto.mqtt_loop import SharedLoop
from firmware.commands._loadtest.terminal import SimTerminal, VoucherPool

log = logging.getLogger("egm.loadtest.worker")

#: each thread polls every one of its terminals at least this often
SWEEP_S = 0.5
#: terminals of a thread opening their connection at once
CONNECTING = 3
#: the drain's last pass polls every terminal this often
LOOP_S = 0.02


def _client_factory(spec: dict[str, Any], terminal_id: str, loop: SharedLoop) -> Any:
    """Every terminal's MQTT client of the process on one network loop (``egmproto/mqtt_loop.py``)."""
    issued = Path(spec["pki"]) / "issued"
    tls = None
    if spec["broker"].startswith("mqtts://"):
        tls = TlsFiles(ca=Path(spec["pki"]) / "ca.cert.pem", cert=issued / f"{terminal_id}.cert.pem",
                       key=issued / f"{terminal_id}.key.pem")
    return functools.partial(MqttClient, address=BrokerAddress.parse(spec["broker"], tls), keepalive=60,
                             min_backoff=0.5, max_backoff=5.0, connect_timeout=20.0, loop=loop)


class Worker:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        pool = VoucherPool()
        state = Path(spec["state_dir"])
        #: one network loop for every terminal's MQTT client (its connects on CONNECTING threads)
        self.loop = SharedLoop("egm-sim-mqtt", connectors=CONNECTING)
        self.terminals = [
            SimTerminal(tid, state, Path(spec["pki"]), _client_factory(spec, tid, self.loop), rate=spec["rate"],
                        seed=spec["seed"] * 100_003 + i, pool=pool, clock=time.monotonic,
                        meter_interval_s=spec.get("meter_interval_s", 60.0))
            for i, tid in zip(spec["indexes"], spec["terminals"], strict=True)]
        self.stop = threading.Event()
        self.errors = 0
        #: bumped when the main thread changes every terminal's pace (go, stop): the dues are read again
        self.paces = 0
        self.loop_ms: deque[float] = deque(maxlen=100_000)   #: the last passes' times
        #: each group's wake-up on the network loop (:meth:`_on_loop`), for the main thread's changes
        self.kicks: list[Callable[[], None]] = []

    def _ring(self) -> None:
        """The main thread changed the pace: every group on the network loop takes a turn."""
        for kick in self.kicks:
            self.loop.call_soon(kick)

    def _outstanding(self) -> int:
        return sum(len(t.link.outbox) + t.waiting for t in self.terminals)

    def _pass(self, mine: list[SimTerminal]) -> None:
        for terminal in mine:
            if terminal.link.behind is not None:
                continue
            try:
                terminal.step()
            except Exception:                            # one terminal's fault stops only it
                self.errors += 1
                log.exception("%s: step failed", terminal.terminal_id)

    def _run(self, terminals: list[SimTerminal]) -> None:
        """A thread of its own stepping ``terminals`` (see :class:`_Schedule`)."""
        bell = threading.Event()
        schedule = _Schedule(self, terminals, bell.set)
        while not self.stop.is_set():
            bell.clear()
            bell.wait(schedule.turn())

    def _on_loop(self, terminals: list[SimTerminal]) -> None:
        """Step ``terminals`` on the network loop's thread, between its network events: a report,
        its PUBACK and the host's ack then cost no hand-off between threads (see :class:`_Schedule`)."""
        loop = self.loop
        timer: list[Any] = [None]
        kicked = [False]

        def turn() -> None:
            kicked[0] = False
            if timer[0] is not None:
                timer[0].cancel()
            if self.stop.is_set():
                return
            timer[0] = loop.call_later(schedule.turn(), turn)

        def kick() -> None:
            if not kicked[0]:                 # one turn for every wake-up of the same moment
                kicked[0] = True
                loop.call_soon(turn)

        schedule = _Schedule(self, terminals, kick)
        self.kicks.append(kick)
        loop.call_soon(turn)

    def main(self, lines: Any) -> dict[str, Any]:
        t0 = time.monotonic()
        groups = [self.terminals[i::self.spec["threads"]] for i in range(self.spec["threads"])]
        threads = [] if self.spec.get("on_loop", True) else [
            threading.Thread(target=self._run, args=(group,), daemon=True) for group in groups]
        for thread in threads:
            thread.start()
        if not threads:
            for group in groups:
                self.loop.call_soon(self._on_loop, group)
        deadline = time.monotonic() + self.spec.get("connect_s", 120.0)
        while time.monotonic() < deadline and not all(t.link.session_open for t in self.terminals):
            time.sleep(0.1)
        opened = sum(t.link.session_open for t in self.terminals)
        _say(event="ready", opened=opened, seconds=round(time.monotonic() - t0, 2))
        words = _reader(lines)
        words.wait_for("go")
        for terminal in self.terminals:
            terminal.begin()
        self.paces += 1
        self._ring()
        while not words.said("stop"):
            _say(event="progress", made=sum(t.made for t in self.terminals),
                 outstanding=sum(len(t.link.outbox) for t in self.terminals))
            time.sleep(1.0)
        for terminal in self.terminals:
            terminal.generating = False
        self.paces += 1
        self._ring()
        drain_end = time.monotonic() + self.spec["drain_s"]
        while time.monotonic() < drain_end and self._outstanding():
            time.sleep(0.2)
        self.stop.set()
        for thread in threads:
            thread.join(10)
        settled = threading.Event()                       # a turn on the loop in progress is over
        self.loop.call_soon(settled.set)
        settled.wait(10)
        # The last pass on this thread alone: a link's poll may still make a report (its periodic
        # meters), so the summary is taken only after a pass that left nothing outstanding.
        while True:
            self._pass(self.terminals)
            if not self._outstanding() or time.monotonic() > drain_end:
                break
            time.sleep(LOOP_S)
        drained = round(self.spec["drain_s"] - max(0.0, drain_end - time.monotonic()), 2)
        summaries = [t.summary() for t in self.terminals]
        for terminal in self.terminals:
            terminal.stop(0.0)
        self.loop.close()
        loops = sorted(self.loop_ms) or [0.0]
        return {"event": "result", "terminals": summaries, "errors": self.errors, "drain_s": drained,
                "loop_ms_p50": round(loops[len(loops) // 2], 2), "loop_ms_p99": round(loops[int(len(loops) * 0.99)], 2)}


class _Schedule:
    """When to step which terminal of one group. Start them a few at a time (:data:`CONNECTING`: a
    thousand TLS handshakes at once time each other out at the broker); step a terminal when the
    link woke it or its next report is due, and every terminal each :data:`SWEEP_S` (the link's
    resend timers and periodic meters). A terminal's next due time is read after each of its steps
    (only a step makes reports) and kept, so a wake-up costs no pass over every terminal's clock.
    ``ring`` asks for a turn soon (the link woke a terminal); :meth:`turn` says when the next is due."""

    def __init__(self, worker: Worker, terminals: list[SimTerminal], ring: Callable[[], None]) -> None:
        self.worker = worker
        self.ring = ring
        self.woken: deque[SimTerminal] = deque()
        self.waiting = deque(terminals)
        self.mine: list[SimTerminal] = []
        self.connecting: dict[SimTerminal, float] = {}
        self.due: dict[SimTerminal, float] = {}          #: each terminal's next_due after its last step
        self.next_sweep = 0.0
        self.paces = worker.paces

    def wake(self, terminal: SimTerminal) -> None:
        self.woken.append(terminal)
        self.ring()

    def turn(self) -> float:
        """Step what is due; the seconds until the next turn is due."""
        worker, due, woken = self.worker, self.due, self.woken
        now = time.monotonic()
        if self.paces != worker.paces:
            self.paces = worker.paces
            due.update((t, t.next_due) for t in self.mine)
        for terminal in [t for t, since in self.connecting.items() if t.link.session_open or now - since > 15]:
            del self.connecting[terminal]
        while self.waiting and len(self.connecting) < CONNECTING:
            terminal = self.waiting.popleft()
            terminal.on_wake = self.wake
            terminal.start()
            self.mine.append(terminal)
            due[terminal] = terminal.next_due
            self.connecting[terminal] = now
        if now >= self.next_sweep:
            batch = list(self.mine)
            self.next_sweep = now + SWEEP_S
            woken.clear()
        else:
            chosen = dict.fromkeys(woken.popleft() for _ in range(len(woken)))
            chosen.update((t, None) for t, at in due.items() if at <= now)
            batch = list(chosen)
        worker._pass(batch)
        for terminal in batch:
            due[terminal] = terminal.next_due
        worker.loop_ms.append((time.monotonic() - now) * 1000)
        soonest = min(self.next_sweep, min(due.values(), default=self.next_sweep))
        return max(0.0, min(soonest - time.monotonic(), 0.1 if self.waiting else SWEEP_S))


class _reader:
    """The words the orchestrator writes on stdin, read on a thread of their own."""

    def __init__(self, lines: Any) -> None:
        self.words: set[str] = set()
        self.cond = threading.Condition()
        threading.Thread(target=self._read, args=(lines,), daemon=True).start()

    def _read(self, lines: Any) -> None:
        for line in lines:
            with self.cond:
                self.words.add(line.strip())
                self.cond.notify_all()
        with self.cond:                                   # the orchestrator went away: stop
            self.words.update(("go", "stop"))
            self.cond.notify_all()

    def wait_for(self, word: str) -> None:
        with self.cond:
            self.cond.wait_for(lambda: word in self.words)

    def said(self, word: str) -> bool:
        with self.cond:
            return word in self.words


def _say(**doc: Any) -> None:
    sys.stdout.write(json.dumps(doc) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s worker %(name)s %(levelname)s %(message)s")
    spec = json.loads(Path(argv[0]).read_text())
    result = Worker(spec).main(sys.stdin)
    _say(**result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
