"""Communications as the lab checks them: the casino host's link lost in the middle of play (play
goes on, nothing is lost, the host ends with the terminal's meters) and SAS (``egm run --sas pty``,
polled by the product's own SAS host, ``drivers/sas/host.py``): the general poll, the meters in
accounting credits, a door's exception, the link noticed down when the polls stop."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pytest

from drivers.sas.exceptions import ExceptionCode
from drivers.sas.host import SasHost
from drivers.sas.messages import Meters, SelectedMeters, SelectedMetersRequest
from firmware.hil.checks_comms import HostProcess, free_port
from firmware.hil.checks_money import cash_out_all, config_of, fresh, settle, until
from firmware.hil.errors import TargetError
from firmware.hil.target import Target

HOST_LOST = (
    "When the link to the casino system is lost during play, the gaming device must keep every "
    "accounting record and event, play only as its configuration allows, and report everything it "
    "held back once the link is back, so that the system's meters again equal the device's. "
    "(Section title: 'Communications' / loss of communication with the system; number approximate.)")


def _host(cabinet: Target) -> dict[str, Any]:
    host: dict[str, Any] = cabinet.status().get("host") or {}
    return host


@pytest.mark.hil(id="comms.host-lost", standard="gli-16", clause="2.5 Loss of Communication (approx.)",
                 requirement=HOST_LOST, title="Host link lost mid-play: play goes on, the backlog drains, meters agree",
                 operator=True, duration=15, targets=("sim", "cabinet"))
def test_host_lost(cabinet, record, operator):
    fresh(cabinet, record)
    host = None
    if cabinet.kind == "sim":
        work = record.report_dir / "sim-host-lost"
        host = HostProcess(work / "host", cabinet.state_dir / "pki", free_port(), work / "host.log")
        record.step(f"start the reference host in its own process ({host.broker}) and the terminal on it")
        host.start()
        cabinet.start_extra(config=f'[host]\nbroker = "{host.broker}"\npki = "{cabinet.state_dir / "pki"}"\n'
                                   "ack_timeout_s = 1.0\n")
    try:
        until(lambda: _host(cabinet).get("connected"), timeout=60, what="the host link up")
        settle(cabinet)
        cabinet.insert_note(20)
        cabinet.play_rounds(2)
        until(lambda: _host(cabinet).get("outstanding") == 0, timeout=60, what="every report acknowledged")
        played = cabinet.status()["rounds_played"]
        operator.do("disconnect the cabinet from the casino network (unplug its network cable)",
                    sim=host.kill if host else None, verify=lambda: not _host(cabinet).get("connected"))
        record.measure("host link connected after the cut", bool(_host(cabinet).get("connected")), equals=False)
        record.step("play three rounds with the host away")
        cabinet.play_rounds(3)
        snap = cabinet.status()
        record.measure("rounds played with the host away", snap["rounds_played"] - played, equals=3)
        record.measure("reports held in the outbox", snap["host"]["outstanding"], low=1)
        operator.do("reconnect the cabinet to the casino network", sim=host.start if host else None,
                    verify=lambda: bool(_host(cabinet).get("connected")), timeout=60)
        record.step("cash out (money out is reported), then until the outbox is empty")
        cash_out_all(cabinet)
        drained = until(lambda: (h := _host(cabinet)).get("connected") and h.get("outstanding") == 0 and h,
                        timeout=90, what="the outbox drained")
        record.measure("reports outstanding after the reconnection", drained["outstanding"], equals=0)
        record.measure("reports refused by the host", drained.get("rejected", 0), equals=0)
        terminal = cabinet.meters()
        record.attach("terminal-meters", terminal, "json")
        if host is None:
            operator.do("on the casino system, check this terminal's meters equal the service menu's meters",
                        verify=None)
            return
        terminal_id = config_of(cabinet).terminal.id
        stored = until(lambda: (m := host.query("meters").get(terminal_id)) and
                       m.get("meters") == cabinet.meters()["meters"] and m, timeout=30,
                       what="the host's stored meters equal the terminal's")
        record.attach("host-meters", stored, "json")
        terminal = cabinet.meters()
        record.measure("host meters equal the terminal's", stored["meters"] == terminal["meters"], equals=True)
        record.measure("host credits equal the terminal's", stored.get("credits"), equals=terminal["credits"],
                       unit="cents")
        sequence = host.query("sequence", terminal_id)
        record.attach("host-sequence", sequence, "json")
        record.measure("gaps in the reports the host stored", len(sequence.get("gaps") or []), equals=0)
    finally:
        if host is not None:
            host.stop()


#: SAS meters in accounting credits of 5 cents on a 1-cent terminal, so the conversion shows; no
#: embedded casino host (SAS needs none, and the terminal starts faster).
SAS_CONFIG = "[host]\nenabled = false\n\n[sas]\naccounting_denom_cents = 5\n"
SAS_DENOM = 5


@contextlib.contextmanager
def sas_host(cabinet, record) -> Iterator[SasHost]:
    """The terminal restarted with ``--sas pty`` and a SAS host (the product's) on its port; after
    the block, the terminal as the run started it, its credits cashed out (under SAS, a cash-out
    waits for the casino system's validation, which this test does not run)."""
    fresh(cabinet, record)
    record.step("restart the terminal with SAS on a pty (egm run --sas pty), 5-cent accounting credits")
    cabinet.start_extra("--sas", "pty", config=SAS_CONFIG)
    sas = until(lambda: cabinet.status().get("sas"), timeout=30, what="SAS running (status sas)")
    record.note(f"SAS: {sas}")
    host = SasHost(sas["port"], int(sas.get("address", 1)), timeout=5.0)
    try:
        yield host
    finally:
        host.close()
        record.step("back to the terminal as the run started it; cash out what the test left")
        cabinet.restore()
        cash_out_all(cabinet)


def _quiet(host: SasHost, limit: int = 60) -> list[int]:
    """General polls until the machine reports nothing; the exceptions it reported."""
    seen: list[int] = []
    for _ in range(limit):
        code = host.general_poll()
        if code is None:
            raise AssertionError("the machine did not answer a general poll")
        if code == ExceptionCode.NO_ACTIVITY:
            return seen
        seen.append(int(code) if isinstance(code, int) else int(getattr(code, "code", -1)))
    return seen


SAS_REQUIREMENT = (
    "The gaming device's protocol link to the casino system must answer the system's polls and "
    "report the same meters the device keeps, in the system's accounting units. "
    "(Section title: 'Communication Protocol' / meters reported to the system; number approximate.)")


@pytest.mark.hil(id="comms.sas.meters", standard="gli-11", clause="4.15 Communication Protocol (approx.)",
                 requirement=SAS_REQUIREMENT, title="SAS: general poll answered, meters equal the terminal's",
                 operator=False, duration=10, targets=("sim",))
def test_sas_meters(cabinet, record):
    with sas_host(cabinet, record) as host:
        record.step("general polls until the machine is quiet")
        code = host.general_poll()
        record.measure("general poll answered", code is not None, equals=True)
        _quiet(host)
        record.step("a $20 note and three rounds")
        cabinet.insert_note(20)
        cabinet.play_rounds(3)
        settle(cabinet)
        meters = cabinet.meters()
        m = meters["meters"]
        record.attach("terminal-meters", meters, "json")
        body = host.read(0x1C)
        record.measure("0x1C answered with meters", isinstance(body, Meters), equals=True)
        assert isinstance(body, Meters)
        record.attach("sas-0x1C", dict(body.values), "json")
        expected_1c = {
            "total_coin_in": m["coin_in"] // SAS_DENOM, "total_coin_out": m["coin_out"] // SAS_DENOM,
            "total_drop": (m["bills_in"] + m["ticket_in"]) // SAS_DENOM, "total_jackpot": m["jackpot"] // SAS_DENOM,
            "games_played": m["games_played"], "games_won": m["games_won"],
            "slot_door_opened": m["door_open.main"], "power_reset": m["power_reset"]}
        for name, value in expected_1c.items():
            record.measure(f"0x1C {name}", body[name], equals=value, soft=True)
        record.measure("games played (terminal)", m["games_played"], low=3)
        codes = (0x00, 0x01, 0x02, 0x05, 0x06, 0x07, 0x0C)
        selected = host.read(0x2F, SelectedMetersRequest(0, codes).encode())
        record.measure("0x2F answered with selected meters", isinstance(selected, SelectedMeters), equals=True)
        assert isinstance(selected, SelectedMeters)
        got = dict(selected.meters)
        record.attach("sas-0x2F", {f"0x{c:02X}": v for c, v in got.items()}, "json")
        expected_2f = {0x00: m["coin_in"] // SAS_DENOM, 0x01: m["coin_out"] // SAS_DENOM,
                       0x02: m["jackpot"] // SAS_DENOM, 0x05: m["games_played"], 0x06: m["games_won"],
                       0x07: m["games_lost"], 0x0C: meters["credits"] // SAS_DENOM}
        for c, value in expected_2f.items():
            record.measure(f"0x2F meter 0x{c:02X}", got.get(c), equals=value, soft=True)


DOOR_REQUIREMENT = (
    "A door opened on the gaming device must be reported to the casino system as it happens "
    "(SAS exception 0x11 slot door opened, 0x12 closed). "
    "(Section title: 'Communication Protocol' / significant events; number approximate.)")


@pytest.mark.hil(id="comms.sas.door", standard="gli-11", clause="4.15 Communication Protocol (approx.)",
                 requirement=DOOR_REQUIREMENT, title="SAS: a door opened is exception 0x11",
                 operator=False, duration=6, targets=("sim",))
def test_sas_door(cabinet, record):
    with sas_host(cabinet, record) as host:
        _quiet(host)
        record.step("open the main door, then close it")
        cabinet.sim("door", "open", "main")
        until(lambda: cabinet.status()["state"] == "TILT", timeout=15, what="the cabinet in TILT")
        cabinet.sim("door", "close", "main")
        until(lambda: cabinet.status()["state"] == "IDLE", timeout=15, what="the cabinet back in IDLE")
        seen: list[int] = []
        deadline = time.monotonic() + 20
        while ExceptionCode.SLOT_DOOR_CLOSED not in seen and time.monotonic() < deadline:
            seen += _quiet(host)
        record.note(f"exceptions reported: {[f'0x{c:02X}' for c in seen]}")
        record.measure("exception 0x11 (slot door opened) reported", seen.count(ExceptionCode.SLOT_DOOR_OPENED),
                       equals=1)
        record.measure("exception 0x12 (slot door closed) reported", seen.count(ExceptionCode.SLOT_DOOR_CLOSED),
                       equals=1)
        record.measure("0x11 before 0x12", seen.index(ExceptionCode.SLOT_DOOR_OPENED)
                       < seen.index(ExceptionCode.SLOT_DOOR_CLOSED), equals=True)


LINK_REQUIREMENT = (
    "The gaming device must notice when the casino system stops polling it (the link is down) and "
    "record it. (Section title: 'Communication Protocol' / loss of communication; number approximate.)")


@pytest.mark.hil(id="comms.sas.link", standard="gli-11", clause="4.15 Communication Protocol (approx.)",
                 requirement=LINK_REQUIREMENT, title="SAS: the link is noticed down when the polls stop",
                 operator=False, duration=12, targets=("sim",))
def test_sas_link(cabinet, record):
    with sas_host(cabinet, record) as host:
        _quiet(host)
        up = until(lambda: (s := cabinet.status().get("sas") or {}).get("link") == "up" and s, timeout=15,
                   what="status sas.link up while polled")
        record.measure("sas.link while polled", up["link"], equals="up")
        record.step("stop polling")
        stopped = time.monotonic()
        try:
            down = until(lambda: (s := cabinet.status().get("sas") or {}).get("link") == "down" and s, timeout=20,
                         what="status sas.link down after the polls stopped")
        except TargetError:
            down = cabinet.status().get("sas") or {}
        record.measure("sas.link after the polls stopped", down.get("link"), equals="down")
        record.measure("seconds until the link was noticed down", round(time.monotonic() - stopped, 1), high=15,
                       unit="s")
        record.step("poll again: the link comes back up")
        host.general_poll()
        back = until(lambda: (s := cabinet.status().get("sas") or {}).get("link") == "up" and s, timeout=15,
                     what="status sas.link up again")
        record.measure("sas.link when polled again", back["link"], equals="up")
        events = [e for e in cabinet.events(100) if e.get("event") == "sas_link"]
        record.attach("sas-link-events", events, "json")
        record.measure("sas_link events logged (down and up)", len(events), low=2)
