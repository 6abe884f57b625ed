"""Critical memory's epochs on the host link: a RAM-cleared terminal numbers its reports from 1 again
and the host stores them (keyed by terminal, epoch, number), keeps the old epoch's, and a replay of
the old epoch's envelopes does nothing; and the host as a second witness: a terminal whose critical
memory went back (old copies restored) halts when the host answers its hello
(docs/protocols/host-session.md, docs/critical-memory.md "The host as a witness")."""

from __future__ import annotations

import shutil

import pytest

from egmproto.mqtt import up_topic
from firmware.hostlink.link import HostLink
from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.ledger import Ledger

from .conftest import Floor
from .test_replay import _opened


def _power_cut(floor: Floor, terminal: str = "T1") -> None:
    """The process dies: nothing is flushed, nothing is said to the broker."""
    link = floor.links.pop(terminal)
    link.client.stop()
    link.outbox.close()
    floor.ledgers.pop(terminal).close()


def _reports(floor: Floor) -> list[tuple[str, int, str]]:
    """(epoch, report number, type) of every report the host stored for T1."""
    return [(m["body"]["epoch"], m["seq"] % 2**40, m["type"]) for m in floor.store.messages("T1")]


def _host_view(floor: Floor) -> dict:
    s = floor.store
    return {"messages": s.messages("T1"), "events": s.events("T1", 10_000), "vouchers": s.vouchers(),
            "floor": s.terminals(), "meters": s.meters(), "commands": s.commands()}


def test_reports_after_a_ram_clear_are_stored_and_a_replay_of_the_old_epoch_does_nothing(floor: Floor) -> None:
    link = floor.terminal("T1")
    floor.cash_out("T1", 2000)
    floor.ledgers["T1"].event("door_open", door="main")
    floor.settle()
    first_ledger, first_last = link.ledger, link.outbox.last_number
    assert len(link.outbox) == 0
    old_wire = [(t, p) for t, p in floor.bus.seen if t == up_topic("T1")]

    _power_cut(floor)
    Ledger.ram_clear(floor.tmp / "T1", role="technician", reason="logic board swap").close()
    link = floor.terminal("T1")
    floor.ledgers["T1"].bill_in(500)
    floor.settle()
    assert len(link.outbox) == 0
    second_last = link.outbox.last_number
    assert second_last < first_last                          # numbered from 1 again: the numbers overlap

    # every report of both epochs stored, exactly once
    assert floor.store.sequence("T1")["count"] == first_last + second_last
    first_epoch = first_ledger.epoch
    assert link.ledger.epoch != first_epoch                  # a new life of critical memory
    stored = _reports(floor)
    assert len(stored) == len(set(stored)) == first_last + second_last
    assert sorted(n for e, n, _ in stored if e == first_epoch) == list(range(1, first_last + 1))
    assert sorted(n for e, n, _ in stored if e == link.ledger.epoch) == list(range(1, second_last + 1))
    names = [e["name"] for e in floor.store.events("T1", 1000)]
    assert "ram_clear" in names and names.count("ticket_out") == 1
    assert floor.store.meters()["T1"]["credits"] == 500      # the newest meters: the new epoch's

    # the old epoch, replayed byte for byte, while the new epoch has reports outstanding under the
    # same numbers: refused as duplicates, nothing changes on the host, and the acknowledgements
    # of the old epoch's numbers drop nothing from the new epoch's outbox
    floor.link_down("T1")
    for _ in range(first_last):
        floor.ledgers["T1"].bill_in(100)
    outstanding = link.outbox.numbers()
    assert set(outstanding) & {_opened(floor, p).seq for _, p in old_wire}
    before = _host_view(floor)
    assert [floor.host.handle(t, p) for t, p in old_wire] == ["duplicate"] * len(old_wire)
    assert _host_view(floor) == before
    floor.link_down("T1", down=False)
    floor.bus.pump()
    link.poll()
    assert all(n in link.outbox for n in outstanding if n != link._hello)
    floor.settle()
    assert len(link.outbox) == 0
    stored = _reports(floor)
    assert len(stored) == len(set(stored)) == first_last + link.outbox.last_number


def _boot(floor: Floor) -> HostLink:
    return floor.terminal("T1")


def _put_back_after(floor: Floor, notes: int) -> int:
    """A note reported, the terminal's state directory (both copies, the key, and any local mark
    beside them) copied aside; a boot that reports ``notes`` more notes; a power cut, and the copy
    put back (locally it verifies as whole). The highest report number the host holds."""
    _boot(floor)
    floor.ledgers["T1"].bill_in(1000)
    floor.settle()
    _power_cut(floor)
    shutil.copytree(floor.tmp / "T1", floor.tmp / "T1.early")
    link = _boot(floor)
    for _ in range(notes):
        floor.ledgers["T1"].bill_in(100)
    floor.settle()
    assert len(link.outbox) == 0
    held = link.outbox.last_number
    _power_cut(floor)
    shutil.rmtree(floor.tmp / "T1")
    shutil.copytree(floor.tmp / "T1.early", floor.tmp / "T1")
    return held


def test_a_critical_memory_restored_from_old_copies_halts_on_the_hosts_witness(floor: Floor) -> None:
    # The case only the host can catch: the memory put back as it was earlier.
    held = _put_back_after(floor, notes=5)

    link = _boot(floor)                                   # verifies: the copies agree, the MACs hold
    assert link.outbox.last_number < held
    with pytest.raises(CriticalMemoryError, match="behind the host's witness") as info:
        floor.settle()
    assert f"the host holds report {held}" in str(info.value)
    assert link.behind == str(info.value)
    [why] = [e for e in floor.ledgers["T1"].events(50) if e["event"] == "critical_memory_behind"]
    assert why["witness"] == "host" and why["held"] == held
    # nothing more is reported: the link is silent whatever happens next
    floor.bus.queue.clear()
    floor.ledgers["T1"].bill_in(100)
    floor.now[0] += 120
    link.poll()
    link.stop(drain_s=0.2)
    assert not floor.bus.queue
    assert [r["reason"] for r in floor.store.rejections()].count("conflict") >= 1


def test_a_small_regression_is_caught_by_the_first_report_the_host_holds_otherwise(floor: Floor) -> None:
    # Memory put back by two reports, then more records made at power-up than it lost, before the
    # hello: the hello's number is beyond what the host holds, so ``held`` shows nothing; the
    # reports before it reuse numbers the host holds with other content. The host's answer to the
    # first of them says so, and the terminal locks instead of taking it as stored.
    held = _put_back_after(floor, notes=1)
    with Ledger.open(floor.tmp / "T1") as ledger:            # power-up records before the link starts
        for door in ("main", "logic", "cash_box"):
            ledger.event("door", door=door, open=False)
    link = _boot(floor)
    assert link.outbox.last_number > held             # the hello's number: beyond what the host holds
    with pytest.raises(CriticalMemoryError, match="the host holds another report") as info:
        floor.settle()
    assert link.behind == str(info.value)
    floor.ledgers["T1"].close()
    with Ledger.open(floor.tmp / "T1", read_only=True) as ledger:
        assert "the host holds another report" in (ledger.locked or "")
        [why] = [e for e in ledger.events(50) if e["event"] == "critical_memory_behind"]
    assert why["witness"] == "host" and why["conflict"] <= held
    with pytest.raises(CriticalMemoryError, match="RAM clear is needed"):
        Ledger.open(floor.tmp / "T1")


def test_a_whole_critical_memory_is_not_behind_the_host(floor: Floor) -> None:
    # Power cuts with reports acknowledged but the watermark not yet written: the host holds
    # nothing beyond what critical memory has, so the terminal goes on.
    for _ in range(3):
        link = _boot(floor)
        floor.ledgers["T1"].bill_in(100)
        floor.settle()
        _power_cut(floor)
    link = _boot(floor)
    floor.settle()
    assert link.behind is None and link.session_open and len(link.outbox) == 0
