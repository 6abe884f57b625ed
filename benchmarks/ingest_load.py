"""A floor's worth of terminal reports for the host ingest benchmark and its profile (issue 27).

:func:`make_floor` issues ``terminals`` certificates in a temporary PKI and makes ``reports``
messages from them, mixed kinds (half ``meters``, three in ten ``event``, two in ten ``round``),
each terminal numbering its own from 1, in two encodings made before any timing starts (the
terminals' cost is theirs):

* ``sealed``: the real envelopes (``egmproto.envelope.seal``: signed, HPKE-encrypted to the host);
* ``plain``: the same messages as plain JSON, for :class:`PlainHostServer`.

:class:`PlainHostServer` is the benchmark's host with a plain JSON codec injected: the same
``handle_batch`` (schema and freshness checks, store, acknowledgements published), with no
signature and no encryption either way. It lives here, in the benchmarks, and the product's
``HostServer`` has no flag that would make it accept such a message.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import x25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from egmproto.envelope import Opened, seal
from egmproto.errors import EnvelopeError, EnvelopeRejected
from egmproto.identity import TerminalIdentity
from egmproto.messages import TO_HOST, check_body
from egmproto.mqtt import up_topic
from egmproto.pki import ensure_development_pki, issue
from host.server import HostServer
from host.store import HostStore

EPOCH = "0123456789abcdef"


def terminal_name(j: int) -> str:
    return f"B{j:04d}"


def kem_public(j: int) -> str:
    """Terminal ``j``'s boot key (base64 X25519), as its hello gives it."""
    key = x25519.X25519PrivateKey.from_private_bytes((j + 1).to_bytes(32, "little")).public_key()
    return base64.b64encode(key.public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


def body(kind: str, n: int) -> dict[str, Any]:
    """The body of report number ``n`` of kind ``kind``, as a terminal sends it."""
    if kind == "meters":
        return {"epoch": EPOCH, "credits": 25 * n,
                "meters": {"coin_in": 100 * n, "coin_out": 60 * n, "games_played": n, "games_won": n // 3,
                           "bills": {"100": n // 10, "500": n // 50}, "jackpot": 0}}
    if kind == "event":
        return {"epoch": EPOCH, "name": "game_end", "data": {"win": 40 * (n % 5), "bet": 100, "round": n}}
    return {"epoch": EPOCH, "record": {"round": n, "bet": 100, "win": 40 * (n % 5), "credits_after": 25 * n,
                                       "outcome": {"reels": [n % 7, (n * 3) % 7, (n * 5) % 7], "lines": [1, 0, 2]}}}


def kind_of(i: int) -> str:
    return "meters" if i % 10 < 5 else "event" if i % 10 < 8 else "round"


@dataclass
class Floor:
    pki: Path
    terminals: list[str]
    sealed: list[tuple[str, bytes]]
    plain: list[tuple[str, bytes]]


def make_floor(tmp: Path, terminals: int, reports: int) -> Floor:
    """``reports`` messages from ``terminals`` terminals, round robin, sealed and plain."""
    ensure_development_pki(tmp, terminal_name(0))
    pki = tmp / "pki"
    names = [terminal_name(j) for j in range(terminals)]
    ids = {}
    for name in names:
        if not (pki / "issued" / f"{name}.cert.pem").exists():
            issue(pki, "terminal", name)
        ids[name] = TerminalIdentity.load(pki, name)
    now = datetime.now(UTC)
    sealed, plain = [], []
    for i in range(reports):
        name, n = names[i % terminals], i // terminals + 1
        kind = kind_of(i)
        b = body(kind, n)
        sealed.append((up_topic(name), seal(sender_id=name, seq=n, time=now, type=kind, body=b,
                                            signing_key=ids[name].signing_key,
                                            recipient_public_key=ids[name].host_kem_key)))
        plain.append((up_topic(name), json.dumps({"v": 3, "sender": name, "seq": n, "time": now.isoformat(),
                                                  "type": kind, "body": b}).encode()))
    return Floor(pki, names, sealed, plain)


def hellos(store: HostStore, names: list[str]) -> None:
    """Every terminal's hello stored first: the acks are sealed to its key, as on the floor."""
    now = datetime.now(UTC)
    for j, name in enumerate(names):
        store.record(name, 0, "hello", now, {"epoch": EPOCH, "kem_public": kem_public(j)}, epoch=EPOCH)


class CountingClient:
    """Stands in for the broker connection: takes every publish (the broker's cost is measured in
    benchmarks/bench_broker.py) and counts it."""

    connected = True

    def __init__(self) -> None:
        self.published = 0
        self.bytes = 0

    def publish(self, _topic: str, data: bytes) -> bool:
        self.published += 1
        self.bytes += len(data)
        return True


class PlainHostServer(HostServer):
    """The benchmark's host with plain JSON both ways (see the module docstring)."""

    def _open_envelope(self, payload: bytes) -> Opened:
        try:
            msg = json.loads(payload)
            sent_at = datetime.fromisoformat(msg["time"])
            mt = check_body(msg["type"], msg["body"], msg["v"])
        except (ValueError, KeyError, TypeError, EnvelopeError) as exc:
            raise EnvelopeRejected("malformed", str(exc)) from None
        now = self._wall()
        if mt.direction != TO_HOST:
            raise EnvelopeRejected("bad_body", f"{msg['type']} is not a report")
        if not now - timedelta(seconds=self.max_age_s) <= sent_at <= now + timedelta(seconds=self.max_skew_s):
            raise EnvelopeRejected("stale", f"sent {sent_at}")
        return Opened(msg["sender"], msg["seq"], sent_at, msg["type"], msg["body"], msg["v"], "none")

    def _seal(self, seq: int, type_: str, body: dict[str, Any], key: x25519.X25519PublicKey) -> bytes:
        check_body(type_, body)
        return json.dumps({"v": 3, "sender": self.identity.name, "seq": seq,
                           "time": self._wall().isoformat(), "type": type_, "body": body}).encode()
