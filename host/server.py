"""The reference casino host: take every terminal's reports, store each exactly once, answer.

:meth:`HostServer.handle` is the whole protocol for one incoming envelope, with no I/O of its own
beyond the store and :meth:`send`:

1. open it (decrypt with the host's X25519 key, verify the signature against the terminal's
   certificate, which must chain to the casino CA and not be revoked; schema, freshness);
   the MQTT topic's terminal must be the signed sender;
2. store it (``HostStore.record``) with everything it implies, in one transaction: a redemption
   request authorises the voucher (or not), a voucher given back is released, a command is
   confirmed. A host that dies at any instant has done all of it or none, so the terminal's resend
   is new or a duplicate. A (terminal, epoch, sequence) already stored changes nothing and is logged
   as a replay (or, with other content, as a conflict: the terminal's critical memory went back);
3. act, only on a message stored just now (never on a duplicate: the duplicate check comes before
   every side effect): a ``hello`` gives the terminal's key for commands, a redemption request is
   answered with the decision stored with it;
4. acknowledge the sequence number and epoch (also for a duplicate: the terminal is waiting for
   it); the acknowledgement of a hello also says the highest number the host holds for that
   terminal and epoch (``held``): a terminal whose critical memory is behind it halts.

A refused envelope is logged in the store's rejection log with its reason and the host goes on.

Everything the host sends carries a number from one counter (``HostStore.host_seqs``: a database
sequence shared by every worker on PostgreSQL, blocks of the store's counter on SQLite; a restart
never reuses one), is signed with the host's key and sealed to the terminal's key of this boot as
the database holds it (the newest hello's, whichever worker stored it).

:meth:`handle_batch` does the same for many envelopes with one transaction for all of them
(``HostStore.record_batch``); the acknowledgements and replies go out after its commit. The MQTT
worker thread drains its queue that way, so a busy host commits once per batch.

Commands (:meth:`HostServer.command`, and ``egm host disable`` and friends through the store's
queue) are delivered at least once: each is a pending command of its terminal in the store, with
the terminal's next command number, sent at once, again with every new hello of the terminal (it
is back), and again every :data:`COMMAND_RETRY_S` while it is not confirmed; the terminal applies
each number once and confirms it with a report (docs/protocols/host-session.md).
"""

from __future__ import annotations

import base64
import binascii
import logging
import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives.asymmetric import x25519

from egmproto.envelope import Opened, open_, seal
from egmproto.errors import EnvelopeError, EnvelopeRejected
from egmproto.identity import HostIdentity
from egmproto.messages import TO_HOST, check_body
from egmproto.mqtt import UP_WILDCARD, down_topic, terminal_of
from host.store import HostStore, Recorded, Report
from host.store_epochs import EPOCH_SPAN

log = logging.getLogger("egm.host")

COMMAND_POLL_S = 0.25
INCOMING_MAX = 10_000
SHARE_GROUP = "egm-host"               #: the MQTT shared-subscription group of the host's workers
BATCH_MAX = 200                        #: messages stored in one transaction by the MQTT worker
MAX_DEFERRED = 10_000                  #: per terminal, messages waiting for its key (acks come again)
COMMAND_RETRY_S = 5.0                  #: an unconfirmed command goes again after this long
#: message types that are commands: numbered per terminal, sent until confirmed, applied once
COMMANDS = frozenset({"disable", "enable", "send_meters", "set_time", "package_offer"})


def now_utc() -> datetime:
    return datetime.now(UTC)


class HostServer:
    """Many terminals, one store. :meth:`start` connects to the broker; :meth:`handle` is the core."""

    def __init__(self, store: HostStore, identity: HostIdentity, client_factory: Callable[..., Any] | None = None,
                 *, max_age_s: float = 300.0, max_skew_s: float = 60.0,
                 wall: Callable[[], datetime] = now_utc, package_url: Callable[[str], str] | None = None,
                 worker: int | None = None) -> None:
        """``worker``: this server is worker number ``worker`` of several on one database (``egm host
        serve --workers``): its MQTT client has a client id of its own and takes its share of the
        terminals' reports through the shared subscription ``$share/egm-host/...`` (the broker
        hands each message to one worker of the group; Mosquitto does, amqtt does not)."""
        self.store = store
        #: sha256 -> the URL a terminal downloads that package from (host/packages.py), or None
        self.package_url = package_url
        self.identity = identity
        self.max_age_s = max_age_s
        self.max_skew_s = max_skew_s
        self._wall = wall
        self._send_lock = threading.Lock()
        #: host sequence numbers reserved for the batch being answered, used in order
        self._seqs: deque[int] = deque()
        self._deferred: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self.stats: Counter[str] = Counter()
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None
        #: Messages from the broker wait here for the worker: paho acknowledges (PUBACK) a message
        #: when the callback returns, so the network thread only queues it and the broker never
        #: waits on the database. A message queued but not yet stored when the host dies is lost
        #: to the broker, not to the floor: it was not acknowledged to its terminal, which sends
        #: it again.
        self._incoming: queue.Queue[tuple[str, bytes] | None] = queue.Queue(maxsize=INCOMING_MAX)
        self._worker: threading.Thread | None = None
        client_id = f"egm-host-{identity.name}" if worker is None else f"egm-host-{identity.name}-w{worker}"
        subscription = UP_WILDCARD if worker is None else f"$share/{SHARE_GROUP}/{UP_WILDCARD}"
        self.client = None if client_factory is None else client_factory(
            client_id, subscriptions=[subscription], on_message=self._on_message, persistent_session=True)

    # --- life cycle ------------------------------------------------------------------------------
    def start(self) -> None:
        if self.client is None:
            raise RuntimeError("this HostServer has no MQTT client")
        self._worker = threading.Thread(target=self._work, name="egm-host-ingest", daemon=True)
        self._worker.start()
        self.client.start()
        self._poller = threading.Thread(target=self._poll_commands, name="egm-host-commands", daemon=True)
        self._poller.start()

    def stop(self) -> None:
        self._stop.set()
        if self._poller is not None:
            self._poller.join(timeout=2)
        if self.client is not None:
            self.client.stop()
        if self._worker is not None:
            self._incoming.put(None)
            self._worker.join(timeout=10)

    def _on_message(self, topic: str, payload: bytes) -> None:
        self._incoming.put((topic, payload))            # blocks when full: back-pressure on the broker

    def _work(self) -> None:
        """Drain the queue in batches: whatever is queued (up to :data:`BATCH_MAX`) is one
        transaction, so a busy host commits once per batch, not once per report."""
        stop = False
        while not stop:
            item = self._incoming.get()
            if item is None:
                return
            batch = [item]
            while len(batch) < BATCH_MAX:
                try:
                    nxt = self._incoming.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            try:
                self.handle_batch(batch)
            except Exception:                           # a database hiccup: the terminals resend
                log.exception("could not handle %d message(s)", len(batch))

    # --- incoming ----------------------------------------------------------------------------------
    def handle(self, topic: str, payload: bytes) -> str:
        """Process one envelope from ``topic``; returns ``stored``, ``duplicate``, ``conflict`` or
        the refusal reason (:meth:`handle_batch` of one)."""
        return self.handle_batch([(topic, payload)])[0]

    def handle_batch(self, items: Sequence[tuple[str, bytes]]) -> list[str]:
        """Process many envelopes ``(topic, payload)``: open each (refusals logged), store the good
        ones in one transaction (``HostStore.record_batch``), and only after its commit send the
        acknowledgements, replies and commands, in (terminal, seq) order; one outcome per item,
        as :meth:`handle` returns it (or ``error`` if the store could not take a message)."""
        outcomes: list[str] = [""] * len(items)
        refused: list[tuple[str | None, str, str, int]] = []
        good: list[tuple[int, Opened, int]] = []
        for i, (topic, payload) in enumerate(items):
            opened = self._open(topic, payload, refused)
            if isinstance(opened, str):
                outcomes[i] = opened
            else:
                good.append((i, opened, len(payload)))
        recorded = self.store.record_batch([Report(m.sender_id, m.seq, m.type, m.time, m.body, m.body["epoch"])
                                            for _i, m, _n in good]) if good else []
        answers = sorted(zip(good, recorded, strict=True), key=lambda a: (a[0][1].sender_id, a[1].seq))
        self._seqs.extend(self.store.host_seqs(sum(1 for _g, r in answers if r.error is None)))
        for (i, msg, size), rec in answers:
            outcomes[i] = self._answer(msg, rec, size, refused)
        with self._send_lock:
            self._seqs.clear()      # unused (deferred acks): later ones would be behind other workers'
        if refused:
            self.store.log_rejections(refused)
        return outcomes

    def _open(self, topic: str, payload: bytes, refused: list[tuple[str | None, str, str, int]]) -> Opened | str:
        """The opened envelope, or the reason it is refused (added to ``refused``)."""
        claimed = terminal_of(topic)
        try:
            msg = self._open_envelope(payload)
            if claimed != msg.sender_id:
                raise EnvelopeRejected("sender_mismatch",
                                       f"{msg.sender_id} published on {topic!r}, not on its own topic")
        except EnvelopeRejected as exc:
            self.stats[exc.reason_code] += 1
            log.warning("refused a message on %s: %s", topic, exc)
            refused.append((claimed, exc.reason_code, exc.message[:500], len(payload)))
            return exc.reason_code
        if msg.seq >= EPOCH_SPAN:
            self.stats["seq_range"] += 1
            refused.append((msg.sender_id, "seq_range", f"report number {msg.seq} is not below 2^40", len(payload)))
            return "seq_range"
        return msg

    def _open_envelope(self, payload: bytes) -> Opened:
        """Decrypt, verify and check one envelope (egmproto.envelope.open_), or EnvelopeRejected."""
        return open_(payload, recipient_private_key=self.identity.kem_key,
                     verify_key_for=self.identity.terminal_key, last_seq_for=_no_last_seq,
                     now=self._wall(), max_age_s=self.max_age_s, max_skew_s=self.max_skew_s,
                     direction=TO_HOST)

    def _seal(self, seq: int, type_: str, body: dict[str, Any], key: x25519.X25519PublicKey) -> bytes:
        """One outgoing message signed with the host's key and sealed to ``key``."""
        return seal(sender_id=self.identity.name, seq=seq, time=self._wall(), type=type_, body=body,
                    signing_key=self.identity.signing_key, recipient_public_key=key)

    def _answer(self, msg: Opened, recorded: Recorded, size: int,
                refused: list[tuple[str | None, str, str, int]]) -> str:
        """Act on one message after its batch was committed, and acknowledge it."""
        terminal, epoch = msg.sender_id, msg.body["epoch"]
        if recorded.error is not None:           # not stored: no acknowledgement, the terminal resends
            self.stats["error"] += 1
            return "error"
        # the key this transaction saw as the terminal's newest hello's: stored by whichever worker
        key = _kem_key(recorded.kem_public)
        if recorded.stored:
            self.stats["stored"] += 1
            self._act(terminal, msg.type, msg.body, recorded, key)
        elif recorded.conflict:
            # Another report is stored under this (terminal, epoch, number): the terminal's critical
            # memory went back. Nothing is stored or done; a hello is answered (below) with what the
            # host holds, so the terminal sees it is behind.
            self.stats["conflict"] += 1
            log.warning("%s: seq %d of epoch %s differs from the one stored; its critical memory is "
                        "behind", terminal, msg.seq, epoch)
            refused.append((terminal, "conflict", f"seq {msg.seq} of epoch {epoch} differs from the "
                            "report stored under that number (critical memory went back?)", size))
        else:
            # A duplicate (a resend, or a replay byte for byte) is acknowledged and nothing else:
            # whatever it implied was done when it was first stored.
            self.stats["duplicate"] += 1
            log.info("%s: seq %d already stored; acknowledged again", terminal, msg.seq)
            refused.append((terminal, "replay", f"seq {msg.seq} already stored (acknowledged again)", size))
        ack: dict[str, Any] = {"seq": msg.seq, "epoch": epoch}
        if recorded.conflict:
            ack["conflict"] = True              # the terminal halts: its memory is behind the host
        if msg.type == "hello":
            # The answer to the session's hello: the host as a second witness of critical memory.
            ack["held"] = self.store.held(terminal, epoch)
            if recorded.conflict:               # to the key of this hello, not of the one stored
                key = _kem_key(msg.body["kem_public"])
        self.send(terminal, "ack", ack, key=key)
        return "stored" if recorded.stored else "conflict" if recorded.conflict else "duplicate"

    def _act(self, terminal: str, type_: str, body: dict[str, Any], recorded: Recorded,
             key: x25519.X25519PublicKey | None) -> None:
        """What goes out for a report stored just now. Its effects on the store (a voucher
        authorised or released, a command confirmed) were made in the transaction that stored it."""
        if type_ == "hello":
            # ``key`` is the newest boot's (by seq): a hello left over from an earlier boot,
            # arriving late, did not replace it.
            if key is None:
                log.warning("%s: hello with an unusable key", terminal)
                return
            for deferred in self._deferred.pop(terminal, []):
                self.send(terminal, *deferred, key=key)
            self.send_commands(terminal, force=True)           # it is back: what it has not confirmed
        elif type_ == "voucher_redeem_request" and recorded.redemption is not None:
            answer = recorded.redemption
            self.send(terminal, "voucher_redeem_reply", {"validation": body["validation"],
                                                         "approved": answer.approved,
                                                         "amount_cents": answer.amount_cents}, key=key)

    # --- outgoing ----------------------------------------------------------------------------------
    def _next_seq(self) -> int:
        """The next host sequence number: from those reserved for the batch being answered, else a
        new one (``HostStore.host_seqs``: one counter for every worker on the database)."""
        if not self._seqs:
            self._seqs.extend(self.store.host_seqs(1))
        return self._seqs.popleft()

    def _terminal_key(self, terminal: str) -> x25519.X25519PublicKey | None:
        """The terminal's key as the database has it now (any worker may have stored its newest hello)."""
        return _kem_key(self.store.terminal_key(terminal))

    def send(self, terminal: str, type_: str, body: dict[str, Any], *,
             key: x25519.X25519PublicKey | None = None) -> bool:
        """Seal and publish one message to ``terminal`` (to ``key`` if given, else to its newest
        hello's key); False if it cannot go now (no key yet: deferred until the terminal's hello;
        no broker: dropped, the terminal will ask again, and a command stays pending in the store
        until the terminal confirms it)."""
        if type_ == "package_offer" and "url" not in body:
            if self.package_url is None:
                log.warning("%s: package %s not offered: this host serves no packages", terminal, body.get("name"))
                self.stats["send_failed"] += 1
                return False
            body = {**body, "url": self.package_url(body["sha256"])}
        with self._send_lock:
            key = key or self._terminal_key(terminal)
            if key is None:                      # until its hello (a restarted host, old reports first)
                deferred = self._deferred.setdefault(terminal, [])
                if len(deferred) < MAX_DEFERRED:
                    deferred.append((type_, body))
                return False
            seq = self._next_seq()
            data = self._seal(seq, type_, body, key)
            if type_ != "ack":
                self.store.record_command(terminal, seq, type_, body)
            if self.client is None or not self.client.publish(down_topic(terminal), data):
                self.stats["send_failed"] += 1
                return False
            self.stats[f"sent_{type_}"] += 1
            return True

    def command(self, terminal: str, type_: str, body: dict[str, Any]) -> int:
        """A command for ``terminal``: pending in the store (its number for this terminal,
        returned), sent now if it can go, and again until the terminal confirms it."""
        why = _unsendable(type_, body)
        if why is not None:                              # refused now, not at every send
            raise EnvelopeError(why)
        cmd = self.store.add_command(terminal, type_, body)
        self.send_commands(terminal, force=True)
        return cmd

    def send_commands(self, terminal: str, *, force: bool = False) -> int:
        """Send ``terminal``'s unconfirmed commands, in number order, if one of them is due (never
        sent, or sent :data:`COMMAND_RETRY_S` ago) or ``force``; how many went. Nothing goes
        before the terminal's first hello (no key to seal to): its hello sends them."""
        pending = self.store.pending_commands(terminal)
        if not pending or self._terminal_key(terminal) is None:
            return 0
        now = self._wall()
        if not force and all(p["sent_at"] is not None and (now - p["sent_at"]).total_seconds() < COMMAND_RETRY_S
                             for p in pending):
            return 0
        confirmed = self.store.confirmed_command(terminal)
        sent = 0
        for p in pending:
            if not self.send(terminal, p["type"], {**p["body"], "cmd": p["cmd"], "confirmed": confirmed}):
                break
            self.store.command_sent(terminal, p["cmd"])
            sent += 1
        return sent

    def poll_commands(self) -> int:
        """Adopt the operator's queued commands (``egm host disable``, ``offer-package``...) as
        pending commands of their terminals, and send every pending command that is due; how many
        were adopted. While the broker is away nothing is taken or sent; a command stays pending
        until its terminal confirms it, however many sends that takes."""
        if self.client is None or not self.client.connected:
            return 0
        adopted = self.store.adopt_queued_commands(refuse=_unsendable)
        for terminal in sorted({p["terminal"] for p in self.store.pending_commands()}):
            self.send_commands(terminal, force=terminal in adopted)
        return len(adopted)

    def _poll_commands(self) -> None:
        while not self._stop.wait(COMMAND_POLL_S):
            try:
                self.poll_commands()
            except Exception:  # the poller must outlive a database hiccup
                log.exception("command queue")
                time.sleep(1)


def _unsendable(type_: str, body: Any) -> str | None:
    """Why command ``type_`` with ``body`` can never be sent (not a command, a body outside the
    schema), or None. The number fields and a package's URL are filled in at each send."""
    if type_ not in COMMANDS:
        return f"{type_!r} is not a host command ({', '.join(sorted(COMMANDS))})"
    if not isinstance(body, dict):
        return "a command body is an object"
    url = {"url": "https://checked.invalid/"} if type_ == "package_offer" and "url" not in body else {}
    try:
        check_body(type_, {**body, **url, "cmd": 1, "confirmed": 0})
    except EnvelopeError as exc:
        return str(exc)
    return None


def _no_last_seq(_sender: str) -> None:
    """The store, not the envelope, decides what is a duplicate (by terminal, epoch and seq)."""
    return None


def _kem_key(text: Any) -> x25519.X25519PublicKey | None:
    if not isinstance(text, str):
        return None
    try:
        return x25519.X25519PublicKey.from_public_bytes(base64.b64decode(text, validate=True))
    except (ValueError, binascii.Error):
        return None
