"""The embedded broker under load: QoS 1 messages acknowledged per second, and delivered / acknowledged.

    .venv/bin/python -m benchmarks.bench_broker [--messages 20000] [--terminals 4] [--flappers 2]
                                                [--reconnect-every 0.5]

One run of ``tests/hostlink/broker_load.py``: the embedded broker with TLS and client certificates,
``--terminals`` publishers (each its own certificate and ``up`` topic, 50 messages awaiting their
PUBACK at most), two persistent subscribers (the host on ``egm/v1/+/up``, which reconnects every
``--reconnect-every`` seconds, and a second one on each terminal's topic by name), and
``--flappers`` terminals connecting, subscribing and leaving all the time. Messages per second is
what the publishers got acknowledged, from the first publish to the last PUBACK; delivered /
acknowledged is the share of acknowledged messages each subscriber received (the smaller of the
two), which must be 1.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from tests.hostlink import broker_load


def measure(messages: int, terminals: int = 4, flappers: int = 2,
            reconnect_every: float = 0.5) -> broker_load.LoadResult:
    with tempfile.TemporaryDirectory() as tmp:
        files = broker_load.pki_for(Path(tmp), terminals, flappers)
        return broker_load.run(files, messages=messages, terminals=terminals, flappers=flappers,
                               reconnect_every=reconnect_every, settle=120)


def delivered_ratio(result: broker_load.LoadResult) -> float:
    lost = result.lost
    return min((len(result.acked) - len(lost.get(who, ()))) / len(result.acked) for who in result.delivered)


_RESULTS: list[broker_load.LoadResult] = []


def _result() -> broker_load.LoadResult:
    if not _RESULTS:
        _RESULTS.append(measure(20_000))
    return _RESULTS[0]


BENCHMARKS = [
    ("broker: QoS 1 acknowledged, 20,000 messages, 4 terminals, TLS, host reconnecting",
     lambda: (_result().acked_per_s, "messages/s")),
    ("broker: delivered / acknowledged, each of 2 persistent subscribers (must be 1)",
     lambda: (delivered_ratio(_result()), "ratio")),
    ("broker: acknowledged and never delivered", lambda: (float(sum(map(len, _result().lost.values()))), "messages")),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20_000, help="QoS 1 messages in all")
    parser.add_argument("--terminals", type=int, default=4, help="publishing terminals")
    parser.add_argument("--flappers", type=int, default=2, help="terminals connecting and leaving all the time")
    parser.add_argument("--reconnect-every", type=float, default=0.5,
                        help="seconds between two reconnections of the host (0: never)")
    args = parser.parse_args()
    result = measure(args.messages, args.terminals, args.flappers, args.reconnect_every)
    print(result.summary())
    print(f"delivered / acknowledged: {delivered_ratio(result):.4f}")


if __name__ == "__main__":
    main()
