"""Meters (GLI-11): the accounting identity through every way money moves (notes, vouchers in and
out, a handpay, SAS AFT transfers in and out), the 10-digit roll-over of the product's meter code,
and meters that never go back (every snapshot of the run compared pairwise).

The identity is the one the product defines (docs/critical-memory.md, "Meters";
``firmware.ledger.ledger.accounting_difference``): credits = bills_in + ticket_in + transfers_in -
ticket_out - handpay_cancelled_credits - transfers_out - coin_in + coin_out, in cents. The checks
are in :mod:`firmware.hil.checks_meters`.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import pytest

from drivers.sas.codec import Ack, EgmDecoder, LongPoll, Nack, Reply, encode_reply
from drivers.sas.host import SasHost
from drivers.sas.host_aft import Exchange, aft_transfer
from firmware.hil.checks_meters import (
    MeterLog,
    decreases,
    flat,
    identity_difference,
    pairwise_decreases,
    rolled_over,
    run_snapshots,
)
from firmware.hil.errors import Blocked
from firmware.ledger.ledger import Ledger
from firmware.ledger.meters import ROLLOVER

#: The SAS settings the identity test starts the simulated cabinet with (AFT on).
SAS_ASSET = 1234
SAS_CONFIG = f"[sas]\naft = true\nasset_number = {SAS_ASSET}\n"
SAS_ADDRESS = 1
#: AFT transfer statuses 0x00 (full transfer successful) and 0x01 (partial).
AFT_COMPLETED = (0x00, 0x01)

IDENTITY_REQUIREMENT = (
    "The gaming device's electronic meters must account for every unit of value: the credit meter "
    "must always equal what came in (notes, vouchers, electronic transfers) less what went out "
    "(vouchers, handpays, transfers) less what was wagered plus what was won. (Section title: "
    "'Electronic Accounting and Occurrence Meters'; number approximate.)")


def _delta(after: dict[str, int], before: dict[str, int], name: str) -> int:
    return after.get(name, 0) - before.get(name, 0)


def _exchange(host: SasHost) -> Exchange:
    """AFT's ``exchange`` over the product's SAS host: the poll's bytes out, the reply's bytes back."""
    def exchange(wire: bytes) -> bytes:
        decoder = EgmDecoder(host.address)
        decoder.receive_data(wire)
        polls = [event for event in decoder.events() if isinstance(event, LongPoll)]
        reply = host.ask(polls[0]) if polls else None
        return encode_reply(reply) if isinstance(reply, Reply | Ack | Nack) else b""
    return exchange


def _aft(host: SasHost, cents: int, *, to_machine: bool) -> Any:
    return aft_transfer(_exchange(host), SAS_ADDRESS, cents=cents, transaction_id=f"HIL{secrets.token_hex(6)}",
                        asset_number=SAS_ASSET, to_machine=to_machine)


def _sas_port(cabinet: Any, timeout: float = 30.0) -> dict[str, Any] | None:
    """The status's ``sas`` (published by the terminal's loop once its port is open), or None."""
    deadline = time.monotonic() + timeout
    while True:
        sas = cabinet.status().get("sas")
        if isinstance(sas, dict) and sas.get("port"):
            return sas
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.2)


@pytest.mark.hil(id="meters.identity", standard="gli-11", clause="4.4 Electronic Accounting Meters (approx.)",
                 requirement=IDENTITY_REQUIREMENT,
                 title="Accounting identity holds through notes, vouchers, handpay and AFT",
                 operator=True, duration=15, targets=("sim", "cabinet"))
def test_identity(cabinet, record, operator):
    log = MeterLog(cabinet, record)
    m0 = log.take("start")
    credits = cabinet.status()["credits_cents"]
    if credits:
        record.step("cash out what the cabinet holds, so every step starts from a known balance")
        cabinet.cashout()
        m0 = log.take("cash-out-at-start")

    record.step("insert a $20 note")
    cabinet.insert_note(20)
    m1 = log.take("note-20")
    record.measure("bills_in moved by the note", _delta(m1, m0, "bills_in"), equals=2000, unit="cents")
    record.measure("credits moved by the note", _delta(m1, m0, "credits"), equals=2000, unit="cents")

    record.step("play 3 rounds")
    cabinet.play_rounds(3)
    m2 = log.take("3-rounds")
    record.measure("credits moved by exactly coin_out - coin_in",
                   _delta(m2, m1, "credits") - (_delta(m2, m1, "coin_out") - _delta(m2, m1, "coin_in")),
                   equals=0, unit="cents")
    record.measure("games_played moved by the rounds", _delta(m2, m1, "games_played"), equals=3)

    record.step("cash out: a voucher")
    out_cents = m2["credits"]
    cabinet.cashout()
    m3 = log.take("voucher-out")
    record.measure("ticket_out moved by the voucher", _delta(m3, m2, "ticket_out"), equals=out_cents, unit="cents")
    record.measure("credits after the voucher", m3["credits"], equals=0, unit="cents")

    record.step("insert the voucher just printed")
    validation: dict[str, str] = {}

    def reinsert() -> None:
        validation["number"] = cabinet.sim("printer", "last")["validation"]
        cabinet.sim("ticket", validation["number"])

    operator.do("take the voucher the printer just printed and insert it in the bill validator", sim=reinsert,
                verify=lambda: cabinet.status()["credits_cents"] == out_cents, timeout=45)
    m4 = log.take("voucher-in")
    record.measure("ticket_in moved by the voucher", _delta(m4, m3, "ticket_in"), equals=out_cents, unit="cents")
    record.measure("credits after the voucher in", m4["credits"], equals=out_cents, unit="cents")

    record.step("a handpay: no paper, cash out, the attendant pays by hand")
    operator.do("take the paper out of the printer", sim="paper out")
    try:
        cabinet.control("cashout")
        cabinet.wait("HANDPAY", timeout=30)
        record.measure("cabinet state after the cash-out with no paper", cabinet.status()["state"], equals="HANDPAY")
        cabinet.service("handpay", role="attendant")
        cabinet.wait("IDLE", timeout=30)
    finally:
        operator.do("put the paper back in the printer", sim="paper load")
    m5 = log.take("handpay")
    record.measure("handpay_cancelled_credits moved by the handpay", _delta(m5, m4, "handpay_cancelled_credits"),
                   equals=out_cents, unit="cents")
    record.measure("credits after the handpay", m5["credits"], equals=0, unit="cents")

    record.step("SAS AFT: the terminal with its SAS port (AFT on), a $20 note, $5 in from the host, all out")
    if cabinet.kind == "sim":
        cabinet.start_extra("--sas", "pty", config=SAS_CONFIG)
    sas = _sas_port(cabinet)
    if sas is None:
        raise Blocked("the cabinet's SAS port is not on (configure [sas] with aft = true and asset_number "
                      f"{SAS_ASSET}, the port on the lab's host)")
    m6 = log.take("sas-start")
    cabinet.insert_note(20)
    m7 = log.take("note-20-sas")
    record.measure("bills_in moved by the note", _delta(m7, m6, "bills_in"), equals=2000, unit="cents")
    with SasHost(sas["port"], SAS_ADDRESS, timeout=5.0) as host:
        reply = _aft(host, 500, to_machine=True)
        record.measure("AFT in: transfer status", getattr(reply, "transfer_status", None), equals=0)
        cabinet.wait(timeout=10)
        m8 = log.take("aft-in")
        record.measure("transfers_in moved by the AFT in", _delta(m8, m7, "transfers_in"), equals=500, unit="cents")
        record.measure("credits moved by the AFT in", _delta(m8, m7, "credits"), equals=500, unit="cents")
        out = m8["credits"]
        reply = _aft(host, out, to_machine=False)
        record.measure("AFT out: transfer status", getattr(reply, "transfer_status", None), equals=0)
        cabinet.wait(timeout=10)
        m9 = log.take("aft-out")
    record.measure("transfers_out moved by the AFT out", _delta(m9, m8, "transfers_out"), equals=out, unit="cents")
    record.measure("credits after the AFT out", m9["credits"], equals=0, unit="cents")
    record.measure("meters that went back during the test", pairwise_decreases(log.snapshots), equals=[])


ROLLOVER_REQUIREMENT = (
    "Accounting meters must hold at least ten digits and, when they pass their largest value, roll "
    "over to zero and keep counting, without losing what was counted. (Section title: 'Electronic "
    "Accounting Meters', meter size and roll-over; number approximate.)")


@pytest.mark.hil(id="meters.rollover", standard="gli-11", clause="4.4 Electronic Accounting Meters (approx.)",
                 requirement=ROLLOVER_REQUIREMENT, title="Meters roll over at 10 digits",
                 operator=False, duration=1, targets=("sim", "cabinet"))
def test_rollover(record):
    work: Path = record.report_dir / "meters-rollover-ledger"
    record.step(f"a temporary critical memory in {work} with the product's ledger and meter code")
    near = ROLLOVER - 100              # 9,999,999,900 cents
    with Ledger.open(work) as ledger:
        ledger.transfer_in(near, "HIL-ROLLOVER-1")
        before = ledger.meters_report()
        record.attach("rollover-ledger-before", before, "json")
        record.measure("transfers_in shown before", before["meters"]["transfers_in"], equals=near, unit="cents")
        record.step("transfer in 300 cents more: the 10-digit meter passes 9,999,999,999")
        ledger.transfer_in(300, "HIL-ROLLOVER-2")
        after = ledger.meters_report()
        stored = ledger.meters["transfers_in"]
        record.attach("rollover-ledger-after", after, "json")
    record.measure("transfers_in shown after (rolled over)", after["meters"]["transfers_in"], equals=200, unit="cents")
    record.measure("transfers_in stored exactly", stored, equals=ROLLOVER + 200, unit="cents")
    record.measure("accounting identity on the stored meters", identity_difference(
        {"meters": {"transfers_in": stored}, "credits": after["credits"]}), equals=0, unit="cents")
    record.measure("the drop is recognised as a roll-over", rolled_over(near, 200), equals=True)
    record.measure("the roll-over is not a meter going back", decreases(flat(before), flat(after)), equals=[])
    record.step("open the memory again: the meters are recomputed from the log")
    with Ledger.open(work) as ledger:
        record.measure("transfers_in recomputed from the log", ledger.meters["transfers_in"], equals=ROLLOVER + 200,
                       unit="cents")


MONOTONIC_REQUIREMENT = (
    "Accounting and occurrence meters only count up: no play, money movement, door opening or power "
    "loss may make a meter go back, other than the documented roll-over of a full meter and meters "
    "that by definition count since an event. (Section title: 'Electronic Accounting and Occurrence "
    "Meters'; number approximate.)")


@pytest.mark.hil(id="meters.monotonic", standard="gli-11", clause="4.4 Electronic Accounting Meters (approx.)",
                 requirement=MONOTONIC_REQUIREMENT, title="Meters never go back",
                 operator=True, duration=10, targets=("sim", "cabinet"))
def test_monotonic(cabinet, record, operator):
    log = MeterLog(cabinet, record)
    log.take("start")
    record.step("two $20 notes, a snapshot after each")
    for n in (1, 2):
        cabinet.insert_note(20)
        log.take(f"note-{n}")
    record.step("five rounds, a snapshot after each")
    for n in range(1, 6):
        cabinet.play_rounds(1)
        log.take(f"round-{n}")
    record.step("cash out")
    cabinet.cashout()
    log.take("cash-out")
    record.step("a door opened and closed")
    operator.do("open the main door", sim="door open main", verify=lambda: cabinet.status()["state"] == "TILT")
    operator.do("close the main door", sim="door close main", verify=lambda: cabinet.status()["state"] == "IDLE")
    log.take("door")
    record.step("a power cycle")
    cabinet.restart()
    cabinet.wait("IDLE", timeout=60)
    log.take("power-cycle")
    own = pairwise_decreases(log.snapshots)
    record.measure("meters that went back during this test", own, equals=[])
    earlier = run_snapshots(record.report_dir)
    if earlier:
        earlier[-1] = [*earlier[-1], *log.snapshots]      # the run's last series goes on into this test's
    record.note(f"snapshots of this run's earlier tests: {sum(len(s) for s in earlier) - len(log.snapshots)} "
                f"in {len(earlier)} series (a RAM clear starts a new one)")
    found = [d for series in earlier for d in pairwise_decreases(series)]
    record.measure("meters that went back between the run's snapshots", found, equals=[])
