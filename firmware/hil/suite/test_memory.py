"""Critical memory and program interruption (GLI-11): power cuts at chosen points (idle with
credits, in the middle of a deal, while a cash-out ticket prints) after which the terminal resumes
with every meter unchanged or changed by exactly the interrupted round's completion; the last ten
games recalled identically across a power cycle; damaged critical memory detected at power-up; and
the RAM clear, allowed only to the technician and recorded (docs/critical-memory.md,
docs/service.md).

On ``--target sim`` a power cut is a SIGKILL of the terminal (``cabinet.power_cut()``); on a cabinet
the operator switches it off when asked. The corruption and RAM clear tests damage or erase critical
memory, so they run their own simulated terminal in the report folder (``sim-memory-*``) and leave
the suite's cabinet alone.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.hil.checks_meters import flat, identity_difference
from firmware.hil.errors import TargetError, raised
from firmware.hil.target import SimTarget
from firmware.ledger.meters import RESETTABLE
from firmware.ledger.store import KEY_FILE, MIRROR_FILE, PRIMARY_FILE

#: The pace of the deal for the mid-round cut (``[cabinet] card_delay_ms``): time to cut between cards.
CARD_DELAY = "[cabinet]\ncard_delay_ms = 250\n"
#: The configuration of the corruption and RAM clear tests' own terminals (no embedded host: faster).
OWN_TERMINAL = "[host]\nenabled = false\n"

INTERRUPTION_REQUIREMENT = (
    "After a loss of power at any moment the gaming device must come back in the same state: the "
    "credit meter and every accounting meter as they were, a game in progress completed or restored "
    "exactly as it would have ended, and nothing paid twice. (Section title: 'Program Interruption "
    "and Resumption'; number approximate.)")


def _changed(before: dict[str, int], after: dict[str, int], *,
             ignore: frozenset[str] | set[str] = frozenset()) -> dict[str, list[int]]:
    """Meters whose value differs (``name: [before, after]``), leaving out ``ignore`` and the
    "games since" meters (reset by definition)."""
    names = (set(before) | set(after)) - set(ignore) - set(RESETTABLE)
    return {n: [before.get(n, 0), after.get(n, 0)] for n in sorted(names) if before.get(n, 0) != after.get(n, 0)}


def _snapshot(cabinet: Any, record: Any, label: str) -> dict[str, int]:
    answer = cabinet.meters()
    record.attach(f"meters-{label}", answer, "json")
    return flat(answer)


def _ensure_credits(cabinet: Any, record: Any, cents: int = 1000) -> None:
    if cabinet.status()["credits_cents"] < cents:
        record.step("a $20 note")
        cabinet.insert_note(20)


def _back_up(cabinet: Any, record: Any) -> dict[str, Any]:
    """Power on (the operator on a cabinet) and wait until the terminal has finished starting."""
    cabinet.power_on()
    deadline = time.monotonic() + 60
    status = cabinet.status()
    while status.get("starting") or status.get("state") in ("POWER_UP", "SELF_TEST"):
        if time.monotonic() >= deadline:
            break
        time.sleep(0.2)
        status = cabinet.status()
    record.attach("status-after-power-up", status, "json")
    return dict(status)


@pytest.mark.hil(id="memory.power-cut.idle", standard="gli-11",
                 clause="4.9 Program Interruption and Resumption (approx.)", requirement=INTERRUPTION_REQUIREMENT,
                 title="Power cut at idle with credits: credits, meters and recall unchanged",
                 operator=True, duration=8, targets=("sim", "cabinet"))
def test_power_cut_idle(cabinet, record, operator):
    _ensure_credits(cabinet, record)
    record.step("play a round, so that recall has a last game")
    cabinet.play_rounds(1)
    before = _snapshot(cabinet, record, "before-cut")
    recall_before = cabinet.recall(1)
    status_before = cabinet.status()
    record.step("cut the power at idle with credits on the meter")
    operator.do("switch the cabinet off at the mains (idle, credits on the meter)", sim=cabinet.power_cut,
                verify=lambda: not cabinet.is_up())
    status = _back_up(cabinet, record)
    record.measure("cabinet state after power-up", status["state"], equals="IDLE")
    record.measure("credits after power-up", status["credits_cents"], equals=status_before["credits_cents"],
                   unit="cents")
    after = _snapshot(cabinet, record, "after-power-up")
    record.measure("power_reset moved by the power cycle", after["power_reset"] - before["power_reset"], equals=1)
    record.measure("other meters changed by the power cut", _changed(before, after, ignore={"power_reset"}), equals={})
    record.measure("accounting identity after power-up", identity_difference(cabinet.meters()), equals=0, unit="cents")
    record.measure("the last game recalled as before", cabinet.recall(1) == recall_before, equals=True)
    cabinet.cashout()


def _expected_completion(round_record: dict[str, Any]) -> dict[str, int]:
    """The meter changes the interrupted round makes from before its deal to its end, from its
    recall record: every stake in (coin_in), every stake plus its net back (coin_out), the credits by
    the round's net, one game played, won or lost."""
    stakes = sum(sum(seat["wagers"].values()) for seat in round_record["seats"])
    returned = sum(amount + seat["results"][name]["net"] for seat in round_record["seats"]
                   for name, amount in seat["wagers"].items())
    out = {"coin_in": stakes, "coin_out": returned, "credits": returned - stakes, "games_played": 1,
           "games_won": int(returned > stakes), "games_lost": int(returned < stakes)}
    return out


@pytest.mark.hil(id="memory.power-cut.mid-round", standard="gli-11",
                 clause="4.9 Program Interruption and Resumption (approx.)", requirement=INTERRUPTION_REQUIREMENT,
                 title="Power cut while the cards are dealt: the round completes exactly once",
                 operator=True, duration=12, targets=("sim", "cabinet"))
def test_power_cut_mid_round(cabinet, record, operator):
    if cabinet.kind == "sim":
        record.step(f"the simulated cabinet deals slowly ({CARD_DELAY.split('=')[1].strip()} ms a card)")
        cabinet.start_extra(config=CARD_DELAY)
    _ensure_credits(cabinet, record)
    before = _snapshot(cabinet, record, "before-deal")
    recall_before = cabinet.recall(1)
    record.step("DEAL, and cut the power once two cards are out")
    round_id: dict[str, Any] = {}

    def cut_mid_deal() -> None:
        cabinet.play()
        deadline = time.monotonic() + 30
        while True:
            rnd = cabinet.status().get("round") or {}
            if rnd.get("cards_dealt", 0) >= 2:
                round_id["id"], round_id["cards"] = rnd.get("round_id"), rnd.get("cards_dealt")
                cabinet.power_cut()
                return
            if time.monotonic() >= deadline:
                raise TargetError("the deal did not reach its second card within 30 s")
            time.sleep(0.02)

    operator.do("press DEAL, and switch the cabinet off at the mains while the cards are being dealt",
                sim=cut_mid_deal, verify=lambda: not cabinet.is_up())
    record.note(f"cut in round {round_id.get('id')} after {round_id.get('cards')} card(s) were shown")
    status = _back_up(cabinet, record)
    cabinet.wait("IDLE", timeout=60)
    rounds = cabinet.recall(2)
    record.attach("recall-after", rounds, "json")
    newest = rounds[0]
    record.measure("the interrupted round completed", newest.get("status"), equals="complete")
    if round_id.get("id"):
        record.measure("the completed round is the interrupted one", newest.get("round_id"), equals=round_id["id"])
    record.measure("the round before it is unchanged", rounds[1:2] == recall_before, equals=True)
    after = _snapshot(cabinet, record, "after-completion")
    expected = _expected_completion(newest)
    record.attach("expected-changes", expected, "json")
    for name, change in expected.items():
        record.measure(f"{name} moved by the round exactly", after.get(name, 0) - before.get(name, 0), equals=change,
                       unit="cents" if name in ("coin_in", "coin_out", "credits") else "")
    record.measure("power_reset moved by the power cycle", after["power_reset"] - before["power_reset"], equals=1)
    others = _changed(before, after, ignore={*expected, "power_reset"})
    record.measure("other meters changed (the per-game meters aside)",
                   {k: v for k, v in others.items() if not k.startswith("games.")}, equals={})
    record.measure("credits_before of the round's record", newest.get("credits_before"), equals=before["credits"],
                   unit="cents")
    record.measure("credits_after of the round's record", newest.get("credits_after"), equals=after["credits"],
                   unit="cents")
    record.measure("accounting identity after the round", identity_difference(cabinet.meters()), equals=0,
                   unit="cents")
    cabinet.cashout()
    record.note(f"state right after power-up: {status.get('state')}")


@pytest.mark.hil(id="memory.power-cut.cashout", standard="gli-11",
                 clause="4.9 Program Interruption and Resumption (approx.)", requirement=INTERRUPTION_REQUIREMENT,
                 title="Power cut while a cash-out ticket prints: paid exactly once",
                 operator=True, duration=8, targets=("sim", "cabinet"))
def test_power_cut_cashout(cabinet, record, operator):
    _ensure_credits(cabinet, record)
    before = _snapshot(cabinet, record, "before-cashout")
    amount = before["credits"]
    record.step("CASH OUT, and cut the power while the ticket prints")
    printing: dict[str, Any] = {}

    def cut_while_printing() -> None:
        cabinet.control("cashout")
        snap = cabinet.control("wait", {"timeout": 30, "printing": True}, timeout=60)
        printing["validation"] = snap.get("printing")
        cabinet.power_cut()

    operator.do("press CASH OUT, and switch the cabinet off at the mains while the ticket is printing",
                sim=cut_while_printing, verify=lambda: not cabinet.is_up())
    record.note(f"cut while voucher {printing.get('validation')} was printing")
    _back_up(cabinet, record)
    status = cabinet.wait(timeout=10)
    after = _snapshot(cabinet, record, "after-power-up")
    paid = after["ticket_out"] - before["ticket_out"]
    record.note("the printer's confirmation was " + ("recorded before the cut: the ticket is paid" if paid else
                "not recorded before the cut: the voucher is void, the credits stay on the meter"))
    record.measure("ticket_out moved by nothing or by the whole amount", paid in (0, amount), equals=True)
    record.measure("credits + tickets out unchanged by the cut", after["credits"] + paid, equals=amount, unit="cents")
    record.measure("power_reset moved by the power cycle", after["power_reset"] - before["power_reset"], equals=1)
    record.measure("other meters changed by the cut",
                   _changed(before, after, ignore={"power_reset", "ticket_out", "ticket_out_cashable", "credits"}),
                   equals={})
    tickets = cabinet.service("tickets", "10")
    record.attach("tickets-after-power-up", tickets, "json")
    vouchers = tickets.get("vouchers", [])
    if printing.get("validation"):
        vouchers = [v for v in vouchers if v.get("validation") == printing["validation"]]
    else:                                  # a cabinet: the operator's cut; the newest voucher is the one
        vouchers = sorted(vouchers, key=lambda v: -int(v.get("sequence") or 0))[:1]
    states = [v.get("state") for v in vouchers]
    record.measure("state of the voucher that was printing", states[0] if states else None,
                   equals="printed" if paid else "void")
    if after["credits"]:
        record.step("cash out again: the credits left on the meter leave on a new ticket")
        cabinet.cashout()
    final = _snapshot(cabinet, record, "end")
    record.measure("ticket_out moved in all by exactly the amount (paid once)", final["ticket_out"] - before["ticket_out"],
                   equals=amount, unit="cents")
    record.measure("credits at the end", cabinet.status()["credits_cents"], equals=0, unit="cents")
    record.note(f"state after power-up: {status.get('state')}")


RECALL_REQUIREMENT = (
    "The gaming device must keep the last ten games (at least) with everything needed to show what "
    "happened (cards, wagers, results, credits before and after), and keep them unchanged across a "
    "loss of power. (Section title: 'Game Recall'; number approximate.)")


@pytest.mark.hil(id="memory.recall-10", standard="gli-11", clause="3.6 Game Recall (approx.)",
                 requirement=RECALL_REQUIREMENT, title="The last 10 games recalled identically after a power cycle",
                 operator=True, duration=8, targets=("sim", "cabinet"))
def test_recall_10(cabinet, record, operator):
    _ensure_credits(cabinet, record, 2000)
    record.step("play 12 rounds")
    cabinet.play_rounds(12)
    before = cabinet.recall(10)
    record.attach("recall-before", before, "json")
    record.measure("games recalled", len(before), equals=10)
    record.measure("games recalled that are complete", sum(1 for r in before if r.get("status") == "complete"),
                   equals=10)
    record.step("power cycle")
    operator.do("switch the cabinet off at the mains", sim=cabinet.power_cut, verify=lambda: not cabinet.is_up())
    _back_up(cabinet, record)
    after = cabinet.recall(10)
    record.attach("recall-after", after, "json")
    differing = [f"game {i + 1} ({b.get('round_id')}): {', '.join(sorted(k for k in set(b) | set(a) if b.get(k) != a.get(k)))}"
                 for i, (b, a) in enumerate(zip(before, after, strict=False)) if a != b]
    record.measure("games recalled after the power cycle", len(after), equals=10)
    record.measure("games whose recall differs in any field", differing, equals=[])
    cabinet.cashout()


CORRUPTION_REQUIREMENT = (
    "Critical memory must be checked at power-up; if it is found corrupt the gaming device must "
    "not offer play or accept money, must show the error, and must keep it for the technician, "
    "until critical memory is restored or cleared. (Section title: 'Critical Memory Requirements' / "
    "validation of critical memory; number approximate.)")


@contextlib.contextmanager
def _own_terminal(record: Any, name: str) -> Iterator[SimTarget]:
    """A simulated terminal of the test's own in ``sim-memory-NAME`` of the report folder, started;
    closed at the end and its log kept as evidence."""
    terminal = SimTarget(record.report_dir / f"sim-memory-{name}", config_text=OWN_TERMINAL)
    try:
        terminal.power_on()
        yield terminal
    finally:
        terminal.close()
        record.attach("terminal-log", "\n".join(terminal.log_lines()) + "\n", "text")


def _copies(state: Path) -> list[Path]:
    return [state / name for name in (PRIMARY_FILE, MIRROR_FILE)]


def _remove_copies(state: Path) -> None:
    """Both copies of critical memory gone (with their WAL and shared-memory files)."""
    for copy in _copies(state):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{copy}{suffix}").unlink(missing_ok=True)


def _alter_bill(state: Path) -> int:
    """Raise the amount of the first note record by a dollar in both copies (its MAC left as it was);
    the record's sequence number."""
    seq = 0
    for copy in _copies(state):
        with sqlite3.connect(copy) as db:
            seq, body = db.execute("SELECT seq, body FROM log WHERE kind = 'bill' ORDER BY seq LIMIT 1").fetchone()
            data = json.loads(body)
            data["cents"] += 100
            db.execute("UPDATE log SET body = ? WHERE seq = ?", (json.dumps(data), seq))
        db.close()
    return int(seq)


def _locked(terminal: SimTarget, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        try:
            status: dict[str, Any] = terminal.status()
            if status.get("state") == "HALTED":
                return status
        except TargetError:
            pass
        if time.monotonic() >= deadline:
            raise TargetError(f"the terminal did not lock within {timeout} s")
        time.sleep(0.2)


@pytest.mark.hil(id="memory.corruption", standard="gli-11", clause="4.8 Critical Memory Requirements (approx.)",
                 requirement=CORRUPTION_REQUIREMENT, title="Corrupt critical memory is detected at power-up and stops play",
                 operator=False, duration=25, targets=("sim",))
def test_corruption(record):
    with _own_terminal(record, "corruption") as terminal:
        record.step("a terminal of its own: a $20 note, a round, note its meters")
        terminal.insert_note(20)
        terminal.play_rounds(1)
        meters_before = terminal.meters()
        record.attach("meters-before-damage", meters_before, "json")
        record.step("power cut; keep a copy of the state folder's memory files")
        terminal.power_cut()
        saved = record.report_dir / "sim-memory-corruption" / "saved"
        shutil.rmtree(saved, ignore_errors=True)
        saved.mkdir(parents=True)
        originals = [p for p in terminal.state_dir.iterdir() if p.name.startswith(("ledger", KEY_FILE))]
        for path in originals:
            shutil.copy2(path, saved / path.name)
        seq = _alter_bill(terminal.state_dir)
        record.step(f"while the power is off: the note's record (number {seq}) altered in both copies "
                    "($1 more, its authentication left as it was)")
        record.note(f"altered: log record {seq} in {PRIMARY_FILE} and {MIRROR_FILE}")
        record.step("power on")
        terminal.power_on(wait_started=False)
        status = _locked(terminal)
        record.attach("status-locked", status, "json")
        record.measure("cabinet state at power-up", status["state"], equals="HALTED")
        record.measure("critical memory reported locked", (status.get("critical_memory") or {}).get("locked"),
                       equals=True)
        record.measure("the critical_memory tilt is active",
                       any(str(t.get("tilt", "")).startswith("critical_memory") for t in status.get("tilts", [])),
                       equals=True)
        record.note(f"the error shown: {status.get('halted')}")
        record.measure("the error is shown (status halted)", bool(status.get("halted")), equals=True)
        record.measure("the error names the altered record", f"log record {seq}" in str(status.get("halted")),
                       equals=True)
        record.measure("the terminal's log records the lock", sum(
            1 for line in terminal.log_lines() if "LOCKED" in line and str(status.get("halted")) in line), low=1)
        record.measure("notes accepted", status.get("accepting_notes"), equals=False)
        record.measure("DEAL refused", bool(raised(lambda: terminal.play())), equals=True)
        record.measure("the meters are not offered from the failed memory", bool(raised(terminal.meters)),
                       equals=True)
        record.step("wait 3 s: the cabinet must stay locked")
        time.sleep(3)
        record.measure("cabinet state 3 s later", terminal.status()["state"], equals="HALTED")
        record.step("power cut, put the original memory files back, power on")
        terminal.power_cut()
        _remove_copies(terminal.state_dir)
        for path in saved.iterdir():
            shutil.copy2(path, terminal.state_dir / path.name)
        terminal.power_on()
        record.measure("cabinet state with the memory restored", terminal.wait("IDLE", timeout=60)["state"],
                       equals="IDLE")
        meters_after = terminal.meters()
        record.measure("meters with the memory restored (power_reset aside)",
                       _changed(flat(meters_before), flat(meters_after), ignore={"power_reset"}), equals={})


RAM_CLEAR_REQUIREMENT = (
    "Clearing critical memory must be possible only for an authorised person by a deliberate "
    "procedure, never with credits on the meter, and must be recorded (who, why, and what the "
    "memory held) in a way that survives. (Section title: 'Critical Memory Requirements' / RAM "
    "clear; number approximate.)")


@pytest.mark.hil(id="memory.ram-clear", standard="gli-11", clause="4.8 Critical Memory Requirements (approx.)",
                 requirement=RAM_CLEAR_REQUIREMENT, title="RAM clear only by the technician, and recorded",
                 operator=False, duration=25, targets=("sim",))
def test_ram_clear(record):
    with _own_terminal(record, "ram-clear") as terminal:
        record.step("a terminal of its own: a $20 note")
        terminal.insert_note(20)
        for role in ("attendant", "auditor"):
            record.step(f"service ram-clear as the {role}")
            refusal = raised(functools.partial(terminal.service, "ram-clear", "CLEAR", "hil", "test", role=role))
            record.note(f"{role}: {refusal}")
            record.measure(f"RAM clear refused to the {role}", bool(refusal), equals=True)
        record.step("service ram-clear as the technician with credits on the meter")
        refusal = raised(lambda: terminal.service("ram-clear", "CLEAR", "hil", "test", role="technician"))
        record.note(f"technician with credits: {refusal}")
        record.measure("RAM clear refused with credits on the meter", bool(refusal), equals=True)
        record.step("cash out; service ram-clear as the technician on the running terminal")
        terminal.cashout()
        refusal = raised(lambda: terminal.service("ram-clear", "CLEAR", "hil", "test", role="technician"))
        record.note(f"technician, no credits, running terminal: {refusal or 'accepted'} (docs/service.md: the "
                    "running terminal clears only through `egm ledger clear` while stopped, or in the locked cabinet)")
        record.measure("RAM clear refused on the running terminal", bool(refusal), equals=True)
        logged = [e for e in terminal.events(100) if e.get("event") == "service_action" and e.get("action") == "ram-clear"]
        record.attach("ram-clear-refusals", logged, "json")
        record.measure("refusals logged (service_action ram-clear refused), by role",
                       sorted(str(e.get("role")) for e in logged if e.get("result") == "refused"),
                       equals=["attendant", "auditor", "technician", "technician"])
        record.measure("ram-clear requests logged as done", [e for e in logged if e.get("result") != "refused"],
                       equals=[])
        meters_before = terminal.meters()

        record.step("power cut; both copies of critical memory removed (the key and the mark kept); power on")
        terminal.power_cut()
        _remove_copies(terminal.state_dir)
        terminal.power_on(wait_started=False)
        status = _locked(terminal)
        record.attach("status-locked", status, "json")
        record.measure("cabinet state with the memory lost", status["state"], equals="HALTED")
        record.step("service ram-clear as the attendant in the locked cabinet")
        refusal = raised(lambda: terminal.service("ram-clear", "CLEAR", "memory", "lost", role="attendant"))
        record.note(f"attendant, locked: {refusal}")
        record.measure("RAM clear refused to the attendant in the locked cabinet", bool(refusal), equals=True)
        record.step("service ram-clear as the technician in the locked cabinet")
        answer = terminal.service("ram-clear", "CLEAR", "memory", "lost", role="technician")
        record.attach("ram-clear-answer", answer, "json")
        record.measure("RAM clear by the technician accepted", bool(answer.get("cleared")), equals=True)
        record.measure("cabinet state after the clear", terminal.wait("IDLE", timeout=60)["state"], equals="IDLE")

        record.step("power cycle: the record of the clear must survive")
        terminal.power_cut()
        terminal.power_on()
        events = terminal.events(200)
        record.attach("events-after-clear", events, "json")
        clears = [e for e in events if e.get("event") == "ram_clear"]
        record.measure("ram_clear records in the new memory", len(clears), equals=1)
        clear = clears[0]
        record.measure("who cleared it", clear.get("role"), equals="technician")
        record.measure("why", clear.get("reason"), equals="memory lost")
        record.measure("what the old memory was is kept", bool(clear.get("previous")), equals=True)
        record.note(f"previous: {json.dumps(clear.get('previous'))[:300]}")
        locked_period = [e for e in events if e.get("while_locked")]
        record.measure("the locked period's service events kept (while_locked)", len(locked_period), low=1)
        record.measure("the attendant's refusal in the locked cabinet kept",
                       sum(1 for e in locked_period if e.get("action") == "ram-clear" and e.get("role") == "attendant"
                           and e.get("result") == "refused"), equals=1)
        meters_after = terminal.meters()
        record.measure("bills_in after the clear", meters_after["meters"]["bills_in"], equals=0, unit="cents")
        record.note(f"bills_in before the clear: {meters_before['meters']['bills_in']} cents")
