"""Money in and out as the lab checks it: the bill validator (every configured note credited once, a
rejected note, the validator's faults), the cash-out voucher (its fields on the paper), its
redemption (once; again refused; expired refused), and the printer running out of paper mid-ticket.

Every outcome is read from the terminal (status, service meters, events, bills and tickets); the
paper read back from the simulated printer (``sim printer last``) is what the product printed.
"""

from __future__ import annotations

import datetime as dt

import pytest

from firmware.hil.checks_money import (
    backdated_voucher,
    cash_out_all,
    config_of,
    delta,
    events_since,
    fresh,
    last_seq,
    meter_values,
    settle,
    tickets,
    tilt_names,
    until,
)
from firmware.hil.errors import Blocked, TargetError

TARGETS = ("sim", "cabinet")


def _insert(cabinet, operator, dollars: int) -> None:
    """A note of ``dollars`` into the validator, until the terminal has taken it."""
    before = cabinet.status()["credits_cents"]
    operator.do(f"insert a ${dollars} note", sim=lambda: cabinet.insert_note(dollars),
                verify=lambda: cabinet.status()["credits_cents"] >= before + dollars * 100)
    settle(cabinet)


def _retry_ticket(cabinet) -> bool:
    """The player's CASH OUT in a printer handpay (``retry_ticket``); False while the terminal
    says the printer is not ready yet (it has not polled the reloaded printer)."""
    try:
        cabinet.control("retry_ticket")
    except TargetError as exc:
        if "not ready" in str(exc):
            return False
        raise
    return True


DENOMINATIONS = (
    "Every note the validator is configured to accept must add exactly its value to the credit "
    "meter, once, and be counted once in the bill meters (in total and for its denomination). "
    "(Section title: 'Bill Validator Requirements' / bill acceptance and accounting; number approximate.)")


@pytest.mark.hil(id="validator.denominations", standard="gli-11", clause="4.12 Bill Validators (approx.)",
                 requirement=DENOMINATIONS, title="Every configured note is credited exactly once",
                 operator=True, duration=12, targets=TARGETS)
def test_denominations(cabinet, record, operator):
    notes = list(config_of(cabinet).money.notes_cents)
    record.note(f"the configured note table ([money] notes_cents): {notes}")
    record.measure("notes in the configured table", len(notes), low=1)
    fresh(cabinet, record)
    for cents in notes:
        before = meter_values(cabinet)
        bills_before = cabinet.service("bills", "1")["bills"]
        record.step(f"insert one ${cents // 100} note")
        _insert(cabinet, operator, cents // 100)
        after = meter_values(cabinet)
        label = f"${cents // 100} note"
        record.measure(f"{label}: credit meter rise", delta(after, before, "credits"), equals=cents, unit="cents",
                       soft=True)
        record.measure(f"{label}: bills_in meter rise", delta(after, before, "bills_in"), equals=cents,
                       unit="cents", soft=True)
        record.measure(f"{label}: notes counted of its denomination", delta(after, before, f"bills.{cents}"),
                       equals=1, soft=True)
        others = sum(abs(delta(after, before, f"bills.{c}")) for c in notes if c != cents)
        record.measure(f"{label}: notes counted of other denominations", others, equals=0, soft=True)
        newest = cabinet.service("bills", "1")["bills"]
        new = [b for b in newest if not bills_before or b["seq"] > bills_before[0]["seq"]]
        record.measure(f"{label}: bill record logged", [b.get("denom_cents") for b in new], equals=[cents],
                       soft=True)
    record.step("cash out (the cabinet is left with no credits)")
    cash_out_all(cabinet)


REJECTED = (
    "A note the validator does not recognise is returned to the player: it adds nothing to the "
    "credit or bill meters, and the rejection is logged. "
    "(Section title: 'Bill Validator Requirements'; number approximate.)")


@pytest.mark.hil(id="validator.rejected", standard="gli-11", clause="4.12 Bill Validators (approx.)",
                 requirement=REJECTED, title="A rejected note credits nothing and is logged", operator=True,
                 duration=2, targets=TARGETS)
def test_rejected(cabinet, record, operator):
    fresh(cabinet, record)
    before, seq = meter_values(cabinet), last_seq(cabinet)
    operator.do("insert a note the validator cannot accept (damaged, foreign or a photocopy)", sim="bad-note",
                verify=lambda: bool(events_since(cabinet, seq, "bill_rejected")))
    settle(cabinet)
    after = meter_values(cabinet)
    record.measure("credit meter change", delta(after, before, "credits"), equals=0, unit="cents")
    record.measure("bills_in meter change", delta(after, before, "bills_in"), equals=0, unit="cents")
    rejected = events_since(cabinet, seq, "bill_rejected")
    record.attach("bill-rejected-events", rejected, "json")
    record.measure("bill_rejected events logged", len(rejected), equals=1)
    record.measure("bill records added", sum(1 for e in events_since(cabinet, seq) if e.get("event") == "bill"),
                   equals=0)


#: (fault, what the operator does, the sim word, the tilt it raises, how it is fixed)
FAULTS = (
    ("jam", "jam a note in the bill validator's path", "validator jam", "device_fault:bill_validator.jam",
     "clear the jam from the bill validator"),
    ("stacker full", "make the bill validator report its stacker full (a full cash box)", "validator stacker-full",
     "device_fault:bill_validator.stacker_full", "empty the stacker and put it back"),
    ("stacker removed", "remove the bill validator's stacker (cash box)", "validator stacker-removed",
     "device_fault:bill_validator.stacker_open", "put the stacker back"),
)

FAULTS_REQUIREMENT = (
    "A bill validator fault (a jam, a full stacker, the stacker removed) must be detected and shown: "
    "the gaming device stops taking notes, records the fault as an event, and goes back to normal once "
    "the fault is fixed. (Section title: 'Bill Validator Requirements' / error conditions; number approximate.)")


@pytest.mark.hil(id="validator.faults", standard="gli-11", clause="4.12 Bill Validators (approx.)",
                 requirement=FAULTS_REQUIREMENT, title="Validator jam, stacker full and stacker removed tilt and clear",
                 operator=True, duration=3, targets=TARGETS)
def test_faults(cabinet, record, operator):
    fresh(cabinet, record)
    for name, provoke, word, tilt, fix in FAULTS:
        seq = last_seq(cabinet)
        before = meter_values(cabinet)
        operator.do(provoke, sim=word, verify=lambda tilt=tilt: tilt in tilt_names(cabinet.status()))
        snap = cabinet.status()
        record.measure(f"{name}: cabinet state", snap["state"], equals="TILT")
        record.measure(f"{name}: tilt raised", tilt in tilt_names(snap), equals=True)
        record.measure(f"{name}: notes accepted", snap["accepting_notes"], equals=False)
        if cabinet.kind == "sim":
            record.step(f"{name}: offer a $5 note")
            record.measure(f"{name}: the validator takes a note", bool(cabinet.sim("note", "5").get("inserted")),
                           equals=False)
        else:
            operator.do("offer a $5 note: the validator must refuse it", verify=None)
        raised = [e for e in events_since(cabinet, seq, "cabinet.tilt_raised") if e.get("tilt") == tilt]
        record.measure(f"{name}: tilt_raised events", len(raised), equals=1)
        operator.do(fix, sim="validator clear",
                    verify=lambda tilt=tilt: tilt not in tilt_names(s := cabinet.status()) and s["state"] == "IDLE")
        snap = cabinet.status()
        record.measure(f"{name}: cabinet state after the fix", snap["state"], equals="IDLE")
        record.measure(f"{name}: notes accepted after the fix", snap["accepting_notes"], equals=True)
        cleared = [e for e in events_since(cabinet, seq, "cabinet.tilt_cleared") if e.get("tilt") == tilt]
        record.measure(f"{name}: tilt_cleared events", len(cleared), equals=1)
        record.measure(f"{name}: credit meter change", delta(meter_values(cabinet), before, "credits"), equals=0,
                       unit="cents")


FIELDS_REQUIREMENT = (
    "A cash-out voucher must carry everything needed to identify and redeem it: the venue's name "
    "and address, the validation number (readable and as a barcode), the amount in words and in "
    "figures, the date and time it was issued, the machine number, the voucher's sequence number, "
    "and its expiry; what is printed must agree with the gaming device's record of the voucher. "
    "(Section title: 'Voucher Information' / payment by voucher printer; number approximate.)")

#: $25.00 in words and figures, written out here (not computed by the product's own code).
AMOUNT_CENTS = 2500
AMOUNT_WORDS = "TWENTY FIVE DOLLARS AND 00 CENTS"
AMOUNT_FIGURES = "$25.00"


def _dashed(validation: str) -> str:
    return "-".join((validation[:2], validation[2:6], validation[6:10], validation[10:14], validation[14:18]))


@pytest.mark.hil(id="voucher.fields", standard="gli-16", clause="3.4 Voucher Information (approx.)",
                 requirement=FIELDS_REQUIREMENT, title="A cash-out voucher shows every required field",
                 operator=True, duration=6, targets=TARGETS)
def test_voucher_fields(cabinet, record, operator):
    cfg = config_of(cabinet)
    fresh(cabinet, record)
    for dollars in (20, 5):
        _insert(cabinet, operator, dollars)
    record.measure("credits before the cash-out", cabinet.status()["credits_cents"], equals=AMOUNT_CENTS, unit="cents")
    record.step("cash out")
    validation = cash_out_all(cabinet)
    record.measure("a voucher was printed (status last_ticket)", validation is not None, equals=True)
    assert validation is not None
    voucher = next((v for v in tickets(cabinet, 5) if v["validation"] == validation), None)
    record.attach("ticket-record", voucher, "json")
    record.measure("the voucher's record (service tickets): state", voucher and voucher["state"], equals="printed")
    assert voucher is not None
    record.measure("record: amount", voucher["amount_cents"], equals=AMOUNT_CENTS, unit="cents")
    record.measure("record: validation number of 18 digits", len(validation) == 18 and validation.isdigit(),
                   equals=True)
    record.measure("record: expiry days as configured", voucher["expiry_days"], equals=cfg.money.voucher_expiry_days)
    issued = dt.datetime.fromisoformat(voucher["issued"])
    if cabinet.kind != "sim":
        operator.do(f"check the voucher just printed: {cfg.terminal.venue}, {', '.join(cfg.money.venue_address)}; "
                    f"validation {_dashed(validation)} and its barcode; {AMOUNT_FIGURES} and {AMOUNT_WORDS}; "
                    f"date and time {issued.astimezone():%m/%d/%Y %H:%M:%S}; machine {cfg.terminal.id}; "
                    f"ticket # {voucher['ticket_number']:04d}; void after {voucher['expiry_days']} days",
                    verify=None)
        return
    record.step("read the voucher back from the printer's paper (sim printer last)")
    paper = cabinet.sim("printer", "last")
    record.attach("paper", paper, "json")
    lines = paper["paper"]
    fields = paper["fields"]
    printed_text = list(lines.values())
    record.measure("paper: barcode equals the record's validation number", paper["validation"], equals=validation)
    record.measure("paper: validation number printed readable", f"VALIDATION {_dashed(validation)}" in printed_text,
                   equals=True)
    record.measure("paper: venue name", fields["venue"], equals=cfg.terminal.venue)
    record.measure("paper: venue address", fields["address"], equals=list(cfg.money.venue_address))
    record.measure("paper: amount in figures", AMOUNT_FIGURES in printed_text, equals=True)
    record.measure("paper: amount in words", AMOUNT_WORDS in printed_text, equals=True)
    record.measure("paper: amount read back", paper["amount_cents"], equals=AMOUNT_CENTS, unit="cents")
    local = issued.astimezone().replace(tzinfo=None)
    record.measure("paper: date printed", f"DATE {local:%m/%d/%Y}" in printed_text, equals=True)
    record.measure("paper: time printed", f"TIME {local:%H:%M:%S}" in printed_text, equals=True)
    record.measure("paper: machine number", fields["machine"], equals=cfg.terminal.id)
    record.measure("paper: ticket number", fields["ticket_number"], equals=voucher["ticket_number"])
    record.measure("paper: ticket number printed", f"TICKET # {voucher['ticket_number']:04d}" in printed_text,
                   equals=True)
    record.measure("paper: expiry", fields["expiry_days"], equals=voucher["expiry_days"])
    record.measure("paper: kind", fields["kind"], equals="CASHOUT TICKET")


def _refused(cabinet, record, operator, instruction: str, validation: str, reason: str, label: str = "") -> None:
    """Voucher ``validation`` inserted (``instruction`` on a cabinet): refused once with ``reason``
    in the refusal logged, nothing credited."""
    before, seq = meter_values(cabinet), last_seq(cabinet)
    operator.do(instruction, sim=f"ticket {validation}",
                verify=lambda: bool(events_since(cabinet, seq, "voucher_refused")))
    settle(cabinet)
    after = meter_values(cabinet)
    refused = events_since(cabinet, seq, "voucher_refused")
    record.attach(f"{label}voucher-refused-events", refused, "json")
    record.measure(f"{label}refusals logged", len(refused), equals=1)
    record.measure(f"{label}refused as {reason}", bool(refused) and reason in str(refused[0].get("reason")),
                   equals=True)
    record.measure(f"{label}credit meter change", delta(after, before, "credits"), equals=0, unit="cents")
    record.measure(f"{label}ticket_in meter change", delta(after, before, "ticket_in"), equals=0, unit="cents")


REDEEM_REQUIREMENT = (
    "A valid voucher inserted in the bill validator is paid to the credit meter once; the same "
    "voucher inserted again is refused and returned with nothing credited. "
    "(Section title: 'Voucher Redemption'; number approximate.)")


@pytest.mark.hil(id="voucher.redeem", standard="gli-16", clause="3.5 Voucher Redemption (approx.)",
                 requirement=REDEEM_REQUIREMENT, title="A voucher redeems once; again it is refused",
                 operator=True, duration=8, targets=TARGETS)
def test_voucher_redeem(cabinet, record, operator):
    fresh(cabinet, record)
    _insert(cabinet, operator, 5)
    record.step("cash out $5: the voucher to redeem")
    validation = cash_out_all(cabinet)
    assert validation is not None, "no voucher printed"
    record.note(f"voucher {validation}")
    before = meter_values(cabinet)
    operator.do("insert the voucher just printed into the bill validator", sim=f"ticket {validation}",
                verify=lambda: cabinet.status()["credits_cents"] >= before["credits"] + 500)
    settle(cabinet)
    after = meter_values(cabinet)
    record.measure("first insertion: credit meter rise", delta(after, before, "credits"), equals=500, unit="cents")
    record.measure("first insertion: ticket_in meter rise", delta(after, before, "ticket_in"), equals=500,
                   unit="cents")
    state = next((v["state"] for v in tickets(cabinet, 5) if v["validation"] == validation), None)
    record.measure("first insertion: voucher state (service tickets)", state, equals="redeemed")
    _refused(cabinet, record, operator, "take the same voucher out of the stacker and insert it again", validation,
             "already redeemed", "second insertion: ")
    record.step("cash out (the cabinet is left with no credits)")
    cash_out_all(cabinet)


EXPIRED_REQUIREMENT = (
    "A voucher past its expiry is refused when inserted: nothing is credited and the refusal is "
    "logged. (Section title: 'Voucher Redemption' / voucher expiration; number approximate.)")


@pytest.mark.hil(id="voucher.expired", standard="gli-16", clause="3.5 Voucher Redemption (approx.)",
                 requirement=EXPIRED_REQUIREMENT, title="An expired voucher is refused", operator=False,
                 duration=6, targets=("sim",))
def test_voucher_expired(cabinet, record, operator):
    cfg = config_of(cabinet)
    expiry = cfg.money.voucher_expiry_days
    if expiry == 0:
        raise Blocked("vouchers never expire in this configuration ([money] voucher_expiry_days = 0)")
    fresh(cabinet, record)
    _insert(cabinet, operator, 5)
    record.step(f"power off; with the terminal's own voucher book, issue and print a $5 voucher for the "
                f"credits dated {expiry + 1} days ago (expiry {expiry} days), as if cashed out then")
    cabinet.power_cut()
    validation = backdated_voucher(cabinet.state_dir, cfg, 500, days_ago=expiry + 1)
    record.note(f"voucher {validation}, issued {expiry + 1} days ago")
    cabinet.power_on()
    settle(cabinet)
    record.measure("credits before the insertion", cabinet.status()["credits_cents"], equals=0, unit="cents")
    _refused(cabinet, record, operator, "insert the expired voucher", validation, "expired")

PAPER_REQUIREMENT = (
    "If the printer fails while printing a voucher (paper out), no credit may be lost and no voucher "
    "paid twice: the unfinished voucher is voided, the credits stay until a voucher is printed whole "
    "(or paid by hand), and the failure is shown. (Section title: 'Printer Requirements' / "
    "printer errors; number approximate.)")


@pytest.mark.hil(id="printer.paper-out", standard="gli-11", clause="4.13 Printers (approx.)",
                 requirement=PAPER_REQUIREMENT, title="Paper out mid-voucher: nothing lost, nothing printed twice",
                 operator=True, duration=6, targets=TARGETS)
def test_paper_out(cabinet, record, operator):
    fresh(cabinet, record)
    _insert(cabinet, operator, 5)
    before, seq = meter_values(cabinet), last_seq(cabinet)
    operator.do("leave less than one ticket of paper in the printer (it runs out halfway through the next one)",
                sim="paper out-mid-ticket")
    record.step("cash out")
    cabinet.control("cashout")
    snap = until(lambda: (s := cabinet.status())["state"] == "HANDPAY" and s, timeout=30,
                 what="the cabinet in HANDPAY after the paper ran out")
    record.attach("status-handpay", snap, "json")
    record.measure("cabinet state after the paper ran out", snap["state"], equals="HANDPAY")
    record.measure("handpay reason", (snap.get("handpay") or {}).get("reason"), equals="printer")
    record.measure("credits kept", snap["credits_cents"], equals=before["credits"], unit="cents")
    record.measure("ticket_out meter change", delta(meter_values(cabinet), before, "ticket_out"), equals=0,
                   unit="cents")
    first = tickets(cabinet, 3)[0]
    record.measure("the unfinished voucher's state", first["state"], equals="void")
    not_printed = events_since(cabinet, seq, "ticket_not_printed")
    record.measure("ticket_not_printed events", len(not_printed), equals=1)
    operator.do("load paper into the printer", sim="paper load")
    record.step("retry the ticket (the player's CASH OUT in the printer handpay)")
    until(lambda: _retry_ticket(cabinet), timeout=30, what="the retry accepted once the printer is ready")
    snap = until(lambda: (s := cabinet.status())["state"] == "IDLE" and not s.get("printing") and s, timeout=60,
                 what="the voucher printed after the paper was loaded")
    after = meter_values(cabinet)
    record.measure("credits after the retry", snap["credits_cents"], equals=0, unit="cents")
    record.measure("ticket_out meter change", delta(after, before, "ticket_out"), equals=before["credits"],
                   unit="cents")
    vouchers = [v for v in tickets(cabinet, 5) if v["validation"] in (first["validation"], snap.get("last_ticket"))]
    record.attach("vouchers", vouchers, "json")
    record.measure("vouchers printed for the cash-out", sum(v["state"] == "printed" for v in vouchers), equals=1)
    record.measure("the reprint is a new number", snap.get("last_ticket") != first["validation"], equals=True)
    if cabinet.kind == "sim":
        paper = cabinet.sim("printer", "last")
        record.measure("paper: the voucher printed whole is the new number", paper["validation"],
                       equals=snap.get("last_ticket"))
    if cabinet.kind == "sim":
        record.step("insert a ticket with the voided number (its barcode was never printed)")
        seq = last_seq(cabinet)
        cabinet.sim("ticket", first["validation"])
        refused = until(lambda: events_since(cabinet, seq, "voucher_refused"), timeout=30,
                        what="the voided number refused")
        settle(cabinet)
        record.measure("the voided number is refused as void", "void" in str(refused[0].get("reason")), equals=True)
        record.measure("credits after the voided number", cabinet.status()["credits_cents"], equals=0, unit="cents")
