"""The terminal's end of the host link: send the outbox, take the host's acknowledgements and commands.

Everything here runs on the terminal's thread (:meth:`HostLink.poll` is called from every step of
``firmware.cabinet.terminal.Terminal``), except :meth:`_on_message` and :meth:`_on_connection`, which
the MQTT client calls on its network thread: they only queue what arrived and wake the terminal.
So the ledger has one writer, and a host command changes the cabinet between two steps, never in
the middle of one.

Sessions: every connection opens with this boot's ``hello`` (its X25519 key for what the host
sends back), sent first and alone, outside the backlog and the window: nothing else goes until the
host has acknowledged it, so every acknowledgement and command after it is sealed to this boot's
key, however long the backlog left by earlier boots. The boot's first hello is recorded at
:meth:`start`; a reconnection after the host acknowledged it records a new one (same key), so the
host learns the terminal is back and sends again the commands it has not confirmed.

Sending: the oldest :attr:`window` unacknowledged reports are sealed (signed by the terminal's key,
encrypted to the host's X25519 key) with the *current* time and published (QoS 1). A report not
acknowledged within ``ack_timeout_s`` is sealed and sent again (the timeout doubles up to
:data:`MAX_ACK_TIMEOUT_S` while the host stays silent); after a reconnection everything outstanding
is sent again at once. The host de-duplicates by (terminal, sequence number).

Receiving: every host message is opened with the host's verification key; its sequence number must
be above the last one accepted (kept in critical memory for commands that change anything), its
time within ``max_age_s``. A forged, replayed, stale or malformed command is logged (ledger event
``host.rejected``) and ignored.

Commands (disable, enable, send_meters, set_time, package_offer) carry their number for this
terminal (``cmd``: 1, 2, 3..., the same at every resend) and the highest number the host knows
applied (``confirmed``). The host sends a command until the terminal confirms it; the terminal
applies each number once and in order: the next one is applied in one critical-memory write with
its effect's records, a :data:`COMMAND_EVENT` event (the confirmation, reported like every
record) and the number applied (setting :data:`SETTING_COMMANDS`); an earlier number is a repeat
and a later one waits for the one before it. docs/protocols/host-session.md.

Epochs and the host as a witness: every report carries the epoch of critical memory (a random id
made with the ledger, new at each RAM clear), so the host keys its duplicate check by (terminal,
epoch, number) and a cleared terminal's reports, numbered from 1 again, are stored; an
acknowledgement of another epoch is ignored. The host's answer to a session's hello says the
highest report number it holds for this terminal and epoch; beyond this critical memory's last
report, the memory went back: :data:`WITNESS_EVENT` is recorded, the memory locked (:meth:`Ledger.lock`, which outlives a
power cut) and the terminal halts with :class:`CriticalMemoryError`, reporting nothing more; ``egm
run`` then holds the cabinet in the critical-memory lock until a RAM clear (docs/critical-memory.md).

Meter reports: every ``meter_interval_s``, when the host asks (``send_meters``), and after a
significant record (money in or out, a door, power-up, a RAM clear): a :meth:`Ledger.meters_snapshot`,
which the outbox then reports like any other record.
"""

from __future__ import annotations

import base64
import collections
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import x25519

from egmproto.envelope import open_, seal
from egmproto.errors import EnvelopeError, EnvelopeRejected
from egmproto.identity import TerminalIdentity
from egmproto.messages import TO_TERMINAL
from egmproto.mqtt import down_topic, up_topic
from firmware import __version__
from firmware.errors import EgmError
from firmware.hostlink.outbox import (
    HELLO_EVENT,
    REDEEM_ABANDONED_STATE,
    REDEEM_REQUEST_STATE,
    Outbox,
)
from firmware.ledger.errors import CriticalMemoryError, LedgerError
from firmware.ledger.ledger import Ledger

log = logging.getLogger("egm.hostlink")

MAX_ACK_TIMEOUT_S = 60.0
REJECTION_LOG_S = 60.0
#: records after which the meters are reported (coalesced: one snapshot per poll)
SIGNIFICANT = frozenset({"bill", "ticket_in", "ticket_out", "handpay", "transfer_in", "transfer_out"})
SIGNIFICANT_EVENTS = frozenset({"power_up", "power_down", "door_open", "door_close", "ram_clear",
                                "config_changed", HELLO_EVENT})
SETTING_HOST_SEQ = "hostlink.host_seq"
SETTING_DISABLED = "hostlink.disabled"
#: ``{"applied": n}``: every host command up to number n is applied
SETTING_COMMANDS = "hostlink.commands"
#: recorded with each host command applied: ``cmd``, ``type``, ``seq`` (the envelope's)
COMMAND_EVENT = "host.command"
#: recorded when the host holds more reports of this epoch than critical memory (then the halt)
WITNESS_EVENT = "critical_memory_behind"
#: host message types that are commands (numbered, applied once)
COMMANDS = frozenset({"disable", "enable", "send_meters", "set_time", "package_offer"})


class Switchable(Protocol):
    """The cabinet as the host's ``disable`` and ``enable`` commands act on it."""

    def disable(self) -> None: ...

    def enable(self) -> None: ...


class LinkedTerminal(Protocol):
    """What the link asks of its terminal: a wake-up when something arrives on the network thread,
    and the cabinet the host's commands switch off and on."""

    @property
    def cabinet(self) -> Switchable: ...

    def wake(self) -> None: ...


def now_utc() -> datetime:
    return datetime.now(UTC)


def _nothing() -> None:
    """A command with no effect on the cabinet beyond its records."""


class HostLink:
    """One terminal's link to the host. :meth:`start`, then :meth:`poll` from the terminal's loop."""

    def __init__(self, ledger: Ledger, identity: TerminalIdentity, client_factory: Callable[..., Any], *,
                 terminal: LinkedTerminal | None = None,
                 meter_interval_s: float = 300.0, ack_timeout_s: float = 5.0, window: int = 64,
                 max_age_s: float = 300.0, redeem_timeout_s: float = 5.0, packages: Any = None,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], datetime] = now_utc) -> None:
        """``terminal``: the terminal whose loop polls the link and whose cabinet the host's
        commands act on (None: the commands are recorded only, as in the link's own tests)."""
        self.ledger = ledger
        self.terminal = terminal
        #: the terminal's game packages (:class:`firmware.cabinet.packages.PackageManager`), or None
        self.packages = packages
        self.identity = identity
        self.terminal_id = identity.terminal_id
        self.meter_interval_s = meter_interval_s
        self.ack_timeout_s = ack_timeout_s
        self.window = window
        self.max_age_s = max_age_s
        self.redeem_timeout_s = redeem_timeout_s
        self._clock = clock
        self._wall = wall
        self.outbox = Outbox(ledger, clock=clock)
        self._inflight: dict[int, float] = {}             #: report number -> when to send again
        self._sent_at: dict[int, float] = {}              #: report number -> when first sent
        self._resent: set[int] = set()                    #: numbers sent more than once
        self._timeout = ack_timeout_s
        self._inbox: collections.deque[bytes] = collections.deque()
        self._reconnected = threading.Event()
        self._connected = False
        self._meters_due = False
        self._next_meters = clock() + meter_interval_s
        stored = ledger.setting(SETTING_HOST_SEQ)
        self.last_host_seq: int | None = stored["seq"] if stored else None
        #: The host numbers everything it sends (acks and commands) from one counter; a command's
        #: number is kept in critical memory, an ack's only in memory (a replayed ack is harmless).
        self._last_seen: int | None = self.last_host_seq
        applied = ledger.setting(SETTING_COMMANDS)
        self.commands_applied: int = applied["applied"] if applied else 0
        self._clock_offset = timedelta(0)
        self.kem_key = x25519.X25519PrivateKey.generate()  #: this boot's key for host -> terminal
        self._rejection_logged: dict[str, float] = {}
        self._rejections_suppressed: collections.Counter[str] = collections.Counter()
        self._hello: int | None = None                    #: this session's hello: sent before the rest
        #: why critical memory is behind the host's witness (the link then reports nothing), or None
        self.behind: str | None = None
        self.wake: Callable[[], None] = terminal.wake if terminal is not None else _nothing
        self.redemptions: dict[str, dict[str, Any]] = {}  #: validation -> the host's answer
        self._awaiting: str | None = None          #: the validation :meth:`validate` waits for
        self.stats: collections.Counter[str] = collections.Counter()
        self._client_factory = client_factory
        #: the MQTT client, made by :meth:`start` (so that the broker it reaches may be started
        #: after the terminal's power-up); None until then
        self.client: Any = None
        ledger.listeners.append(self._on_record)

    # --- life cycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Disable the cabinet again if the host's last word was ``disable`` (kept in critical memory
        across power cuts), announce this boot's encryption key (a reported event) and connect."""
        disabled = self.ledger.setting(SETTING_DISABLED)
        if disabled and disabled.get("disabled") and self.terminal is not None:
            self.terminal.cabinet.disable()
        self._open_session()
        if self.client is None:
            self.client = self._client_factory(
                f"egm-terminal-{self.terminal_id}", subscriptions=[down_topic(self.terminal_id)],
                on_message=self._on_message, on_connection=self._on_connection)
        self.client.start()

    @property
    def kem_public(self) -> str:
        """This boot's X25519 public key, base64, as the hello carries it."""
        raw = self.kem_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return base64.b64encode(raw).decode("ascii")

    def _open_session(self) -> None:
        """Record a hello (a report, numbered like the others): the next one to go, alone."""
        self.ledger.event(HELLO_EVENT, kem_public=self.kem_public, software=f"egm {__version__}",
                          last_host_seq=self.last_host_seq)
        self._hello = self.outbox.last_number

    @property
    def session_open(self) -> bool:
        """The host acknowledged this session's hello: it seals everything to this boot's key."""
        return self._hello is not None and self._hello not in self.outbox

    def stop(self, drain_s: float = 0.0) -> None:
        """Try for up to ``drain_s`` seconds to deliver what is outstanding, then disconnect."""
        deadline = self._clock() + drain_s
        while len(self.outbox) and self._clock() < deadline and self.behind is None:
            self.poll()
            time.sleep(0.02)
        if self.behind is None:
            self.outbox.flush(force=True)
        if self.client is not None:
            self.client.stop()
        self.outbox.close()
        if self._on_record in self.ledger.listeners:
            self.ledger.listeners.remove(self._on_record)

    @property
    def connected(self) -> bool:
        return self._connected

    def status(self) -> dict[str, Any]:
        return {"connected": self._connected, "outstanding": len(self.outbox),
                "last_report": self.outbox.last_number, "acknowledged": self.outbox.watermark,
                "last_host_seq": self.last_host_seq, "sent": self.stats["sent"],
                "resent": self.stats["resent"], "rejected": self.stats["rejected"],
                "commands_applied": self.commands_applied, "epoch": self.ledger.epoch, "behind": self.behind,
                "session": {"hello": self._hello, "open": self.session_open, "key": self.kem_public}}

    # --- MQTT callbacks (network thread) ---------------------------------------------------------
    def _on_message(self, topic: str, payload: bytes) -> None:
        self._inbox.append(bytes(payload))
        self.wake()

    def _on_connection(self, up: bool) -> None:
        self._connected = up
        if up:
            self._reconnected.set()
        self.wake()

    def _on_record(self, seq: int, kind: str, ref: str | None, time_: str, body: dict[str, Any]) -> None:
        if kind in SIGNIFICANT or (kind == "event" and body.get("event") in SIGNIFICANT_EVENTS):
            self._meters_due = True

    # --- the terminal's loop --------------------------------------------------------------------
    def poll(self) -> None:
        """Handle what the host sent, report meters when due, send what is outstanding."""
        if self.behind is not None:                # halted: nothing more is reported
            return
        while self._inbox:
            self._receive(self._inbox.popleft())
        if self.packages is not None:
            self.packages.poll()
        now = self._clock()
        periodic = now >= self._next_meters
        if periodic or self._meters_due:
            self._meters_due = False
            self._next_meters = now + self.meter_interval_s
            self.ledger.meters_snapshot("periodic" if periodic else "event")
        if self._reconnected.is_set():
            self._reconnected.clear()
            self._inflight.clear()                 # everything outstanding goes again, in order
            self._sent_at.clear()
            self._resent.clear()
            self._timeout = self.ack_timeout_s
            if self.session_open:                  # a new session: the host learns we are back
                self._open_session()
        if self._connected:
            self._send(now)
        self.outbox.flush()

    def _send(self, now: float) -> None:
        if self.session_open:
            numbers = self.outbox.numbers()[: self.window]
        else:
            # The host seals to this boot's key only once it has the hello: the hello goes first
            # and alone, however long the backlog (older reports, from earlier boots too, would
            # otherwise be acknowledged to a key that died with them).
            numbers = [] if self._hello is None else [self._hello]
        for number in numbers:
            due = self._inflight.get(number)
            if due is not None and due > now:
                continue
            if due is not None:
                self.stats["resent"] += 1
                self._resent.add(number)
                self._timeout = min(self._timeout * 2, MAX_ACK_TIMEOUT_S)
            type_, body = self.outbox.message(number)
            envelope = seal(sender_id=self.terminal_id, seq=number, time=self._wall() + self._clock_offset,
                            type=type_, body=body, signing_key=self.identity.signing_key,
                            recipient_public_key=self.identity.host_kem_key)
            if self.client is None or not self.client.publish(up_topic(self.terminal_id), envelope):
                return                               # disconnected: the outbox keeps it
            self.stats["sent"] += 1
            self._inflight[number] = now + self._timeout
            self._sent_at.setdefault(number, now)

    def _acknowledged(self, number: int) -> None:
        """The ack timeout follows the host's pace (Karn's rule, as TCP's retransmission timer,
        RFC 6298 section 5): an ack of a report sent once measures the round trip, and the timeout
        becomes twice that (at least ``ack_timeout_s``); an ack of a report sent again measures
        nothing (which send does it answer?), and the timeout stays backed off. Reset at every ack,
        a host slowed down past ``ack_timeout_s`` (a database paused, a backlog) got every
        terminal's whole window again every ``ack_timeout_s``, which slowed it down further."""
        self._inflight.pop(number, None)
        sent = self._sent_at.pop(number, None)
        if number in self._resent:
            self._resent.discard(number)
        elif sent is not None:
            rtt = max(0.0, self._clock() - sent)
            self._timeout = min(MAX_ACK_TIMEOUT_S, max(self.ack_timeout_s, 2 * rtt))

    # --- what the host sends ----------------------------------------------------------------------
    def _receive(self, data: bytes) -> None:
        try:
            msg = open_(data, recipient_private_key=self.kem_key,
                        verify_key_for=self._host_key,
                        last_seq_for=lambda sender: None, now=self._wall() + self._clock_offset,
                        max_age_s=self.max_age_s, direction=TO_TERMINAL)
            if self._last_seen is not None and msg.seq <= self._last_seen:
                raise EnvelopeRejected("replay", f"host seq {msg.seq} is not after {self._last_seen}")
        except EnvelopeRejected as exc:
            self.stats["rejected"] += 1
            self.stats[f"rejected_{exc.reason_code}"] += 1
            log.warning("host message refused: %s", exc)
            self._log_rejection(exc)
            return
        self._last_seen = msg.seq
        if msg.type == "ack":
            if msg.body["epoch"] != self.ledger.epoch:
                self.stats["ack_other_epoch"] += 1       # of a report of a cleared memory (a replay)
                return
            if msg.body["seq"] == self._hello and "held" in msg.body:
                self._witness(msg.body["held"])
            if msg.body.get("conflict"):
                self._conflict(msg.body["seq"])
            if self.outbox.ack(msg.body["seq"]):
                self._acknowledged(msg.body["seq"])
            return
        self.last_host_seq = msg.seq
        self.ledger.store_setting(SETTING_HOST_SEQ, {"seq": msg.seq})
        if msg.type in COMMANDS:
            self._apply(msg.type, msg.body, msg.seq)
        else:
            self._voucher_reply(msg.body, msg.seq)

    def _witness(self, held: int) -> None:
        """The host, answering this session's hello, holds reports of this epoch up to ``held``.
        Beyond this critical memory's last report, the memory went back (old copies restored)."""
        last = self.outbox.last_number
        if held > last:
            self._behind(f"the host holds report {held} of epoch {self.ledger.epoch}, critical "
                         f"memory's last report is {last}", held=held, last_report=last)

    def _conflict(self, number: int) -> None:
        """The host holds another report under ``number``: only this terminal signs its reports,
        so its memory went back and made new records under numbers it had already used (a
        regression too small for ``held`` to show)."""
        self._behind(f"the host holds another report {number} of epoch {self.ledger.epoch} than "
                     "critical memory's", conflict=number, last_report=self.outbox.last_number)

    def _behind(self, what: str, **data: Any) -> None:
        """Critical memory is behind the host: recorded and locked (:meth:`Ledger.lock`), then the
        critical-memory halt; the link reports nothing more."""
        why = f"critical memory is behind the host's witness: {what}"
        log.critical("%s", why)
        self.behind = why
        try:
            self.ledger.event(WITNESS_EVENT, witness="host", epoch=self.ledger.epoch, **data)
            self.ledger.lock(why)
        except LedgerError as exc:
            log.critical("could not record it: %s", exc)
        raise CriticalMemoryError(why)

    def _log_rejection(self, exc: EnvelopeRejected) -> None:
        """A ``host.rejected`` event, at most one per reason per :data:`REJECTION_LOG_S` (with the
        count of those not logged): each event is itself a report, so a flood must not feed itself."""
        now = self._clock()
        last = self._rejection_logged.get(exc.reason_code)
        if last is not None and now - last < REJECTION_LOG_S:
            self._rejections_suppressed[exc.reason_code] += 1
            return
        self._rejection_logged[exc.reason_code] = now
        suppressed = self._rejections_suppressed.pop(exc.reason_code, 0)
        self.ledger.event("host.rejected", reason=exc.reason_code, detail=exc.message[:200],
                          not_logged_before=suppressed)

    # --- voucher validation (firmware.cashless.vouchers.Host) -------------------------------------
    def validate(self, validation: str) -> int | None:
        """Ask the host to authorise redeeming ``validation`` here: its amount, or None if refused.

        The request is a report (recorded first, so it is numbered and never lost); the terminal's
        thread waits up to ``redeem_timeout_s`` for the answer, handling the link meanwhile. No
        answer in time: the request is recorded as abandoned (the host then releases the voucher)
        and the voucher is refused as ``offline``.
        """
        from firmware.cashless.errors import VoucherRefused

        self._awaiting = validation
        try:
            self.ask_redemption(validation)
            deadline = self._clock() + self.redeem_timeout_s
            while self._clock() < deadline:
                self.poll()
                reply = self.redemption_answer(validation)
                if reply is not None:
                    return reply["amount_cents"] if reply["approved"] else None
                time.sleep(0.005)
        finally:
            self._awaiting = None
        self.abandon_redemption(validation)
        raise VoucherRefused("offline", f"the host did not answer within {self.redeem_timeout_s:g} s")

    def ask_redemption(self, validation: str) -> None:
        """Record the request to redeem ``validation`` here (a report, sent by :meth:`poll`); the
        host's answer arrives through :meth:`poll` and :meth:`redemption_answer` takes it. The
        first half of :meth:`validate`, for a caller that does not wait (the floor simulator runs
        many terminals on one thread). :class:`VoucherRefused` ``offline`` when not connected."""
        from firmware.cashless.errors import VoucherRefused

        if not self._connected:
            raise VoucherRefused("offline", "the host is not reachable")
        self.redemptions.pop(validation, None)
        self.ledger.voucher_record(validation, REDEEM_REQUEST_STATE)

    def redemption_answer(self, validation: str) -> dict[str, Any] | None:
        """The host's answer to :meth:`ask_redemption` (``approved``, ``amount_cents``), once."""
        return self.redemptions.pop(validation, None)

    def abandon_redemption(self, validation: str) -> None:
        """Record that this terminal stopped waiting for the answer (the host releases the voucher)."""
        self.ledger.voucher_record(validation, REDEEM_ABANDONED_STATE)

    def _last_voucher_state(self, validation: str) -> str | None:
        states = [r["body"].get("state") for r in self.ledger.records_for(validation) if r["kind"] == "voucher"]
        return states[-1] if states else None

    def _host_key(self, sender: str) -> Any:
        return self.identity.host_verify_key if sender == self.identity.host_name else None

    def _apply(self, type_: str, body: dict[str, Any], seq: int) -> None:
        """Apply host command number ``body["cmd"]`` once, in order (the module's docstring)."""
        cmd = body["cmd"]
        done = max(self.commands_applied, body["confirmed"])   # the host's: after a RAM clear here
        if cmd <= done:
            self.stats["command_repeats"] += 1                 # applied already: a resend, or a replay
            return
        if cmd != done + 1:
            self.stats["command_early"] += 1                   # the one before it comes first
            log.info("host command %d waits for %d", cmd, done + 1)
            return
        after: Callable[[], None] = _nothing
        with self.ledger.batch():                              # effect, confirmation, number: all or none
            try:
                after = self._command(type_, body, seq)
            except EgmError as exc:
                log.warning("host command %s failed: %s", type_, exc)
                self.ledger.event("host.command_failed", command=type_, seq=seq, detail=str(exc)[:200])
            self.ledger.event(COMMAND_EVENT, cmd=cmd, type=type_, seq=seq)
            self.ledger.store_setting(SETTING_COMMANDS, {"applied": cmd})
        self.commands_applied = cmd
        after()

    def _command(self, type_: str, body: dict[str, Any], seq: int) -> Callable[[], None]:
        """Record command ``type_``'s effect (inside the caller's batch); what to do to the cabinet
        once it is committed. Raises :class:`EgmError` before recording anything."""
        cabinet = None if self.terminal is None else self.terminal.cabinet
        if type_ == "disable":
            self.ledger.store_setting(SETTING_DISABLED, {"disabled": True, "reason": body.get("reason", "")})
            self.ledger.event("host.disabled", seq=seq, reason=body.get("reason", ""))
            return cabinet.disable if cabinet is not None else _nothing
        if type_ == "enable":
            self.ledger.store_setting(SETTING_DISABLED, {"disabled": False})
            self.ledger.event("host.enabled", seq=seq)
            return cabinet.enable if cabinet is not None else _nothing
        if type_ == "send_meters":
            self.ledger.meters_snapshot("host_request")
        elif type_ == "set_time":
            target = datetime.fromisoformat(body["iso"])
            offset = target - self._wall()
            self.ledger.event("host.set_time", seq=seq, time=body["iso"],
                              offset_ms=int(offset.total_seconds() * 1000))
            return lambda: setattr(self, "_clock_offset", offset)
        elif type_ == "package_offer":
            if self.packages is not None:
                self.packages.offer(body, seq)          # records package.offered, then downloads
            else:
                self.ledger.event("package.rejected", seq=seq, package=body["name"], version=body["version"],
                                  sha256=body["sha256"], reason="download_failed",
                                  detail="this terminal takes no game packages")
        else:  # pragma: no cover - COMMANDS has no other type
            raise EnvelopeError(f"no handler for {type_}")
        return _nothing

    def _voucher_reply(self, body: dict[str, Any], seq: int) -> None:
        """The host's answer to a redemption request (:meth:`validate` takes it)."""
        validation = body["validation"]
        if (validation != self._awaiting and body["approved"]
                and self._last_voucher_state(validation) == REDEEM_ABANDONED_STATE):
            # An approval after this terminal gave up: the host holds the voucher for it (its
            # request reached the host after, or with, the abandonment). Released again, now
            # ordered after that approval; otherwise the voucher could be redeemed nowhere.
            self.ledger.voucher_record(validation, REDEEM_ABANDONED_STATE, late_reply_seq=seq)
        else:
            self.redemptions[validation] = dict(body)
