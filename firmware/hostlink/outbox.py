"""The persistent outbox: the host reports are critical-memory records, numbered as they are made.

Nothing is copied into a separate queue. A report *is* a record of the ledger (an event, a note
stacked, a voucher printed, a round completed, a meters snapshot...), so it is in critical memory
before anything is shown or paid, and a power cut cannot lose it. The outbox numbers the reportable
records in log order: report 1 is the first reportable record ever written, report 2 the next, and
so on, so the numbering is a pure function of the log and is rebuilt the same at every start. These
numbers are the envelope's sequence numbers: they never repeat, never go back and have no gaps.

The host acknowledges each report it stored (``ack`` command). Acknowledged reports leave the
outbox; the contiguous watermark (every report up to N acknowledged) is written back to critical
memory as a ``host_ack`` record, at most every :data:`ACK_FLUSH_EVERY` reports or
:data:`ACK_FLUSH_S` seconds. A report acknowledged but not yet flushed when the power goes is sent
again after power-up, and the host, which de-duplicates by (terminal, sequence), acknowledges it
again without storing it twice: at-least-once delivery, exactly-once storage.

Which records are reports (:data:`REPORTED`), and what message each becomes (:func:`build`), is
documented in docs/protocols/host-envelope.md; changing it renumbers every terminal's reports, so it
changes only with the protocol version.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from firmware.cashless.vouchers import R_HOST_REQUEST, R_REDEEM_ABANDONED
from firmware.ledger.ledger import Ledger

#: record kind -> message type. Other kinds (settings, host acks, a round's intermediate journal
#: steps) are not reported.
REPORTED: dict[str, str] = {
    "event": "event",
    "bill": "event",
    "ticket_in": "event",
    "ticket_out": "event",
    "handpay": "event",
    "transfer_in": "event",
    "transfer_out": "event",
    "voucher": "event",
    "round.deal": "event",
    "round.complete": "round",
    "meters": "meters",
}
#: voucher records in this state ask the host to authorise a redemption (see ``firmware/cashless``)
REDEEM_REQUEST_STATE = R_HOST_REQUEST
#: ... and in this state say the terminal stopped waiting for the answer (the host releases it)
REDEEM_ABANDONED_STATE = R_REDEEM_ABANDONED
#: the event a terminal records at each start with its encryption key for the host's commands
HELLO_EVENT = "hostlink.hello"
ACK_FLUSH_EVERY = 64
ACK_FLUSH_S = 2.0

_EVENT_NAMES = {"bill": "bill_in", "round.deal": "game_start"}


def _plain(value: Any) -> Any:
    """The JSON the envelope accepts: floats (monotonic times in cabinet events) become strings."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def build(ledger: Ledger, record: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The message (type, body) that reports ``record`` (a :meth:`Ledger.log_record`)."""
    kind, body, at = record["kind"], record["body"], record["time"]
    if kind == "meters":
        return "meters", {"meters": body["meters"], "credits": body["credits"],
                          "credit_count": body["credit_count"], "denomination": body["denomination"],
                          "reason": body["reason"], "at": at}
    if kind == "round.complete":
        return "round", {"record": _plain(ledger.round_record(record["ref"])), "at": at}
    if kind == "voucher" and body.get("state") == REDEEM_REQUEST_STATE:
        return "voucher_redeem_request", {"validation": body["validation"], "at": at}
    if kind == "event" and body.get("event") == HELLO_EVENT:
        return "hello", {"software": body["software"], "last_host_seq": body["last_host_seq"],
                         "kem_public": body["kem_public"], "at": at}
    if kind == "event":
        data = {k: v for k, v in body.items() if k != "event"}
        return "event", {"name": body["event"], "data": _plain(data), "at": at}
    if kind == "round.deal":
        entry = body["entry"]["data"]
        data = {"round_id": record["ref"], "game": body["game"], "wagers": entry["wagers"],
                "credits_before": body["credits_before"]}
        return "event", {"name": "game_start", "data": _plain(data), "at": at}
    return "event", {"name": _EVENT_NAMES.get(kind, kind), "data": _plain(body), "at": at}


class Outbox:
    """The reports not yet acknowledged, by number, rebuilt from critical memory at start (in a time
    that follows what is outstanding, not the length of the history)."""

    def __init__(self, ledger: Ledger, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.ledger = ledger
        self._clock = clock
        # From what the ledger keeps as it absorbs records (carried by its checkpoints): how many
        # reports were made and the highest acknowledged; only the outstanding ones are read.
        #: the newest report's number
        self.last_number = sum(ledger.kind_counts.get(kind, 0) for kind in REPORTED)
        self.watermark = ledger.host_acked        #: every report up to here is acknowledged
        self._flushed = self.watermark            #: the watermark critical memory holds
        self._flushed_at = clock()
        outstanding = ledger.newest_of(REPORTED, self.last_number - self.watermark)
        #: report number -> log seq, ascending
        self._pending: dict[int, int] = dict(zip(range(self.last_number - len(outstanding) + 1,
                                                       self.last_number + 1), outstanding, strict=True))
        self._acked: set[int] = set()             #: acknowledged above the watermark
        ledger.listeners.append(self._on_record)

    def _absorb(self, seq: int, kind: str, ref: str | None) -> None:
        if kind in REPORTED:
            self.last_number += 1
            if self.last_number > self.watermark:
                self._pending[self.last_number] = seq
        elif kind == "host_ack" and ref is not None:
            upto = int(ref)
            if upto > self.watermark:
                self.watermark = upto
                for n in [n for n in self._pending if n <= upto]:
                    del self._pending[n]

    def _on_record(self, seq: int, kind: str, ref: str | None, time: str, body: dict[str, Any]) -> None:
        if kind != "host_ack":
            self._absorb(seq, kind, ref)

    def close(self) -> None:
        if self._on_record in self.ledger.listeners:
            self.ledger.listeners.remove(self._on_record)

    # --- what to send ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._pending)

    def __contains__(self, number: object) -> bool:
        """Report ``number`` is outstanding (not acknowledged yet)."""
        return number in self._pending

    def numbers(self) -> list[int]:
        """Unacknowledged report numbers, oldest first."""
        return list(self._pending)

    def message(self, number: int) -> tuple[str, dict[str, Any]]:
        """The (type, body) of report ``number``, built from its record, with the epoch of the
        critical memory that numbered it (the host's duplicate check is by terminal, epoch, number)."""
        type_, body = build(self.ledger, self.ledger.log_record(self._pending[number]))
        return type_, {**body, "epoch": self.ledger.epoch}

    # --- acknowledgements -------------------------------------------------------------------------
    def ack(self, number: int) -> bool:
        """The host stored report ``number``; False if it is not outstanding (a repeat, or nonsense)."""
        if number not in self._pending:
            return False
        del self._pending[number]
        self._acked.add(number)
        while self.watermark + 1 in self._acked:
            self.watermark += 1
            self._acked.discard(self.watermark)
        return True

    def flush(self, *, force: bool = False) -> bool:
        """Write the watermark to critical memory when enough has changed (or ``force``)."""
        if self.watermark == self._flushed:
            return False
        now = self._clock()
        if force or self.watermark - self._flushed >= ACK_FLUSH_EVERY or now - self._flushed_at >= ACK_FLUSH_S:
            self.ledger.host_ack(self.watermark)
            self._flushed, self._flushed_at = self.watermark, now
            return True
        return False
