"""The SAS port on an in-process terminal: the machine built over it, its port on a pty, the
terminal's thread answering, and the exceptions its events raise."""

from __future__ import annotations

import threading

from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.host import SasHost
from drivers.sas.messages import MachineInfo
from firmware.cabinet.sas_info import TerminalGames
from firmware.cabinet.sas_port import SasService, build_sas, identity, selected_game
from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService
from firmware.sas.exceptions import ExceptionQueue
from firmware.sas.link import SasLink
from tests.sas.helpers import wait_for


def config(**sections) -> Config:
    return Config.model_validate(sections)


def start(state, cfg: Config, **kw) -> tuple[Terminal, Ledger]:
    ledger = Ledger.open(state)
    terminal = Terminal(cfg, ledger, RngService.seeded(7), Devices(), VoucherBook(ledger, terminal_id="T1"), **kw)
    return terminal, ledger


def test_the_identity_is_the_selected_game_of_the_catalog_in_the_accounting_denomination(tmp_path):
    cfg = config(terminal={"id": "EGM-0042", "denomination": 5}, limits={"max_bet": 100, "max_total_bet": 100},
                 sas={"accounting_denom_cents": 25})
    terminal, ledger = start(tmp_path, cfg)
    terminal.power_up()
    terminal.choose_game("three-card-poker")
    games = TerminalGames(terminal)
    entry = selected_game(games)
    ident = identity(cfg, entry)
    assert (ident.game_id, ident.serial) == ("TP", "EGM-0042") and entry.name == "three-card-poker"
    assert ident.paytable_id == entry.paytable_id and ident.base_percent == entry.base_percent
    assert ident.accounting_denom_cents == 25 and ident.max_bet == 20          # 100 x 5 cents = 20 x 25 cents
    assert identity(config(terminal={"denomination": 5}), entry).accounting_denom_cents == 5
    ledger.close()


def test_a_handpay_restored_at_power_up_raises_no_second_cash_out_button_exception(tmp_path):
    cfg = config(limits={"handpay_limit": 1000})
    terminal, ledger = start(tmp_path, cfg)
    terminal.power_up()
    machine = build_sas(terminal, cfg)
    ledger.bill_in(1500)
    terminal.request_cashout()                                    # the player's button: 66, then 51
    before = machine.terminal.exceptions.pending()
    assert before.count(X.CASHOUT_BUTTON_PRESSED) == 1 and X.HANDPAY_PENDING in before
    ledger.close()                                                # the power goes in the lockup
    terminal, ledger = start(tmp_path, cfg)
    terminal.power_up()                                           # the lockup is entered again
    transitions = [e for e in ledger.events(50) if e["event"] == "cabinet.transition" and e["trigger"] == "cashout"]
    assert [t.get("restored", False) for t in transitions] == [True, False]      # newest first
    after = ExceptionQueue(ledger).pending()
    assert after.count(X.CASHOUT_BUTTON_PRESSED) == 1              # nobody pressed it again
    assert after.count(X.AC_POWER_APPLIED) == 2
    ledger.close()


def test_the_port_answers_on_the_terminals_thread_and_the_status_shows_the_link(tmp_path):
    cfg = config(sas={"enabled": True, "address": 3})
    terminal, ledger = start(tmp_path, cfg, sas=lambda t: SasService(t, SasLink(build_sas(t, cfg), t.ledger), "pty"))
    terminal.power_up()
    service = terminal.sas
    assert isinstance(service, SasService)
    touched: set[str] = set()
    answer = service.answer

    def on_which_thread(data: bytes = b"") -> tuple[bytes, bytes]:
        touched.add(threading.current_thread().name)
        return answer(data)

    terminal.register(sas=on_which_thread)
    runner = threading.Thread(target=terminal.run, kwargs={"idle_wait": 0.02}, name="terminal")
    service.open()
    runner.start()
    try:
        with SasHost(service.path, 3, timeout=5.0) as host:
            assert host.listen(1.0) >= 1                           # nobody polled yet: it chirps
            assert host.general_poll() == X.AC_POWER_APPLIED
            assert host.general_poll() == X.NO_ACTIVITY            # the implied ACK took it
            info = host.read(0x1F)
            assert isinstance(info, MachineInfo) and info.game_id == "BW"
            wait_for(lambda: terminal.snapshot["sas"]["polls"] == 3)     # published after the step
            assert terminal.snapshot["sas"] == {"port": service.path, "address": 3, "link": "up",
                                                "polls": 3, "exceptions_pending": 0}
        assert touched == {"terminal"}
    finally:
        terminal.stop()
        runner.join(5)
        service.close()
        ledger.close()


def test_choosing_another_game_is_recorded_and_raises_game_selected_once(tmp_path):
    cfg = config()
    terminal, ledger = start(tmp_path, cfg)
    terminal.power_up()
    machine = build_sas(terminal, cfg)
    terminal.choose_game("holdem-war")
    terminal.choose_game("holdem-war")                            # the same game: nothing new
    assert [e["game"] for e in ledger.events(20) if e["event"] == "game_selected"] == ["holdem-war"]
    assert machine.terminal.exceptions.pending() == [X.AC_POWER_APPLIED, X.GAME_SELECTED]
    ledger.close()


def test_a_pty_nobody_reads_is_emptied_of_old_chirps_without_a_warning(tmp_path, caplog):
    import os

    cfg = config(sas={"enabled": True})
    terminal, ledger = start(tmp_path, cfg)
    now = [0.0]
    terminal.power_up()
    service = SasService(terminal, SasLink(build_sas(terminal, cfg), ledger), "pty", clock=lambda: now[0])
    caplog.set_level("DEBUG", logger="firmware.cabinet.sas_port")
    service.open()
    runner = threading.Thread(target=terminal.run, kwargs={"idle_wait": 0.02}, name="terminal")
    runner.start()
    try:
        wait_for(lambda: service.chirps_sent == 1)                # the first chirp, at 0 s
        for second in range(1, 30):                               # as hours of chirps nobody read
            _fill(service.port)                                   # (the kernel may make room once)
            now[0] = float(second)                                # the next chirp is due
            wait_for(lambda n=second + 1: service.chirps_sent == n)   # written, after emptying or not
            if service.discards:
                break
        assert service.discards == 1 and "nobody reads" in caplog.text
        assert not [r for r in caplog.records if r.levelno >= 30]   # no warning, no error
        fd = os.open(service.path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)   # a host reads now
        try:
            assert os.read(fd, 65536) == b"\x01"                 # the last chirp, not the old ones
        finally:
            os.close(fd)
    finally:
        terminal.stop()
        runner.join(5)
        service.close()
        ledger.close()


def _fill(port) -> None:
    """Write until the pty has no room for one more byte (nobody reads its slave)."""
    for size in (1024, 1):
        try:
            while True:
                port.write(b"\x00" * size, timeout=0)
        except TimeoutError:
            pass
