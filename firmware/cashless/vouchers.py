"""The voucher book: TITO vouchers issued and redeemed, every state change in critical memory first.

A voucher's state is never kept anywhere but the ledger: each change is one ledger record whose
``ref`` is the validation number, committed *before* the caller prints, shows or pays anything. The
book's in-memory view is a fold over those records (:meth:`VoucherBook._apply`), the same function
at open (rebuilt from the log) and after each commit, so a power loss at any instant leaves exactly
the state the records say.

States and the record that enters each one (docs/cashless.md; the moves are the rows of
:data:`~firmware.cashless.voucher_states.VOUCHER_TABLE`, which the book asks before it writes a
record, so a move it does not hold raises and writes nothing)::

    (none) --issue--------> ISSUED          voucher record  state "issued"  (no meter moves)
    ISSUED --printed------> PRINTED         ticket_out      (ticket_out meter up, credits down)
    ISSUED --void---------> VOID            voucher record  state "void"    (credits stay)
    PRINTED --begin_redeem-> REDEEM_PENDING voucher record  state "redeem_pending"
    (none) --begin_redeem--> REDEEM_PENDING (a host-validated voucher of another machine)
    REDEEM_PENDING --commit_redeem-> REDEEMED   ticket_in   (ticket_in meter up, credits up)
    REDEEM_PENDING --cancel_redeem-> previous   voucher record  state "redeem_returned"

PRINTED and REDEEMED are never written as voucher records: they are the ``ticket_out`` and
``ticket_in`` money records themselves, so the state and the meters cannot disagree.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from firmware.cashless.errors import VoucherError, VoucherRefused, VoucherStateError
from firmware.cashless.validation import (
    format_validation,
    offline_validation,
    parse_validation,
    validation_key,
)
from firmware.cashless.voucher_states import VOUCHER_TABLE, VoucherState
from firmware.ledger.ledger import Ledger
from hal.devices.ticket import MAX_TICKET_CENTS, Ticket, TicketKind

#: The largest voucher: what a ticket can print ($999,999.99).
MAX_CENTS = MAX_TICKET_CENTS

#: The reason :meth:`VoucherBook.void` records for a voucher found ISSUED at power-up.
POWER_LOST = "power lost before the printer confirmed"

# voucher record states (the ``state`` of a ``voucher`` ledger record)
R_ISSUED = "issued"
R_VOID = "void"
R_REDEEM_PENDING = "redeem_pending"
R_REDEEM_RETURNED = "redeem_returned"
#: the host link's records of a redemption through the host (firmware/hostlink): the request, in
#: critical memory before it is sent, and the terminal giving up on it (the host releases the voucher)
R_HOST_REQUEST = "host_request"
R_REDEEM_ABANDONED = "redeem_abandoned"
#: The reason :meth:`VoucherBook.abandon_request` records for a request found unanswered at power-up.
POWER_LOST_ASKING = "power lost before the redemption went ahead"
#: The field of an ISSUED record that says whether the issuer may pay the voucher without the host
#: (``[money] offline_redemption`` when it was issued). The host reads it from the report: such a
#: voucher is approved at no other terminal (docs/cashless.md, "Offline redemption").
OFFLINE_FIELD = "offline_redemption"


class Host(Protocol):
    """The casino host's ticket validation (the host link answers it)."""

    def validate(self, validation: str) -> int | None:
        """The voucher's amount in cents if the host authorises its redemption, else None."""
        ...


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True, slots=True)
class IssuedVoucher:
    """A voucher issued by this terminal: what the printer prints (with the venue and machine)."""

    validation: str                      #: 18 digits
    sequence: int                        #: the voucher sequence number (1, 2, ...)
    amount_cents: int
    issued: dt.datetime                  #: UTC, whole seconds (print it in the cabinet's local time)
    expiry_days: int                     #: 0: never expires
    cashable: bool = True

    @property
    def ticket_number(self) -> int:
        """The 0..9999 ticket number printed on the voucher: the sequence modulo 10000."""
        return self.sequence % 10000

    @property
    def printed_validation(self) -> str:
        """``SS-NNNN-NNNN-NNNN-NNNN``."""
        return format_validation(self.validation)

    @property
    def expires(self) -> dt.datetime | None:
        """The instant after which the voucher no longer redeems (None: never)."""
        return self.issued + dt.timedelta(days=self.expiry_days) if self.expiry_days else None

    def ticket(self, *, venue: str, address: tuple[str, ...], machine: str,
               kind: TicketKind = TicketKind.CASHABLE) -> Ticket:
        """What the printer prints for it at ``venue`` on ``machine`` (issued in local time)."""
        return Ticket(venue=venue, address=address, machine=machine,
                      issued=self.issued.astimezone().replace(tzinfo=None, microsecond=0),
                      amount_cents=self.amount_cents, validation=self.validation,
                      validation_text=self.printed_validation, sequence=self.ticket_number,
                      expiry_days=self.expiry_days, kind=kind)


@dataclass(frozen=True, slots=True)
class Redemption:
    """A voucher that may be (or is being) redeemed: its amount goes to the credit meter."""

    validation: str
    amount_cents: int
    cashable: bool
    source: str                          #: "own": this terminal's records; "host": the host validated it


@dataclass(slots=True)
class _Entry:
    """One voucher as the book's records say it is."""

    validation: str
    state: VoucherState
    own: bool
    amount_cents: int
    cashable: bool = True
    sequence: int | None = None
    issued: dt.datetime | None = None
    expiry_days: int = 0
    reason: str | None = None
    previous: VoucherState | None = None          #: the state a returned redemption goes back to
    source: str = "own"                           #: of the pending or completed redemption
    #: who asked for the pending redemption (e.g. "sas"), copied to its return record; None: the cabinet
    channel: str | None = None
    #: issued with offline redemption allowed (a record without the flag predates it: it may have been)
    offline: bool = True

    def issued_voucher(self) -> IssuedVoucher:
        assert self.sequence is not None and self.issued is not None
        return IssuedVoucher(self.validation, self.sequence, self.amount_cents, self.issued,
                             self.expiry_days, self.cashable)

    def expired(self, now: dt.datetime) -> bool:
        return (self.issued is not None and self.expiry_days > 0
                and now > self.issued + dt.timedelta(days=self.expiry_days))


def _aware(when: dt.datetime) -> dt.datetime:
    if not isinstance(when, dt.datetime):
        raise VoucherError(f"the voucher clock returns datetimes, not {when!r}")
    return when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when.astimezone(dt.UTC)


def _text(what: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise VoucherError(f"{what} must be non-empty text, not {value!r}")
    return value


class VoucherBook:
    """TITO vouchers over critical memory: issue, confirm or void, validate and redeem.

    ``terminal_id`` enters the offline validation numbers; ``expiry_days`` (0: never) is recorded
    with each voucher when issued; ``offline_redemption`` (off by default) lets this terminal's own
    vouchers redeem without a host: it is recorded with each voucher when issued (the host then
    approves that voucher at no other terminal, docs/cashless.md), and only a voucher issued so
    redeems offline; ``clock`` gives the time (aware datetimes; naive ones are taken as UTC).
    One book per ledger, one writer, like the ledger.
    """

    def __init__(self, ledger: Ledger, *, terminal_id: str, expiry_days: int = 30,
                 offline_redemption: bool = False, clock: Callable[[], dt.datetime] = _utc_now) -> None:
        _text("a terminal id", terminal_id)
        if isinstance(expiry_days, bool) or not isinstance(expiry_days, int) or not 0 <= expiry_days <= 9999:
            raise VoucherError(f"voucher expiry is 0..9999 days, not {expiry_days!r}")
        self._ledger = ledger
        self.terminal_id = terminal_id
        self.expiry_days = expiry_days
        self.offline_redemption = bool(offline_redemption)
        self._clock = clock
        self._key: bytes | None = None
        self._entries: dict[str, _Entry] = {}          # insertion order: first record, oldest first
        self._other_refs: set[str] = set()             # tickets out the book did not issue
        self._last_sequence = 0
        self._unconfirmed: str | None = None
        self._pending: str | None = None
        #: redemptions asked of the host and not gone ahead (no REDEEM_PENDING), returned or
        #: abandoned yet: validation -> None, oldest first
        self._asked: dict[str, None] = {}
        records = ledger.transactions(("voucher", "ticket_out", "ticket_in"), -1)
        for record in reversed(records):
            body = {k: v for k, v in record.items() if k not in ("seq", "kind", "time")}
            self._apply(record["kind"], body)
        ledger.listeners.append(self._on_record)

    def _on_record(self, seq: int, kind: str, ref: str | None, time_: str, body: dict[str, Any]) -> None:
        """The host link records a request and its abandonment itself: fold them in as committed."""
        if kind == "voucher" and body.get("state") in (R_HOST_REQUEST, R_REDEEM_ABANDONED):
            self._apply(kind, body)

    # --- the fold: records -> state ------------------------------------------------------------
    def _apply(self, kind: str, body: dict[str, Any]) -> None:
        """Update the book with one committed record (at open, and after each commit)."""
        v = body["validation"]
        entry = self._entries.get(v)
        if kind == "voucher" and body["state"] == R_HOST_REQUEST:
            self._asked[v] = None
        else:                                    # any later step of it settles the request
            self._asked.pop(v, None)
        if kind == "voucher":
            state = body["state"]
            if state == R_ISSUED:
                if entry is not None:
                    return                       # a number issued twice cannot be made; keep the first
                self._entries[v] = _Entry(
                    v, VoucherState.ISSUED, True, body["amount_cents"], body.get("cashable", True),
                    body["sequence"], dt.datetime.fromisoformat(body["issued"]), body["expiry_days"],
                    offline=body.get(OFFLINE_FIELD, True))
                self._last_sequence = max(self._last_sequence, body["sequence"])
                self._unconfirmed = v
            elif state == R_VOID and entry is not None:
                entry.state = VoucherState.VOID
                entry.reason = body.get("reason")
            elif state == R_REDEEM_PENDING:
                if entry is None:               # another machine's voucher, validated by the host
                    entry = self._entries[v] = _Entry(v, VoucherState.REDEEM_PENDING, False,
                                                      body["amount_cents"])
                else:
                    entry.previous = entry.state
                entry.state = VoucherState.REDEEM_PENDING
                entry.amount_cents = body["amount_cents"]
                entry.cashable = body.get("cashable", True)
                entry.source = body.get("source", "own")
                entry.channel = body.get("channel")
                entry.reason = None
                self._pending = v
            elif state == R_REDEEM_RETURNED and entry is not None:
                if entry.previous is None:
                    del self._entries[v]         # another machine's voucher: it is not ours again
                else:
                    entry.state = entry.previous
                    entry.reason = body.get("reason")
                entry.previous = None
        elif kind == "ticket_out":
            if entry is not None and entry.own and entry.state is VoucherState.ISSUED:
                entry.state = VoucherState.PRINTED
            elif entry is None:
                self._other_refs.add(v)
        elif kind == "ticket_in":
            if entry is None:
                entry = self._entries[v] = _Entry(v, VoucherState.REDEEMED, False, body["cents"],
                                                  body.get("cashable", True), source="host")
            entry.state = VoucherState.REDEEMED
            entry.previous = None
        if self._unconfirmed == v and (entry := self._entries.get(v)) is not None \
                and entry.state is not VoucherState.ISSUED:
            self._unconfirmed = None
        if self._pending == v and (v not in self._entries
                                   or self._entries[v].state is not VoucherState.REDEEM_PENDING):
            self._pending = None

    def _record(self, validation: str, state: str, **data: Any) -> None:
        self._ledger.voucher_record(validation, state, **data)
        self._apply("voucher", {**data, "validation": validation, "state": state})

    def _now(self) -> dt.datetime:
        return _aware(self._clock())

    def _entry(self, validation: str) -> _Entry:
        v = parse_validation(validation)
        entry = self._entries.get(v)
        if entry is None:
            raise VoucherStateError(f"voucher {format_validation(v)} is not in this terminal's book")
        return entry

    def _move(self, validation: str, trigger: str, dest: VoucherState | None) -> None:
        """Before the record that moves the voucher is written: the move must be a row of the
        table (:class:`VoucherStateError` otherwise, and nothing is written)."""
        entry = self._entries.get(validation)
        VOUCHER_TABLE.move(entry.state if entry else None, trigger, dest,
                           what=f"voucher {format_validation(validation)}")

    # --- issuing -------------------------------------------------------------------------------
    def _exists(self, validation: str) -> bool:
        return (validation in self._entries or validation in self._other_refs
                or bool(self._ledger.records_for(validation)))

    def issue(self, amount_cents: int, *, validation: str | None = None, **extra: Any) -> IssuedVoucher:
        """Record a new voucher for ``amount_cents`` (ISSUED) and return what to print.

        ``validation``: the number to print, when a validation system gives it (SAS secure-enhanced
        or system validation); it must be 18 digits the book never held (else :class:`VoucherError`,
        nothing recorded). ``extra`` fields are kept in the ISSUED record (the giver's own data,
        e.g. the SAS validation sequence, committed with the voucher).

        Refused (:class:`VoucherError` / :class:`VoucherStateError`, nothing recorded) when the
        amount is not a positive whole number of credits up to $999,999.99 or exceeds the credit
        meter, when a round is in progress, or when another voucher is still ISSUED (unconfirmed).
        The ISSUED record is committed before this returns; the credits leave the meter only with
        :meth:`printed`.
        """
        ledger = self._ledger
        if isinstance(amount_cents, bool) or not isinstance(amount_cents, int) or amount_cents <= 0:
            raise VoucherError(f"a voucher amount is a positive whole number of cents, not {amount_cents!r}")
        if amount_cents > MAX_CENTS:
            raise VoucherError(f"a voucher is worth at most {MAX_CENTS} cents, not {amount_cents}")
        if amount_cents % ledger.denom_cents:
            raise VoucherError(f"{amount_cents} cents is not a whole number of "
                               f"{ledger.denom_cents}-cent credits")
        if self._unconfirmed is not None:
            raise VoucherStateError(f"voucher {format_validation(self._unconfirmed)} is not confirmed "
                                    "printed or void yet")
        if ledger.open_round is not None:
            raise VoucherStateError(f"no voucher while round {ledger.open_round.round_id} is in progress")
        if amount_cents > ledger.credits_cents:
            raise VoucherStateError(f"a voucher for {amount_cents} cents exceeds the credit meter "
                                    f"({ledger.credits_cents} cents)")
        sequence = self._last_sequence + 1
        if validation is not None:
            validation = parse_validation(validation)
            if self._exists(validation):
                raise VoucherError(f"validation number {format_validation(validation)} was used before")
        else:
            if self._key is None:
                self._key = validation_key(ledger)
            assert self._key is not None
            validation = offline_validation(self._key, self.terminal_id, sequence)
            while self._exists(validation):      # never reuse a number: skip to the next sequence
                sequence += 1
                validation = offline_validation(self._key, self.terminal_id, sequence)
        issued = self._now().replace(microsecond=0)
        self._move(validation, "issue", VoucherState.ISSUED)
        self._record(validation, R_ISSUED, **extra, sequence=sequence, amount_cents=amount_cents,
                     cashable=True, issued=issued.isoformat(), expiry_days=self.expiry_days,
                     terminal_id=self.terminal_id, **{OFFLINE_FIELD: self.offline_redemption})
        return self._entries[validation].issued_voucher()

    def printed(self, validation: str) -> IssuedVoucher:
        """The printer confirmed the voucher: ISSUED -> PRINTED by committing ``ticket_out`` (the
        ticket_out meter goes up and the credits leave the meter with that one record)."""
        entry = self._entry(validation)
        self._move(entry.validation, "printed", VoucherState.PRINTED)
        self._ledger.ticket_out(entry.amount_cents, entry.validation, cashable=entry.cashable)
        self._apply("ticket_out", {"cents": entry.amount_cents, "validation": entry.validation,
                                   "cashable": entry.cashable})
        return entry.issued_voucher()

    def void(self, validation: str, reason: str) -> IssuedVoucher:
        """The printer did not confirm the voucher: ISSUED -> VOID. The credits stay on the meter and
        the number never redeems."""
        _text("a void reason", reason)
        entry = self._entry(validation)
        self._move(entry.validation, "void", VoucherState.VOID)
        self._record(entry.validation, R_VOID, reason=reason)
        return entry.issued_voucher()

    def unconfirmed(self) -> IssuedVoucher | None:
        """The voucher still ISSUED, if any: after a power loss the terminal voids it
        (:data:`POWER_LOST`) before doing anything else with the credits."""
        if self._unconfirmed is None:
            return None
        return self._entries[self._unconfirmed].issued_voucher()

    # --- redeeming -----------------------------------------------------------------------------
    def check(self, validation: str, *, host: Host | None = None) -> Redemption:
        """Whether the voucher may be redeemed, and for how much; changes nothing.

        Raises :class:`VoucherRefused` with ``reason_code``:

        * ``unknown``: not a validation number, not confirmed printed by this terminal's records
          and the host refused it (or gave a nonsensical amount);
        * ``already_redeemed``: a ``ticket_in`` for it is already in critical memory;
        * ``void``: this terminal voided it (never printed, or not confirmed);
        * ``expired``: this terminal's voucher, past its expiry;
        * ``pending``: its redemption is in progress, or it is still being printed;
        * ``offline``: another machine's voucher and no host, or no host and offline redemption
          not configured.

        With ``host``, a voucher the records do not refuse is validated by the host (its amount
        must match this terminal's own record, for its own vouchers): source ``"host"``. Without a
        host, only this terminal's own PRINTED, unexpired vouchers redeem, and only with
        ``offline_redemption`` both now and when the voucher was issued: source ``"own"``.
        """
        try:
            v = parse_validation(validation)
        except VoucherError as exc:
            raise VoucherRefused("unknown", str(exc)) from None
        shown = format_validation(v)
        entry = self._entries.get(v)
        if entry is not None:
            if entry.state is VoucherState.REDEEMED:
                raise VoucherRefused("already_redeemed", f"voucher {shown} is already redeemed")
            if entry.state is VoucherState.REDEEM_PENDING:
                raise VoucherRefused("pending", f"voucher {shown} is being redeemed")
            if entry.state is VoucherState.VOID:
                raise VoucherRefused("void", f"voucher {shown} is void ({entry.reason})")
            if entry.state is VoucherState.ISSUED:
                raise VoucherRefused("pending", f"voucher {shown} is not confirmed printed yet")
        if any(r["kind"] == "ticket_in" for r in self._ledger.records_for(v)):
            # paid once already, whoever committed it: critical memory itself is the last word
            raise VoucherRefused("already_redeemed", f"voucher {shown} is already redeemed")
        if entry is not None and entry.expired(self._now()):
            assert entry.issued is not None
            raise VoucherRefused("expired", f"voucher {shown} expired ({entry.expiry_days} days "
                                            f"after {entry.issued:%Y-%m-%d})")
        if host is None:
            if entry is None:
                raise VoucherRefused("offline", f"voucher {shown} is not this terminal's and no host "
                                                "can validate it")
            if not self.offline_redemption:
                raise VoucherRefused("offline", f"voucher {shown}: no host, and offline redemption "
                                                "is not configured")
            if not entry.offline:
                raise VoucherRefused("offline", f"voucher {shown}: no host, and it was issued for "
                                                "redemption through the host only")
            return Redemption(v, entry.amount_cents, entry.cashable, "own")
        amount = host.validate(v)
        if amount is None:
            raise VoucherRefused("unknown", f"the host refused voucher {shown}")
        if (isinstance(amount, bool) or not isinstance(amount, int) or not 0 < amount <= MAX_CENTS
                or amount % self._ledger.denom_cents):
            raise VoucherRefused("unknown", f"the host gave voucher {shown} an impossible amount {amount!r}")
        if entry is not None and amount != entry.amount_cents:
            raise VoucherRefused("unknown", f"the host's amount {amount} for voucher {shown} is not "
                                            f"the printed {entry.amount_cents}")
        return Redemption(v, amount, True if entry is None else entry.cashable, "host")

    def begin_redeem(self, validation: str, *, host: Host | None = None, cashable: bool | None = None,
                     **extra: Any) -> Redemption:
        """The voucher is in the validator's escrow: :meth:`check` it and, if it may redeem, commit
        REDEEM_PENDING before the validator is told to stack it. Raises what :meth:`check` raises;
        :class:`VoucherStateError` if another voucher's redemption is still pending. ``cashable``:
        the host's word on another machine's voucher (SAS: a restricted ticket is not cashable);
        ``extra`` fields are kept in the record (``channel``: who asked, copied to a return)."""
        if self._pending is not None and self._pending != validation:
            try:
                same = parse_validation(validation) == self._pending
            except VoucherError:
                same = False
            if not same:
                raise VoucherStateError(
                    f"voucher {format_validation(self._pending)} is still being redeemed")
        redemption = self.check(validation, host=host)
        if cashable is not None and redemption.validation not in self._entries:
            redemption = Redemption(redemption.validation, redemption.amount_cents, cashable,
                                    redemption.source)
        self._move(redemption.validation, "begin_redeem", VoucherState.REDEEM_PENDING)
        self._record(redemption.validation, R_REDEEM_PENDING, **extra, amount_cents=redemption.amount_cents,
                     cashable=redemption.cashable, source=redemption.source)
        return redemption

    def commit_redeem(self, validation: str) -> Redemption:
        """The voucher is stacked: REDEEM_PENDING -> REDEEMED by committing ``ticket_in`` (the
        ticket_in meter and the credits go up with that one record)."""
        entry = self._entry(validation)
        self._move(entry.validation, "commit_redeem", VoucherState.REDEEMED)
        self._ledger.ticket_in(entry.amount_cents, entry.validation, cashable=entry.cashable)
        self._apply("ticket_in", {"cents": entry.amount_cents, "validation": entry.validation,
                                  "cashable": entry.cashable})
        return Redemption(entry.validation, entry.amount_cents, entry.cashable, entry.source)

    def cancel_redeem(self, validation: str, reason: str) -> None:
        """The voucher was returned to the player (or never stacked): REDEEM_PENDING -> the state it
        had before (PRINTED for this terminal's own; another machine's is forgotten again)."""
        _text("a cancel reason", reason)
        entry = self._entry(validation)
        self._move(entry.validation, "cancel_redeem", entry.previous)
        channel = {"channel": entry.channel} if entry.channel else {}
        self._record(entry.validation, R_REDEEM_RETURNED, reason=reason,
                     restored=entry.previous.value if entry.previous else None, **channel)

    def pending_redemption(self) -> Redemption | None:
        """The redemption in progress, if any: at power-up the terminal settles it with
        :meth:`commit_redeem` (the validator stacked the ticket) or :meth:`cancel_redeem`."""
        if self._pending is None:
            return None
        entry = self._entries[self._pending]
        return Redemption(entry.validation, entry.amount_cents, entry.cashable, entry.source)

    def unsettled_requests(self) -> list[str]:
        """The redemptions asked of the host (a ``host_request`` record, committed before the
        request is sent) that neither went ahead (REDEEM_PENDING) nor were abandoned: at power-up
        the terminal abandons each (:meth:`abandon_request`) so the host releases its approval,
        whether or not it gave one. Oldest first."""
        return list(self._asked)

    def abandon_request(self, validation: str, reason: str) -> None:
        """Record that this terminal gave up the redemption it asked the host for (a
        ``redeem_abandoned`` record, reported to the host, which releases the voucher if it holds
        it for this terminal). A request that is not unsettled is a :class:`VoucherStateError`."""
        _text("an abandon reason", reason)
        v = parse_validation(validation)
        if v not in self._asked:
            raise VoucherStateError(f"no unsettled request to the host for voucher {format_validation(v)}")
        self._ledger.voucher_record(v, R_REDEEM_ABANDONED, reason=reason)
        self._asked.pop(v, None)

    # --- looking ---------------------------------------------------------------------------------
    def state(self, validation: str) -> VoucherState | None:
        """The voucher's state, or None if the book has no voucher of that number."""
        entry = self._entries.get(parse_validation(validation))
        return entry.state if entry else None

    def history(self, last: int = 35) -> list[dict[str, Any]]:
        """The last ``last`` vouchers, newest first (by their first record), for the service menu:
        ``validation``, ``state``, ``amount_cents``, ``cashable``, ``own``, ``source``,
        ``sequence`` and ``ticket_number`` (own), ``issued`` and ``expires`` (ISO, own),
        ``expiry_days``, ``reason`` (void / returned), and ``times``: the ledger time of each step
        (``issued``, ``printed``, ``void``, ``redeem_pending``, ``redeem_returned``, ``redeemed``)."""
        if isinstance(last, bool) or not isinstance(last, int) or last < 0:
            raise VoucherError(f"history: last must be a whole number >= 0, not {last!r}")
        out: list[dict[str, Any]] = []
        for entry in reversed(list(self._entries.values())[-last:] if last else []):
            own = entry.own
            issued = entry.issued_voucher() if own else None
            out.append({
                "validation": entry.validation,
                "state": entry.state.value,
                "amount_cents": entry.amount_cents,
                "cashable": entry.cashable,
                "own": own,
                "source": entry.source if entry.state in (VoucherState.REDEEM_PENDING,
                                                          VoucherState.REDEEMED) else None,
                "sequence": issued.sequence if issued else None,
                "ticket_number": issued.ticket_number if issued else None,
                "issued": issued.issued.isoformat() if issued else None,
                "expires": issued.expires.isoformat() if issued and issued.expires else None,
                "expiry_days": entry.expiry_days if own else None,
                "reason": entry.reason,
                "times": self._times(entry.validation),
            })
        return out

    def _times(self, validation: str) -> dict[str, str]:
        times: dict[str, str] = {}
        for record in self._ledger.records_for(validation):
            kind = record["kind"]
            step = {"ticket_out": "printed", "ticket_in": "redeemed"}.get(kind)
            if kind == "voucher":
                step = record["body"]["state"]
            if step:
                times[step] = record["time"]
        return times


__all__ = ["POWER_LOST", "POWER_LOST_ASKING", "Host", "IssuedVoucher", "Redemption", "VoucherBook", "VoucherState"]
