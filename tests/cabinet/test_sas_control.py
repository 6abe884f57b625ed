"""The control and information polls against a real terminal (built as tests/cabinet/test_terminal.py
builds one, no devices but where a test fits a fake): play locked out at the end of the round and
across a power cut, beside the FIG. 16 host's own disable; the bill acceptor; the handpay; the ROM
signature of a copied software tree; the games as SAS numbers them."""

from __future__ import annotations

import shutil

import pytest

from drivers.sas.codec import LongPoll
from drivers.sas.crc import sas_crc
from firmware.cabinet.sas_control import ACCEPTOR_DISABLED, PLAY_STOPS, control_poll_sets
from firmware.cabinet.sas_info import InstalledSoftware, TerminalGames
from firmware.cabinet.states import CabinetState as S
from firmware.cabinet.terminal import Devices, Terminal, TerminalError
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.ledger.ledger import accounting_difference
from firmware.rng.service import RngService
from firmware.sas.games import Features
from firmware.sas.responder import SasMachine
from firmware.sas.rom import RomSignaturePoll
from firmware.sas.view import LedgerView
from hal.events import NoteEscrowed
from tests.cabinet.test_service import FakeValidator
from tests.sas.helpers import ADDRESS, IDENTITY, NOW, ask

SHUTDOWN, STARTUP = bytes.fromhex("01 01 51 08"), bytes.fromhex("01 02 CA 3A")
DISABLE_BILLS, ENABLE_BILLS = bytes.fromhex("01 07 67 6D"), bytes.fromhex("01 06 EE 7C")
GENERAL = bytes.fromhex("81")
ACK = b"\x01"


def start(state, cfg=None, devices=None):
    from firmware.ledger.ledger import Ledger

    ledger = Ledger.open(state, denomination=5)
    terminal = Terminal(cfg or Config.model_validate({"terminal": {"denomination": 5}}), ledger, RngService.seeded(7),
                        devices or Devices(), VoucherBook(ledger, terminal_id="T1"))
    terminal.power_up()
    machine = SasMachine(ADDRESS, LedgerView(ledger, IDENTITY, clock=lambda: NOW),
                         polls=control_poll_sets(terminal, IDENTITY, Features()))
    return terminal, ledger, machine


def command(machine: SasMachine, frame: bytes) -> bytes:
    """Send one long poll and let the host acknowledge it (a general poll follows, as hosts do)."""
    reply = machine.receive(frame)
    machine.receive(GENERAL)
    return reply


def settle(terminal: Terminal, steps: int = 20) -> None:
    for _ in range(steps):
        terminal.step()


def test_shutdown_during_a_round_waits_for_its_end_tells_the_player_and_startup_lifts_it(tmp_path):
    terminal, ledger, machine = start(tmp_path)
    terminal.choose_game("three-card-poker")
    ledger.bill_in(2000)
    terminal.play()
    terminal.step()                                       # the round waits for the player's decision
    assert command(machine, SHUTDOWN) == ACK
    assert terminal.cabinet.state is S.PLAYING and terminal.cabinet.disable_pending
    assert terminal.message == PLAY_STOPS
    terminal.decide(1, "play")
    settle(terminal)
    status = terminal.status()
    assert status["state"] == "DISABLED" and status["disabled_by"] == ["sas"]
    assert ledger.open_round is None and accounting_difference(ledger.meters) == 0
    with pytest.raises(TerminalError, match=r"a round cannot start now \(disabled\)"):
        terminal.play()
    assert command(machine, STARTUP) == ACK
    assert terminal.cabinet.state is S.IDLE and terminal.status()["disabled_by"] == []
    ledger.close()


def test_shutdown_in_attract_is_at_once_and_survives_a_power_cut(tmp_path):
    terminal, ledger, machine = start(tmp_path)
    assert command(machine, SHUTDOWN) == ACK
    assert terminal.cabinet.state is S.DISABLED
    assert [e["event"] for e in ledger.events(10)].count("sas.play") == 1
    ledger.close()                                        # the power goes
    terminal, ledger, machine = start(tmp_path)
    assert terminal.cabinet.state is S.DISABLED and terminal.cabinet.disabled_by == {"sas"}
    assert command(machine, STARTUP) == ACK and terminal.cabinet.state is S.IDLE
    ledger.close()
    terminal, ledger, machine = start(tmp_path)           # lifted: it does not come back
    assert terminal.cabinet.state is S.IDLE
    ledger.close()


@pytest.mark.parametrize("host_lifts_first", [True, False])
def test_sas_and_the_host_link_each_lift_only_their_own_disable(tmp_path, host_lifts_first):
    terminal, ledger, machine = start(tmp_path)
    terminal.cabinet.disable()                            # the FIG. 16 host's disable (its default)
    assert command(machine, SHUTDOWN) == ACK
    if host_lifts_first:
        terminal.cabinet.enable()
        assert terminal.cabinet.state is S.DISABLED and terminal.cabinet.disabled_by == {"sas"}
        assert command(machine, STARTUP) == ACK
    else:
        assert command(machine, STARTUP) == ACK
        assert terminal.cabinet.state is S.DISABLED and terminal.cabinet.disabled_by == {"host"}
        terminal.cabinet.enable()
    assert terminal.cabinet.state is S.IDLE
    ledger.close()


def test_the_bill_acceptor_disabled_by_sas_stays_disabled_returns_notes_and_survives_a_power_cut(tmp_path):
    validator = FakeValidator()
    terminal, ledger, machine = start(tmp_path, devices=Devices(bill_validator=validator))
    settle(terminal, 3)
    assert validator.enabled is True
    assert command(machine, DISABLE_BILLS) == ACK
    settle(terminal, 3)
    assert validator.enabled is False and terminal.status()["accepting_notes"] is False
    terminal.money_in.on_note_escrowed("bill_validator", NoteEscrowed("bill_validator", value_cents=2000))
    assert validator.returned == 1 and ledger.credits == 0
    assert terminal.message == f"note returned: {ACCEPTOR_DISABLED}"
    ledger.close()
    terminal, ledger, machine = start(tmp_path, devices=Devices(bill_validator=validator))
    settle(terminal, 3)
    assert validator.enabled is False                     # still disabled after the power cut
    assert command(machine, ENABLE_BILLS) == ACK
    settle(terminal, 3)
    assert validator.enabled is True and terminal.cabinet.state is S.IDLE
    ledger.close()


def test_handpay_information_and_remote_reset_pay_the_lockup_once(tmp_path):
    terminal, ledger, machine = start(tmp_path)           # no printer: a cash-out is a handpay
    ledger.bill_in(2000)                                  # 400 credits of 5 cents
    terminal.request_cashout()
    assert terminal.cabinet.state is S.HANDPAY
    info = ask(machine, LongPoll(ADDRESS, 0x1B))
    assert (info.level, info.amount) == (0x80, 400)       # cancelled credits, 2000 cents / 5
    machine.receive(GENERAL)
    assert ask(machine, LongPoll(ADDRESS, 0x94)).status == 0x00
    assert terminal.cabinet.state is S.IDLE and ledger.credits == 0
    assert ledger.meters["handpay_cancelled_credits"] == 2000 and accounting_difference(ledger.meters) == 0
    machine.receive(GENERAL)
    assert ask(machine, LongPoll(ADDRESS, 0x94)).status == 0x02
    machine.receive(GENERAL)
    assert ask(machine, LongPoll(ADDRESS, 0x1B)).amount == 0
    assert ledger.meters["handpay_cancelled_credits"] == 2000          # paid once
    ledger.close()


def copy_software(root, target):
    for package in ("drivers", "hal"):
        shutil.copytree(root / package, target / package, ignore=shutil.ignore_patterns("__pycache__"))


def signature(image: InstalledSoftware, seed: int) -> int:
    m = SasMachine(ADDRESS, _NoView(), polls=[RomSignaturePoll(image)])
    return ask(m, LongPoll(ADDRESS, 0x21, seed.to_bytes(2, "little"))).signature


class _NoView:
    """The ROM signature reads nothing of the terminal's view."""


def test_rom_signature_covers_the_installed_files_in_manifest_order_and_changes_with_one_byte(tmp_path):
    from firmware.cabinet.software import default_root, installed_files

    copy_software(default_root(), tmp_path)
    image = InstalledSoftware(tmp_path, packages=("drivers", "hal"))
    expected = b"".join(data for _rel, data in installed_files(tmp_path, ("drivers", "hal")))
    assert signature(image, 0x1234) == sas_crc(expected, 0x1234)
    assert signature(image, 0x1234) != signature(image, 0x4321)
    before = signature(image, 0x1234)
    target = tmp_path / "hal" / "events.py"
    data = bytearray(target.read_bytes())
    data[100] ^= 0x01                                     # one bit of one byte of one file
    target.write_bytes(bytes(data))
    assert signature(image, 0x1234) != before
    data[100] ^= 0x01
    target.write_bytes(bytes(data))
    assert signature(image, 0x1234) == before


def test_games_are_numbered_in_registry_order_with_the_enabled_and_selected_ones(tmp_path):
    cfg = Config.model_validate({"terminal": {"denomination": 5}, "games": {"enabled": ["baccarat-war", "three-card-poker"]}})
    terminal, ledger, machine = start(tmp_path, cfg)
    assert ask(machine, LongPoll(ADDRESS, 0x51)).game == 6
    machine.receive(GENERAL)
    assert ask(machine, LongPoll(ADDRESS, 0x56)).games == (1, 4)
    terminal.choose_game("three-card-poker")
    machine.receive(GENERAL)
    assert ask(machine, LongPoll(ADDRESS, 0x55)).game == 4
    machine.receive(GENERAL)
    config = ask(machine, LongPoll(ADDRESS, 0x53, bytes.fromhex("00 04")))
    assert config.game == 4 and config.info.game_id == "TP" and config.info.denomination == 0x02
    assert config.info.base_percent == "9663"              # the ante's return, PAR sheet shipped for the default
    machine.receive(GENERAL)
    war = ask(machine, LongPoll(ADDRESS, 0x53, bytes.fromhex("00 01")))
    assert war.info.game_id == "BW" and war.info.base_percent == "9745"     # bac+war, not bac (100 %)
    ledger.close()


def test_a_changed_pay_table_has_a_new_pay_table_id(tmp_path):
    from firmware.ledger.ledger import Ledger

    ids = []
    for option in ("40,30,6,3,1", "40,25,6,3,1"):
        cfg = Config.model_validate({"terminal": {"denomination": 5}, "games": {"options": {
            "three-card-poker": {"pair_plus_pays": option}}}})
        with Ledger.open(tmp_path / option, denomination=5) as ledger:
            terminal = Terminal(cfg, ledger, RngService.seeded(7), Devices(), VoucherBook(ledger, terminal_id="T1"))
            ids.append(TerminalGames(terminal).games()[3].paytable_id)
    assert ids[0] != ids[1] and all(i.startswith("TP") and len(i) == 6 for i in ids)


def test_per_game_meters_come_from_critical_memory_and_sum_to_the_machine_totals(tmp_path):
    from drivers.sas.messages import SelectedMetersRequest
    from firmware.sas.game_meters import game_ids

    terminal, ledger, machine = start(tmp_path)
    ledger.bill_in(10000)
    for game in ("baccarat-war", "three-card-poker", "baccarat-war", "double-super-9"):
        terminal.choose_game(game)
        terminal.play()
        for _ in range(40):
            terminal.step()
            pending = (terminal.status()["round"] or {}).get("pending") or []
            for decision in pending:
                terminal.decide(decision["seat"], decision["actions"][0])
            if terminal.kernel is None:
                break
        assert ledger.open_round is None
    codes = (0x00, 0x01, 0x05, 0x06, 0x07)

    def meters(game: int) -> dict[int, int]:
        reply = ask(machine, LongPoll(ADDRESS, 0x2F, SelectedMetersRequest(game, codes).encode()))
        machine.receive(GENERAL)
        assert reply.game == game
        return dict(reply.meters)

    totals = meters(0)
    per_game = {number: meters(number) for number in range(1, len(game_ids()) + 1)}
    assert totals[0x05] == 4 and per_game[1][0x05] == 2 and per_game[2][0x05] == 0
    assert per_game[game_ids().index("three-card-poker") + 1][0x05] == 1
    for code in codes:
        assert sum(values[code] for values in per_game.values()) == totals[code], hex(code)
    assert totals[0x00] == ledger.meters["coin_in"] // IDENTITY.accounting_denom_cents > 0
    ledger.close()


def test_sound_and_real_time_reporting_are_kept_across_a_power_cut(tmp_path):
    from firmware.cabinet.sas_control import TerminalControls
    from firmware.sas.control import Sound

    terminal, ledger, machine = start(tmp_path)
    assert command(machine, bytes.fromhex("01 05 75 4E")) == ACK            # game play sounds off
    assert command(machine, bytes.fromhex("01 0E 01 45 D1")) == ACK         # real-time reporting on
    ledger.close()
    terminal, ledger, machine = start(tmp_path)
    controls = TerminalControls(terminal, IDENTITY.accounting_denom_cents)
    assert controls.sound_setting is Sound.GAME_OFF and controls.real_time_events_on
    assert command(machine, bytes.fromhex("01 04 FC 5F")) == ACK            # sounds on
    assert command(machine, bytes.fromhex("01 0E 00 CC C0")) == ACK
    assert controls.sound_setting is Sound.ON and not controls.real_time_events_on
    ledger.close()


def test_a_shutdown_pending_when_the_power_goes_lets_the_round_finish_after_the_restart(tmp_path):
    terminal, ledger, machine = start(tmp_path)
    terminal.choose_game("three-card-poker")
    ledger.bill_in(2000)
    terminal.play()
    terminal.step()
    assert command(machine, SHUTDOWN) == ACK and terminal.cabinet.disable_pending
    ledger.close()                                        # the power goes in the middle of the round
    terminal, ledger, machine = start(tmp_path)           # built after the power-up, as the host link
    assert terminal.cabinet.state is S.PLAYING and terminal.cabinet.disable_pending
    terminal.decide(1, "fold")
    settle(terminal)
    assert terminal.cabinet.state is S.DISABLED and ledger.open_round is None
    assert accounting_difference(ledger.meters) == 0
    ledger.close()


class _Par:
    def __init__(self, rtp):
        self.rtp = rtp


@pytest.mark.parametrize(("wagers", "order", "expected"), [
    ({"bac": 1.0, "war": 0.95, "bac+war": 0.975, "tie": 0.92}, ("bac", "war", "tie"), 0.975),
    ({"ante": 1.0, "high": 1.0, "low": 0.993}, ("ante", "jackpot", "high", "low"), 0.993),
    ({"ante": 0.966, "pair_plus": 0.977}, ("ante", "play", "pair_plus"), 0.966),
    ({"ante": 1.0}, ("ante",), None),
])
def test_the_base_percentage_is_the_combined_bet_else_the_first_wager_with_a_house_edge(wagers, order, expected):
    from firmware.cabinet.sas_info import base_return

    assert base_return({name: _Par(rtp) for name, rtp in wagers.items()}, order) == expected


def test_poll_sets_built_before_the_power_up_restore_the_lock_out_after_the_interrupted_round(tmp_path):
    from firmware.ledger.ledger import Ledger

    terminal, ledger, machine = start(tmp_path)
    terminal.choose_game("three-card-poker")
    ledger.bill_in(2000)
    terminal.play()
    terminal.step()
    assert command(machine, SHUTDOWN) == ACK
    ledger.close()                                        # the power goes in the middle of the round
    ledger = Ledger.open(tmp_path, denomination=5)
    terminal = Terminal(Config.model_validate({"terminal": {"denomination": 5}}), ledger, RngService.seeded(7),
                        Devices(), VoucherBook(ledger, terminal_id="T1"))
    control_poll_sets(terminal, IDENTITY, Features())     # before the power-up, as egm run opens SAS
    terminal.power_up()
    terminal.step()
    assert terminal.cabinet.state is S.PLAYING and terminal.cabinet.disable_pending
    terminal.decide(1, "fold")
    settle(terminal)
    assert terminal.cabinet.state is S.DISABLED and ledger.open_round is None
    ledger.close()
