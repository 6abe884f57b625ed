"""The real shoe driver against the simulated shoe over a real pty, end to end: every dealt card
arrives exactly once and in order (through lost, repeated and corrupted frames, an unplug and a
silent line), ``PhysicalShoeSource`` feeds a real baccarat-war round, misread / empty / a shoe that
lost its state end the round as a misdeal. Every test checks it leaves no thread and no fd behind.
The contract class at the bottom also runs against a real shoe when ``EGM_HW_SHOE`` names its port.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest

from drivers.shoe.driver import ShoeDriver, ShoeEmpty, ShoeMisread, ShoeStateLost
from drivers.shoe.messages import MisreadReason
from firmware.cards.card import Card, format_cards, parse_cards
from firmware.cards.errors import ShoeExhausted
from firmware.cards.source import PhysicalShoe, PhysicalShoeSource
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel
from hal import registry
from hal.base import Lifecycle
from hal.errors import (
    BackendError,
    DeviceClosedError,
    DeviceInitError,
    DeviceTimeoutError,
)
from hal.events import (
    CardBurned,
    CardDrawn,
    DeviceFault,
    DeviceOffline,
    DeviceOnline,
    FaultKind,
    ShoeDoor,
    ShoeStatus,
)
from sim_hardware.pty_link import PtyLink, ServeThread, run_on_pty
from sim_hardware.shoe import ShoeSimulator
from tests.drivers.events import collect, wait_until
from tests.drivers.hardware import Technician, contract_params
from tests.drivers.interface import assert_a_missing_member_fails, assert_implements
from tests.drivers.sim_process import egm_sim, line, pty_path, send

NAME = "shoe"
HW_PORT = os.environ.get("EGM_HW_SHOE", "")
#: Reply time-out of the driver under test: generous, the test machine is shared.
REPLY_S = 0.5
#: FIG. 8: seat and dealer tie at 3, the war is dealt Td Ts 6c 9s: 8 cards in all.
FIG8 = parse_cards("Qs 2d 3h Ah Td Ts 6c 9s")
WAGERS = {1: {"bac": 10, "war": 10}}


pytestmark = pytest.mark.usefixtures("no_leaks")


@pytest.fixture
def sim() -> ShoeSimulator:
    return ShoeSimulator(FIG8, retry_s=0.05)


@pytest.fixture
def shoe(link) -> Iterator[ShoeDriver]:
    with ShoeDriver(NAME, port=link.path, timeout=REPLY_S) as dev:
        yield dev


def deal_all(sim: ShoeSimulator, n: int) -> list[Card]:
    """The dealer draws ``n`` cards, waiting whenever the shoe's window is full."""
    out = []
    deadline = time.monotonic() + 10
    while len(out) < n:
        card = sim.draw()
        if card is None:
            assert sim.window_full and time.monotonic() < deadline, "the shoe stopped dealing"
            time.sleep(0.002)
            continue
        out.append(card)
    return out


def kernel() -> RoundKernel:
    game = get_game("baccarat-war")
    return RoundKernel(game, make_options(game.id))


class RoundThread:
    """A baccarat-war round on the kernel, its cards read from the shoe as the dealer draws."""

    def __init__(self, dev: PhysicalShoe) -> None:
        self.kernel = kernel()
        self.source = PhysicalShoeSource(dev, timeout=5.0)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="round")

    def _run(self) -> None:
        try:
            self.kernel.play(WAGERS, self.source)
        except BaseException as exc:
            self.error = exc

    def __enter__(self) -> RoundThread:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join(10)
        assert not self._thread.is_alive()

    def wait_for(self, dealt: int) -> None:
        wait_until(lambda: len(self.source.dealt) >= dealt)


# --- delivery: exactly once, in order -----------------------------------------------------------
def test_open_resets_and_a_whole_round_arrives_in_order(shoe, sim):
    assert collect(shoe, lambda e: isinstance(e, DeviceOnline))[-1] == DeviceOnline(NAME)
    wait_until(lambda: shoe.loaded == 8)                         # LOADED follows the RESET
    assert sim.received[0x06] == 1
    drawn = deal_all(sim, 8)
    assert [shoe.read_card(2.0) for _ in range(8)] == drawn == FIG8
    events = collect(shoe, lambda e: isinstance(e, CardDrawn) and e.seq == 8)
    assert [(e.card, e.seq) for e in events if isinstance(e, CardDrawn)] == list(
        zip(FIG8, range(1, 9), strict=True))
    with pytest.raises(DeviceTimeoutError, match="no card drawn"):
        shoe.read_card(0.05)
    assert shoe.queued == 0 and sim.unacknowledged == []


def test_a_416_card_shoe_arrives_once_in_order_through_lost_repeated_and_damaged_frames(link, sim):
    cards = sim.shuffle(416)
    with ShoeDriver(NAME, port=link.path, timeout=REPLY_S) as dev:
        sim.disturb(loss=0.2, dup=0.2, seed=416)
        sim.corrupt_next_crc(3)
        got: list[Card] = []
        reader = threading.Thread(target=lambda: got.extend(dev.read_card(5.0) for _ in range(416)))
        reader.start()
        drawn = deal_all(sim, 416)
        reader.join(20)
        assert not reader.is_alive()
        assert drawn == cards and got == cards
        assert dev.counters["bad_crc"] >= 1
        assert dev._rx.duplicates > 0 and dev._rx.gaps > 0      # the faults did reach the driver
        sim.disturb()
        assert sim.draw() is None                                # empty: a misdeal for a round
        with pytest.raises(ShoeEmpty):
            dev.read_card(2.0)
        wait_until(lambda: sim.unacknowledged == [])
        time.sleep(0.1)
        assert dev.queued == 0


def test_a_round_survives_an_unplug_and_replug_with_a_new_port(shoe, sim, link):
    """The pty closes mid-round; cards drawn while unplugged arrive once the new port opens."""
    with RoundThread(shoe) as rnd:
        deal_all(sim, 3)
        rnd.wait_for(3)
        sim.unplug()
        assert collect(shoe, lambda e: isinstance(e, DeviceOffline))[-1].reason.startswith(
            "port error")
        deal_all(sim, 3)                                  # drawn with the cable out: kept
        with PtyLink() as again:
            runner = ServeThread(sim.serve, again.port, name="shoe-sim-again").start()
            try:
                shoe.port = again.path                    # the hot-plug monitor found it
                shoe.reopen()
                deal_all(sim, 2)
                rnd.wait_for(8)
            finally:
                shoe.close()
                runner.stop()
    assert rnd.error is None
    record = rnd.kernel.record()
    assert record["cards_dealt"] == format_cards(FIG8) == format_cards(sim.dealt)
    assert record["source"] == "physical" and record["net"] == 10
    assert record["seats"][0]["war_cards"] == ["Td", "6c"]


def test_a_silent_line_is_resynchronised_by_hello_and_lost_when_too_long(shoe, sim):
    deal_all(sim, 2)
    assert [shoe.read_card(2.0) for _ in range(2)] == FIG8[:2]
    sim.unplug(close_port=False)
    deal_all(sim, 2)
    sim.replug()                                          # back before the driver gives up
    assert [shoe.read_card(2.0) for _ in range(2)] == FIG8[2:4]
    assert shoe.counters["reconnects"] == 1 and shoe.is_open
    sim.unplug(close_port=False)
    deal_all(sim, 2)
    assert collect(shoe, lambda e: isinstance(e, DeviceOffline), 5.0)[-1] == DeviceOffline(
        NAME, "no answer to 3 status requests in a row")
    sim.replug()
    shoe.reopen()
    deal_all(sim, 2)
    assert [shoe.read_card(2.0) for _ in range(4)] == FIG8[4:]
    time.sleep(0.1)
    assert shoe.queued == 0


# --- the kernel --------------------------------------------------------------------------------
def test_physical_shoe_source_feeds_a_real_baccarat_war_round(shoe, sim):
    with RoundThread(shoe) as rnd:
        sim.repeat()                                      # every frame twice: dealt once
        deal_all(sim, 8)
    assert rnd.error is None
    record = rnd.kernel.record()
    assert record["cards_dealt"] == format_cards(sim.dealt) == format_cards(FIG8)
    assert record["seats"][0]["cards"] == ["Qs", "3h"] and record["dealer"]["cards"] == ["2d", "Ah"]
    assert record["wars"]["misdeal"] is False


@pytest.mark.parametrize("fault", ["misread", "empty", "power-cycle"])
def test_misread_empty_and_a_lost_state_in_a_war_end_it_as_a_misdeal(link, fault):
    sim = ShoeSimulator(FIG8[:4] if fault == "empty" else FIG8, retry_s=0.05)
    with run_on_pty(sim) as link, ShoeDriver(NAME, port=link.path, timeout=REPLY_S) as dev:
        with RoundThread(dev) as rnd:
            deal_all(sim, 4)
            rnd.wait_for(4)
            if fault == "misread":
                sim.misread_next(MisreadReason.TWO_CARDS)
                sim.draw()
            elif fault == "empty":
                assert sim.draw() is None
            else:
                sim.power_cycle()
        assert rnd.error is None
        record = rnd.kernel.record()
        assert record["wars"]["misdeal"] is True and record["net"] == 0
        assert record["seats"][0]["results"]["bac"]["outcome"] == "void"
        assert record["cards_dealt"] == format_cards(FIG8[:4])
        events = dev.drain_events()
        if fault == "misread":
            assert DeviceFault(NAME, FaultKind.MISREAD, "card 5 misread: two cards at once") in events
        elif fault == "empty":
            assert ShoeStatus(NAME, empty=True) in events
        else:
            lost = [e for e in events if isinstance(e, DeviceFault)]
            assert [(e.kind, e.cleared) for e in lost] == [(FaultKind.STATE_LOST, False)]
            assert "power-up" in lost[0].detail
            sim.load(FIG8)                                # the attendant reloads the shoe
            assert collect(dev, lambda e: isinstance(e, DeviceFault))[-1] == DeviceFault(
                NAME, FaultKind.STATE_LOST, "a shoe is loaded", cleared=True)
            deal_all(sim, 8)
            assert [dev.read_card(2.0) for _ in range(8)] == FIG8


def test_a_misread_in_the_initial_deal_leaves_begin_as_a_shoe_exhausted(shoe, sim):
    sim.misread_next()
    sim.draw()
    k = kernel()
    with pytest.raises(ShoeMisread) as info:
        k.begin(WAGERS, PhysicalShoeSource(shoe, timeout=2.0))
    assert isinstance(info.value, ShoeExhausted)          # the cabinet voids the round
    deal_all(sim, 7)
    assert collect(shoe, lambda e: isinstance(e, DeviceFault) and e.cleared)[-1] == DeviceFault(
        NAME, FaultKind.MISREAD, "a card read again", cleared=True)
    assert [shoe.read_card(2.0) for _ in range(7)] == FIG8[1:]


def test_a_malformed_card_is_acknowledged_and_read_as_a_misread(shoe, sim):
    sim.send_frame(0x20, b"Zz")
    with pytest.raises(ShoeMisread, match="malformed frame: CARD: not a card"):
        shoe.read_card(2.0)
    wait_until(lambda: sim.unacknowledged == [])
    assert shoe.counters["malformed"] == 1


# --- the other messages ------------------------------------------------------------------------
def test_burn_cut_card_and_door_are_events_and_a_burned_card_is_not_dealt(link):
    sim = ShoeSimulator(FIG8, cut_at=2, retry_s=0.05)
    with run_on_pty(sim) as link, ShoeDriver(NAME, port=link.path, timeout=REPLY_S) as dev:
        sim.burn()
        sim.open_door()
        sim.close_door()
        sim.draw()
        sim.draw()                                        # the cut card comes out first
        events = collect(dev, lambda e: isinstance(e, CardDrawn) and e.seq == 3)
        assert [e for e in events if not isinstance(e, DeviceOnline | ShoeStatus)] == [
            CardBurned(NAME, FIG8[0], 1), ShoeDoor(NAME, open=True), ShoeDoor(NAME, open=False),
            CardDrawn(NAME, FIG8[1], 2), CardDrawn(NAME, FIG8[2], 3)]
        assert ShoeStatus(NAME, empty=False, cut_card=True) in events
        assert [dev.read_card(1.0), dev.read_card(1.0)] == FIG8[1:3]
        assert dev.status().cut_card and dev.cut_card


def test_status_and_expect(shoe, sim):
    state = shoe.status()
    assert (state.left, state.empty, state.door_open, state.window_full) == (8, False, False, False)
    sim.lose_next_from_host()
    shoe.expect(6)                                        # lost once, re-sent by the timer
    wait_until(lambda: sim.expected_cards == 6)
    wait_until(lambda: shoe._tx.unacknowledged == [])
    shoe.expect(4)
    wait_until(lambda: sim.expected_cards == 4)
    with pytest.raises(ValueError):
        shoe.expect(70_000)


def test_open_fails_cleanly_and_a_closed_shoe_reads_nothing(link, sim, tmp_path):
    with pytest.raises(DeviceInitError, match="cannot open"):
        ShoeDriver(NAME, port=str(tmp_path / "ttyNONE"), timeout=0.1).open()
    sim.power_off()
    dev = ShoeDriver(NAME, port=link.path, timeout=0.1)
    with pytest.raises(DeviceInitError, match="no HELLO in answer to RESET"):
        dev.open()
    assert dev.lifecycle is Lifecycle.CLOSED and dev.drain_events() == []
    with pytest.raises(DeviceClosedError):
        dev.read_card(0.1)


def test_the_registry_builds_it_from_settings(link):
    dev = registry.create("shoe", "shoe", NAME, {"port": link.path, "timeout": REPLY_S})
    assert isinstance(dev, ShoeDriver) and isinstance(dev, PhysicalShoe) and not dev.is_open
    with pytest.raises(BackendError, match="settings are port, timeout"):
        registry.create("shoe", "shoe", NAME, {"port": link.path, "baud": 9600})


# --- the contract: simulator always, real hardware when attached ---------------------------------
class SimulatedDealer:
    wait_s = 3.0

    def __init__(self, sim: ShoeSimulator) -> None:
        self.sim = sim

    def draw(self, n: int) -> None:
        deal_all(self.sim, n)

    def burn(self) -> None:
        assert self.sim.burn() is not None

    def door(self) -> None:
        self.sim.open_door()
        self.sim.close_door()


class HardwareDealer(Technician):
    """A technician at a real shoe, prompted on the terminal."""

    wait_s = 60.0

    def draw(self, n: int) -> None:
        self._say(f"draw {n} cards from the shoe")

    def burn(self) -> None:
        self._say("burn one card (the shoe's burn button, then draw it)")

    def door(self) -> None:
        self._say("open the shoe's door, then close it")


@pytest.fixture(params=contract_params(
    HW_PORT, "no card-reading shoe attached: set EGM_HW_SHOE=<port> to run this contract on a "
             "real one"))
def contract(request, no_leaks) -> Iterator[tuple[ShoeDriver, SimulatedDealer | HardwareDealer]]:
    if request.param == "hardware":
        with ShoeDriver(NAME, port=HW_PORT, timeout=1.0) as dev:
            yield dev, HardwareDealer(request)
        return
    sim = ShoeSimulator(seed=1, retry_s=0.05)
    with run_on_pty(sim) as link, ShoeDriver(NAME, port=link.path, timeout=REPLY_S) as dev:
        yield dev, SimulatedDealer(sim)


class TestShoeContract:
    """What the cabinet relies on from any card-reading shoe backend."""

    def test_it_and_every_registered_shoe_implement_the_interface(self, contract):
        dev, _ = contract
        assert_implements(dev, "shoe")

    def test_a_shoe_missing_a_member_of_the_interface_is_refused(self, monkeypatch):
        assert_a_missing_member_fails("shoe", monkeypatch)

    def test_opens_online_and_answers_a_status_request(self, contract):
        dev, _ = contract
        assert dev.next_event(1.0) is not None
        state = dev.status()
        assert state.left >= 0 and state.next_seq >= 1

    def test_cards_drawn_are_read_in_order_once(self, contract):
        dev, dealer = contract
        dev.flush()
        dealer.draw(4)
        cards = [dev.read_card(dealer.wait_s) for _ in range(4)]
        drawn = [e for e in collect(dev, lambda e: isinstance(e, CardDrawn) and e.card == cards[-1],
                                    dealer.wait_s) if isinstance(e, CardDrawn)]
        assert [e.card for e in drawn][-4:] == cards
        with pytest.raises(DeviceTimeoutError):
            dev.read_card(0.3)

    def test_a_burned_card_is_an_event_and_not_dealt(self, contract):
        dev, dealer = contract
        dev.flush()
        dealer.burn()
        collect(dev, lambda e: isinstance(e, CardBurned), dealer.wait_s)
        with pytest.raises(DeviceTimeoutError):
            dev.read_card(0.3)

    def test_the_door_is_reported(self, contract):
        dev, dealer = contract
        dealer.door()
        assert collect(dev, lambda e: isinstance(e, ShoeDoor) and not e.open, dealer.wait_s)


def test_state_lost_is_raised_for_a_round_waiting_on_the_shoe(shoe, sim):
    sim.power_cycle()
    with pytest.raises(ShoeStateLost, match="lost its state"):
        shoe.read_card(2.0)


def test_egm_sim_shoe_process_deals_to_the_real_driver():
    with egm_sim("shoe", "--pty") as proc:
        path = pty_path(proc)
        with ShoeDriver(NAME, port=path, timeout=REPLY_S) as dev:
            wait_until(lambda: dev.loaded == 416)
            send(proc, "draw 3\nburn\n")
            drawn = parse_cards(line(proc))
            burned = Card.parse(line(proc))
            assert [dev.read_card(2.0) for _ in range(3)] == drawn
            assert collect(dev, lambda e: isinstance(e, CardBurned))[-1] == CardBurned(
                NAME, burned, 4)
        send(proc, "left\nquit\n")
        assert line(proc) == "412"
        assert proc.wait(timeout=5) == 0
