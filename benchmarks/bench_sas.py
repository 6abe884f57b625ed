"""SAS reply latency against the running terminal under autoplay, for docs/benchmarks.md.

``egm run --sim --headless --sas pty --autoplay N`` as a process (no embedded host; SAS meters in
5-cent credits: tests/sas/live.py), playing rounds as fast as it can while a host polls it over
its pty (``drivers.sas.host.SasHost``, the same codec). Each sample is one poll: from the host's
write to the whole reply decoded on the host's side, so it holds both pty hops, the port's reader
thread, the terminal's command queue (the reply is made on the terminal's thread, between its
steps: a round's ledger writes run first) and the host's reader thread. SAS gives the machine
20 ms to *start* its reply; this measures the *end*, a little more. The same polls against an
idle terminal (no autoplay) separate the rounds' share from the machine's.

    .venv/bin/python -m benchmarks sas
"""

from __future__ import annotations

import functools
import tempfile
import time
from pathlib import Path

SAMPLES = 400


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


@functools.cache
def _latencies(autoplay: bool) -> dict[str, list[float]]:
    from drivers.sas.codec import ExceptionReply, GeneralPoll, LongPoll, Reply
    from drivers.sas.host import SasHost
    from tests.sas.live import running

    polls = {"general": GeneralPoll(1), "long 0x1C (8 meters)": LongPoll(1, 0x1C),
             "long 0x1A (credits)": LongPoll(1, 0x1A)}
    samples: dict[str, list[float]] = {name: [] for name in polls}
    args, state = (("--autoplay", "1000000"), "PLAYING") if autoplay else ((), "IDLE")
    with tempfile.TemporaryDirectory() as tmp, running(Path(tmp), *args, state=state) as terminal, \
            SasHost(terminal.sas) as host:
        host.general_poll()                                       # the link up: no more chirps
        rounds_before = terminal.control("status")["rounds_played"]
        for i in range(SAMPLES):
            for name, poll in polls.items():
                started = time.perf_counter()
                reply = host.ask(poll)
                elapsed = (time.perf_counter() - started) * 1000
                if not isinstance(reply, ExceptionReply | Reply):
                    raise RuntimeError(f"{name}: no reply ({reply}) at sample {i}")
                samples[name].append(elapsed)
                if name == "general":
                    host.ask(GeneralPoll(host.spare))             # acknowledge it, as hosts do
        played = terminal.control("status")["rounds_played"] - rounds_before
        if autoplay and played <= 0:
            raise RuntimeError("autoplay played no round while the host polled")
    return samples


def _figure(autoplay: bool, name: str, q: float) -> tuple[float, str]:
    return _percentile(_latencies(autoplay)[name], q), "ms"


BENCHMARKS = [
    (f"SAS {name} poll, reply latency {label} {'under autoplay' if autoplay else 'idle'} ({SAMPLES} polls)",
     functools.partial(_figure, autoplay, name, q))
    for autoplay in (True, False)
    for name in ("general", "long 0x1C (8 meters)", "long 0x1A (credits)")
    for label, q in (("p50", 0.5), ("p99", 0.99))
]
