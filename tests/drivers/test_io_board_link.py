"""The real I/O board driver against the simulated board over a real pty, end to end: edges in
order, a door opened while the cable was out reported after the reconnect, meter pulses exactly
once across a disconnect and a power cycle, tower and lamps. Every test checks it leaves no thread
and no fd behind. The contract class also runs against a real board when ``EGM_HW_IO`` names its
port."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from drivers.io_board.driver import IoBoardDriver
from drivers.io_board.messages import Meter
from hal import registry
from hal.devices.io_board import TowerPattern
from hal.errors import BackendError, DeviceInitError
from hal.events import (
    Button,
    ButtonPressed,
    DeviceEvent,
    DeviceOffline,
    DeviceOnline,
    Door,
    DoorChanged,
    KeySwitch,
    KeyTurned,
)
from sim_hardware.io_board import IoBoardSimulator
from sim_hardware.pty_link import PtyLink, ServeThread, run_on_pty
from tests.drivers.events import collect, wait_until
from tests.drivers.hardware import Technician, contract_params
from tests.drivers.interface import assert_a_missing_member_fails, assert_implements
from tests.drivers.sim_process import egm_sim, line, lines, pty_path, send

NAME = "io"
HW_PORT = os.environ.get("EGM_HW_IO", "")
REPLY_S = 0.5


pytestmark = pytest.mark.usefixtures("no_leaks")


@pytest.fixture
def sim() -> IoBoardSimulator:
    return IoBoardSimulator(pulse_s=0.005, retry_s=0.05)


@pytest.fixture
def board(link) -> Iterator[IoBoardDriver]:
    with IoBoardDriver(NAME, port=link.path, timeout=REPLY_S) as dev:
        yield dev


def io_events(events: list[DeviceEvent]) -> list[DeviceEvent]:
    return [e for e in events if isinstance(e, DoorChanged | KeyTurned | ButtonPressed)]


def test_a_door_open_before_the_host_starts_is_reported_by_the_snapshot(link, sim):
    sim.open_door(Door.CASH_BOX)
    with IoBoardDriver(NAME, port=link.path, timeout=REPLY_S) as dev:
        events = collect(dev, lambda e: isinstance(e, DoorChanged))
        events += collect(dev, lambda e: isinstance(e, DeviceOnline)) if DeviceOnline(NAME) \
            not in events else []
        assert sorted(events, key=repr) == [DeviceOnline(NAME),
                                            DoorChanged(NAME, Door.CASH_BOX, open=True)]
        assert dev.is_open_door(Door.CASH_BOX) and sim.received[0x06] == 1


def test_edges_and_button_presses_arrive_in_order_through_a_disturbed_line(board, sim):
    sim.disturb(loss=0.3, dup=0.3, seed=7)
    sim.corrupt_next_crc(2)
    presses = [Button.DEAL, Button.BET, Button.REPEAT, Button.HELP, Button.CASH_OUT,
               Button.SERVICE] * 5
    sim.turn_key(KeySwitch.AUDIT)
    for button in presses:
        sim.press(button)
    sim.turn_key(KeySwitch.AUDIT, False)
    events = io_events(collect(board, lambda e: isinstance(e, KeyTurned) and not e.on, 8.0))
    assert events == ([KeyTurned(NAME, KeySwitch.AUDIT, on=True)]
                      + [ButtonPressed(NAME, b) for b in presses]
                      + [KeyTurned(NAME, KeySwitch.AUDIT, on=False)])
    assert board.counters["bad_crc"] >= 1 and board._rx.duplicates + board._rx.gaps > 0


def test_a_door_opened_while_the_cable_is_out_is_reported_after_reconnect(board, sim):
    sim.unplug()
    assert collect(board, lambda e: isinstance(e, DeviceOffline))[-1].reason.startswith("port error")
    sim.open_door(Door.MAIN)                             # with the cable out
    sim.open_door(Door.LOGIC)
    sim.close_door(Door.MAIN)
    with PtyLink() as again:
        runner = ServeThread(sim.serve, again.port, name="io-sim-again").start()
        try:
            board.port = again.path
            board.reopen()
            events = io_events(collect(board, lambda e: isinstance(e, DoorChanged) and
                                       e.door is Door.MAIN and not e.open))
        finally:
            board.close()
            runner.stop()
    assert events == [DoorChanged(NAME, Door.MAIN, True), DoorChanged(NAME, Door.LOGIC, True),
                      DoorChanged(NAME, Door.MAIN, False)]


def test_a_door_opened_while_the_board_was_off_comes_in_the_snapshot(board, sim):
    sim.power_off()
    sim.open_door(Door.LOGIC)                           # no power: no edge ...
    sim.inputs[Door.LOGIC] = True                       # ... but the switch is open all the same
    sim.power_on()
    assert io_events(collect(board, lambda e: isinstance(e, DoorChanged))) == [
        DoorChanged(NAME, Door.LOGIC, True)]
    assert board.counters["power_ups"] == 1 and board.counters["snapshots"] >= 2


def test_meter_pulses_exactly_once_across_a_disconnect(board, sim):
    sim.pulse_s = 0.02
    board.pulse_meter(Meter.COIN_IN, 20)
    wait_until(lambda: sim.meters[Meter.COIN_IN] >= 3)
    sim.unplug()                                         # mid-job: the ACK will be lost
    collect(board, lambda e: isinstance(e, DeviceOffline))
    board.pulse_meter(Meter.COIN_OUT, 2)                 # accepted while gone, sent on return
    assert board.unacknowledged == 2 and sim.meters[Meter.COIN_IN] < 20
    with PtyLink() as again:
        runner = ServeThread(sim.serve, again.port, name="io-sim-again").start()
        try:
            board.port = again.path
            board.reopen()
            assert board.wait_sent(3.0)
        finally:
            board.close()
            runner.stop()
    assert sim.meters == {Meter.COIN_IN: 20, Meter.COIN_OUT: 2}


def test_meter_pulses_exactly_once_across_a_silent_line_and_a_power_cycle(board, sim):
    sim.pulse_s = 0.02
    board.pulse_meter(Meter.DROP, 10)
    wait_until(lambda: sim.meters[Meter.DROP] >= 2)
    sim.unplug(close_port=False)
    time.sleep(0.1)
    sim.replug()
    wait_until(lambda: sim.meters[Meter.DROP] >= 6)
    sim.power_cycle()
    assert board.wait_sent(3.0) and sim.meters[Meter.DROP] == 10
    for _ in range(5):
        board.pulse_meter(Meter.GAMES_PLAYED, 1)
    assert board.wait_sent(3.0)
    time.sleep(0.15)                                    # re-sends would have doubled by now
    assert sim.meters == {Meter.DROP: 10, Meter.GAMES_PLAYED: 5}


def test_tower_and_button_lamps_and_status(board, sim):
    sim.lose_next_from_host()
    board.tower(0, TowerPattern.FLASH_SLOW)              # lost once, re-sent by the timer
    board.tower(1, TowerPattern.ON)
    board.button_lamps({Button.DEAL, Button.BET})
    assert board.wait_sent(3.0)
    assert sim.tower == {0: TowerPattern.FLASH_SLOW, 1: TowerPattern.ON}
    assert sim.lamps == {Button.DEAL, Button.BET}
    sim.open_door(Door.MAIN)
    collect(board, lambda e: isinstance(e, DoorChanged))
    state = board.status()
    assert state.is_on(Door.MAIN) and state.pending == 0 and state.pulses_left == 0
    with pytest.raises(ValueError):
        board.pulse_meter(Meter.DROP, 0)


def test_open_fails_cleanly_and_the_registry_builds_it(link, sim, tmp_path):
    with pytest.raises(DeviceInitError, match="cannot open"):
        IoBoardDriver(NAME, port=str(tmp_path / "ttyNONE"), timeout=0.1).open()
    sim.power_off()
    with pytest.raises(DeviceInitError, match="no HELLO in answer to RESET"):
        IoBoardDriver(NAME, port=link.path, timeout=0.1).open()
    dev = registry.create("io", "io", NAME, {"port": link.path, "timeout": REPLY_S})
    assert isinstance(dev, IoBoardDriver) and not dev.is_open
    with pytest.raises(BackendError, match="settings are port, timeout"):
        registry.create("io", "io", NAME, {"port": link.path, "baud": 9600})


# --- the contract: simulator always, real hardware when attached ---------------------------------
class SimulatedTechnician:
    wait_s = 3.0

    def __init__(self, sim: IoBoardSimulator) -> None:
        self.sim = sim

    def main_door(self) -> None:
        self.sim.open_door(Door.MAIN)
        self.sim.close_door(Door.MAIN)

    def press(self, buttons: list[Button]) -> None:
        for b in buttons:
            self.sim.press(b)

    def meter(self, meter: int) -> int:
        return self.sim.meters[meter]


class HardwareTechnician(Technician):
    wait_s = 60.0

    def main_door(self) -> None:
        self._say("open the main door, then close it")

    def press(self, buttons: list[Button]) -> None:
        self._say("press, in this order: " + ", ".join(b.value for b in buttons))

    def meter(self, meter: int) -> int:
        return int(self._say(f"what does hard meter {meter} read?"))


@pytest.fixture(params=contract_params(
    HW_PORT, "no I/O board attached: set EGM_HW_IO=<port> to run this contract on a real one"))
def contract(request, no_leaks):
    if request.param == "hardware":
        with IoBoardDriver(NAME, port=HW_PORT, timeout=1.0) as dev:
            yield dev, HardwareTechnician(request)
        return
    sim = IoBoardSimulator(pulse_s=0.005, retry_s=0.05)
    with run_on_pty(sim) as link, IoBoardDriver(NAME, port=link.path, timeout=REPLY_S) as dev:
        yield dev, SimulatedTechnician(sim)


class TestIoBoardContract:
    """What the cabinet relies on from any I/O board backend."""

    def test_it_and_every_registered_board_implement_the_interface(self, contract):
        dev, _ = contract
        assert_implements(dev, "io")

    def test_a_board_missing_a_member_of_the_interface_is_refused(self, monkeypatch):
        assert_a_missing_member_fails("io", monkeypatch)

    def test_opens_online_and_answers_a_status_request(self, contract):
        dev, _ = contract
        assert dev.next_event(1.0) is not None
        assert dev.status().next_seq >= 1

    def test_the_main_door_is_reported_open_then_closed(self, contract):
        dev, tech = contract
        tech.main_door()
        events = io_events(collect(dev, lambda e: isinstance(e, DoorChanged) and not e.open,
                                   tech.wait_s))
        assert events[-2:] == [DoorChanged(NAME, Door.MAIN, True), DoorChanged(NAME, Door.MAIN, False)]

    def test_buttons_arrive_in_order(self, contract):
        dev, tech = contract
        order = [Button.BET, Button.DEAL, Button.CASH_OUT]
        tech.press(order)
        events = io_events(collect(dev, lambda e: e == ButtonPressed(NAME, Button.CASH_OUT),
                                   tech.wait_s))
        assert events[-3:] == [ButtonPressed(NAME, b) for b in order]

    def test_a_meter_advances_by_exactly_the_pulses_sent(self, contract):
        dev, tech = contract
        before = tech.meter(Meter.GAMES_PLAYED)
        dev.pulse_meter(Meter.GAMES_PLAYED, 3)
        assert dev.wait_sent(tech.wait_s)
        assert tech.meter(Meter.GAMES_PLAYED) == before + 3


def test_egm_sim_io_process_serves_the_real_driver():
    with egm_sim("io", "--pty") as proc:
        path = pty_path(proc)
        with IoBoardDriver(NAME, port=path, timeout=REPLY_S) as dev:
            send(proc, "open main\npress deal bet\n")
            assert lines(proc, 2) == ["ok", "ok"]
            events = io_events(collect(dev, lambda e: e == ButtonPressed(NAME, Button.BET)))
            assert events == [DoorChanged(NAME, Door.MAIN, True), ButtonPressed(NAME, Button.DEAL),
                              ButtonPressed(NAME, Button.BET)]
            dev.pulse_meter(Meter.JACKPOT, 2)
            dev.tower(0, TowerPattern.ON)
            assert dev.wait_sent(3.0)
        send(proc, "meters\ntower\nquit\n")
        assert line(proc) == "3:2"
        assert line(proc) == "0:on"
        assert proc.wait(timeout=5) == 0
