"""The service API: PINs, sessions, the permission table role by role, and what each action does.

The terminal is built in-process with fake devices (no ptys); requests go through the terminal's
command queue (``submit`` + ``step``) exactly as ``egm simctl service ...`` does, and one test goes
through the real control socket.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from firmware.cabinet.service import (
    ACTIONS,
    DEVELOPMENT_PINS,
    PERMISSIONS,
    ROLES,
    ServiceApi,
    ServiceError,
    hash_pin,
    permission_table,
    verify_pin,
)
from firmware.cabinet.states import CabinetState
from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config, load_config
from firmware.config.schema import DEVELOPMENT_PIN_HASHES, MIN_PIN_ITERATIONS
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService
from hal.devices.bill_validator import BillValidator
from hal.devices.io_board import IoBoard
from hal.devices.printer import PrinterStatus, TicketPrinter
from hal.events import Button, Door, KeySwitch

S = CabinetState
DOCS = Path(__file__).resolve().parents[2] / "docs" / "service.md"

#: Test PINs (not the development ones), hashed with few iterations to keep the tests fast.
TEST_PINS = {"attendant": "5001", "technician": "5002", "auditor": "5003", "regulator": "5004"}
FAST = 1000
HASHES = {role: hash_pin(pin, iterations=FAST) for role, pin in TEST_PINS.items()}


# --- fake devices ----------------------------------------------------------------------------------
class FakeValidator(BillValidator):
    escrowed = False
    notes: dict[int, int] = {}

    def __init__(self) -> None:
        super().__init__("bill_validator")
        self.enabled: bool | None = None
        self.returned = 0
        self.escrowed = False
        self.counters = {"garbage": 0, "timeouts": 1}
        self.notes = {1: 100, 2: 500, 3: 2000}

    def _open(self) -> None:
        pass

    def _close(self) -> None:
        pass

    def enable(self, denominations_cents: Any, *, tickets: bool = True) -> None:
        self.enabled = True

    def disable(self) -> None:
        self.enabled = False

    def stack(self) -> None:
        raise AssertionError("nothing is stacked in these tests")

    def return_escrow(self) -> None:
        self.returned += 1
        self.escrowed = False

    def status(self) -> str:
        return "IDLING"


class FakePrinter(TicketPrinter):

    def __init__(self) -> None:
        super().__init__("printer")
        self.printed: list[Any] = []
        self.counters = {"garbage": 2}

    def _open(self) -> None:
        pass

    def _close(self) -> None:
        pass

    @property
    def printing(self) -> str | None:
        return None

    def print_voucher(self, voucher: Any) -> None:
        self.printed.append(voucher)

    def print_receipt(self, receipt: Any) -> None:
        self.printed.append(receipt)

    @property
    def fault(self) -> str | None:
        return None

    def status(self) -> PrinterStatus:
        return PrinterStatus("paper_out", "EGMTCL01")


class FakeIo(IoBoard):

    def __init__(self) -> None:
        super().__init__("io_board")
        self.lamps: list[frozenset[Button]] = []
        self.towers: list[tuple[int, Any]] = []
        self.pulses: list[tuple[int, int]] = []
        self.inputs = {**dict.fromkeys(Door, False), **dict.fromkeys(KeySwitch, False), **dict.fromkeys(Button, False)}
        self.inputs[Door.CASH_BOX] = True

    def _open(self) -> None:
        pass

    def _close(self) -> None:
        pass

    @property
    def counters(self) -> dict[str, int]:
        return {"bad_crc": 0, "reconnects": 1}

    def button_lamps(self, lit: frozenset[Button]) -> None:
        self.lamps.append(frozenset(lit))

    def tower(self, tier: int, pattern: Any) -> None:
        self.towers.append((tier, pattern))

    def pulse_meter(self, meter: int, count: int) -> None:       # a test must never call this
        self.pulses.append((meter, count))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --- the rig ---------------------------------------------------------------------------------------
def software_tree(root: Path) -> Path:
    for package in ("firmware", "hal", "drivers", "sim_hardware", "host", "egmproto"):
        (root / package).mkdir(parents=True, exist_ok=True)
        (root / package / "__init__.py").write_text(f"# {package}\n")
    return root


def build(tmp_path: Path, *, devices: Devices | None = None, pins: dict[str, str] | None = None,
          hostlink: Callable[[Terminal], Any] | None = None, **kwargs: Any) -> SimpleNamespace:
    ledger = Ledger.open(tmp_path / "state")
    vouchers = VoucherBook(ledger, terminal_id="T1")
    devices = devices if devices is not None else Devices(
        bill_validator=FakeValidator(), printer=FakePrinter(), io_board=FakeIo())
    clock = Clock()
    kwargs.setdefault("software_root", software_tree(tmp_path / "sw"))
    kwargs.setdefault("par_cache_dir", tmp_path / "par")
    terminal = Terminal(Config(), ledger, RngService.seeded(1), devices, vouchers,
                        service=lambda t: ServiceApi(t, pins=pins or HASHES, clock=clock, **kwargs),
                        hostlink=hostlink)
    api = terminal.service
    api.apply_stored_config()
    terminal.power_up()
    return SimpleNamespace(terminal=terminal, ledger=ledger, api=api, clock=clock, devices=devices)


@pytest.fixture
def rig(tmp_path: Path) -> SimpleNamespace:
    r = build(tmp_path)
    yield r
    r.ledger.close()


def svc(rig: SimpleNamespace, *words: str) -> Any:
    """``egm simctl service WORDS``: through the terminal's command queue, on its thread."""
    future = rig.terminal.submit("service", words=list(words))
    rig.terminal.step()
    return future.result(0)


def login(rig: SimpleNamespace, role: str) -> dict[str, Any]:
    return svc(rig, "login", role, TEST_PINS[role])


def last_event(rig: SimpleNamespace, name: str | None = None) -> dict[str, Any]:
    for event in rig.ledger.events(50):
        if name is None or event["event"] == name:
            return event
    raise AssertionError(f"no {name} event")


def snapshot(rig: SimpleNamespace) -> tuple[Any, ...]:
    t = rig.terminal
    return (dict(rig.ledger.meters), rig.ledger.credits_cents, t.cabinet.state, t.cfg,
            rig.api.demo.active, [rig.ledger.setting(f"config.games.{g}") for g in t.cfg.games.enabled],
            t.devices.io_board.lamps[:] if t.devices.io_board else None)


def refused(rig: SimpleNamespace, role: str | None, *words: str, match: str = "") -> str:
    """The request is refused, the refusal is logged, and nothing else changed."""
    before = snapshot(rig)
    with pytest.raises(ServiceError, match=match) as info:
        svc(rig, *words)
    assert snapshot(rig) == before
    event = last_event(rig)
    assert event["event"] == "service_action" and event["result"] == "refused", event
    assert event["role"] == role and event["detail"] == str(info.value)[:200]
    return str(info.value)


# --- PINs ------------------------------------------------------------------------------------------
def test_pin_hashes_are_salted_pbkdf2_and_verify_in_constant_time():
    a, b = hash_pin("2222", iterations=FAST), hash_pin("2222", iterations=FAST)
    assert a != b                                          # a fresh salt each time
    assert re.fullmatch(r"pbkdf2_sha256\$1000\$[0-9a-f]{32}\$[0-9a-f]{64}", a)
    assert verify_pin("2222", a) and not verify_pin("2223", a)
    assert hash_pin("1234").split("$")[1] == "310000"      # production default >= 200k
    for bad in ("12", "abcd", "1234567890123", "１２３４"):
        with pytest.raises(ServiceError, match="4 to 12 digits"):
            hash_pin(bad)


def test_the_configuration_holds_the_development_pins_only_hashed():
    cfg = load_config()
    assert cfg.service.pins == DEVELOPMENT_PIN_HASHES == Config().service.pins
    assert set(cfg.service.pins) == set(ROLES)
    for role, encoded in cfg.service.pins.items():
        assert DEVELOPMENT_PINS[role] not in encoded
        assert int(encoded.split("$")[1]) >= MIN_PIN_ITERATIONS
        assert verify_pin(DEVELOPMENT_PINS[role], encoded)
    assert (cfg.service.session_timeout_s, cfg.service.lockout_attempts, cfg.service.lockout_s) == (300, 5, 60)


def test_configured_pins_must_be_strong_hashes_of_known_roles(tmp_path):
    from firmware.config import ConfigError

    weak = tmp_path / "weak.toml"
    weak.write_text(f'[service.pins]\ntechnician = "{hash_pin("9999", iterations=FAST)}"\n')
    with pytest.raises(ConfigError, match="technician: 1000 PBKDF2 iterations; at least 200,000"):
        load_config(weak)
    plain = tmp_path / "plain.toml"
    plain.write_text('[service.pins]\ntechnician = "2222"\n')
    with pytest.raises(ConfigError, match="a PIN is stored only as pbkdf2_sha256"):
        load_config(plain)
    boss = tmp_path / "boss.toml"
    boss.write_text(f'[service.pins]\nboss = "{DEVELOPMENT_PIN_HASHES["auditor"]}"\n')
    with pytest.raises(ConfigError, match="unknown role 'boss'"):
        load_config(boss)


def test_from_config_uses_the_service_section(tmp_path):
    r = build(tmp_path)
    api = ServiceApi.from_config(r.terminal)
    assert api.session_timeout_s == 300 and api.lockout_attempts == 5 and api.demo.start_credits == 10_000
    r.ledger.close()


# --- sessions --------------------------------------------------------------------------------------
def test_login_logout_and_every_step_logged(rig):
    answer = login(rig, "technician")
    assert answer["role"] == "technician" and "config set" in answer["allowed"] and "warning" not in answer
    entry = last_event(rig, "service_entry")
    assert entry["role"] == "technician" and entry["result"] == "ok"
    assert svc(rig, "session")["role"] == "technician"
    assert svc(rig, "logout") == {"logged_out": "technician"}
    out = last_event(rig)
    assert (out["event"], out["role"], out["action"], out["result"]) == ("service_action", "technician", "logout", "ok")
    refused(rig, None, "meters", match="log in first")
    refused(rig, None, "logout", match="no one is logged in")


def test_a_wrong_pin_is_refused_and_logged_without_the_pin(rig):
    with pytest.raises(ServiceError, match="wrong PIN"):
        svc(rig, "login", "technician", "9876")
    entry = last_event(rig, "service_entry")
    assert entry["role"] == "technician" and entry["result"] == "refused"
    assert rig.api.session is None
    assert not any("9876" in str(e) for e in rig.ledger.events(100))
    refused(rig, None, "login", "boss", "1234", match="unknown role 'boss'")


def test_five_wrong_pins_lock_the_role_for_sixty_seconds(rig):
    for _ in range(4):
        with pytest.raises(ServiceError, match="wrong PIN"):
            svc(rig, "login", "technician", "0000")
    with pytest.raises(ServiceError, match="locked for 60 s after 5 wrong PINs"):
        svc(rig, "login", "technician", "0000")
    lock = last_event(rig, "service_lockout")
    assert lock["role"] == "technician" and lock["attempts"] == 5 and lock["seconds"] == 60
    rig.clock.now += 30
    with pytest.raises(ServiceError, match="locked for 30 more s"):
        login(rig, "technician")                           # even the right PIN
    assert rig.api.session is None
    assert login(rig, "auditor")["role"] == "auditor"     # other roles are not locked
    rig.clock.now += 30
    assert login(rig, "technician")["role"] == "technician"
    # the count starts again after a success
    for _ in range(4):
        with pytest.raises(ServiceError, match="wrong PIN"):
            svc(rig, "login", "technician", "0000")
    assert login(rig, "technician")["role"] == "technician"


def test_a_development_pin_works_and_is_logged(tmp_path):
    r = build(tmp_path, pins={**HASHES, "technician": hash_pin("2222", iterations=FAST)})
    answer = svc(r, "login", "technician", "2222")
    assert "development default" in answer["warning"]
    assert last_event(r, "service_default_pin")["role"] == "technician"
    assert "development PIN" in last_event(r, "service_entry")["detail"]
    login(r, "auditor")
    assert len([e for e in r.ledger.events(100) if e["event"] == "service_default_pin"]) == 1
    r.ledger.close()


def test_a_role_without_a_pin_cannot_log_in(tmp_path):
    r = build(tmp_path, pins={"technician": HASHES["technician"]})
    with pytest.raises(ServiceError, match="no PIN is configured for the regulator role"):
        login(r, "regulator")
    r.ledger.close()


def test_one_session_at_a_time_a_login_replaces_it(rig):
    login(rig, "attendant")
    login(rig, "technician")
    logout, entry = [e for e in rig.ledger.events(3) if e["event"] in ("service_action", "service_entry")][1::-1]
    assert (logout["role"], logout["action"], logout["detail"]) == ("attendant", "logout", "replaced by a technician login")
    assert entry["role"] == "technician"
    assert rig.api.session.role == "technician"


def test_an_idle_session_times_out(rig):
    login(rig, "auditor")
    rig.clock.now += 299
    svc(rig, "meters")                                     # activity keeps it alive
    rig.clock.now += 299
    svc(rig, "events", "5")
    rig.clock.now += 300
    refused(rig, None, "meters", match="the auditor session timed out: log in first")
    timeout = [e for e in rig.ledger.events(5) if e.get("action") == "timeout"][0]
    assert timeout["role"] == "auditor" and timeout["result"] == "ok"


def test_help_lists_the_table_and_the_role_s_functions(rig):
    assert svc(rig)["role"] is None
    login(rig, "regulator")
    yours = svc(rig, "help")["yours"]
    assert "software hash ALGORITHM [SEED_HEX]" in yours and not any(y.startswith("config") for y in yours)
    refused(rig, "regulator", "frobnicate", match="unknown service function 'frobnicate'")


# --- the permission table, role by role --------------------------------------------------------------
ALLOWED = {
    "attendant": {"recall", "events", "bills", "tickets", "handpay", "call-cleared"},
    "technician": {a.name for a in ACTIONS} - {"handpay", "call-cleared"},
    "auditor": {"meters", "recall", "events", "bills", "tickets", "software", "software hash", "packages"},
    "regulator": {"meters", "recall", "events", "bills", "tickets", "software", "software hash", "packages"},
}


def test_the_permission_table_is_the_one_the_brief_gives():
    for role in ROLES:
        assert {name for name, roles in PERMISSIONS.items() if role in roles} == ALLOWED[role], role
    changing = {a.name for a in ACTIONS if a.kind in ("device", "config", "attendant")}
    assert not any(name in changing for name in ALLOWED["regulator"] | ALLOWED["auditor"])


def test_docs_show_the_permission_table():
    text = DOCS.read_text()
    for row in permission_table():
        cells = [f"`{row['action']}{' ' + row['usage'] if row['usage'] else ''}`", row["kind"],
                 *("yes" if r in row["roles"] else "-" for r in ROLES)]
        assert "| " + " | ".join(cells) + " |" in text, row["action"]
    assert "must be changed" in text


def reads(rig: SimpleNamespace) -> None:
    """Every read allowed to the logged-in role works; the rest are refused."""
    role = rig.api.session.role
    assert rig.ledger.events(5)
    if "meters" in ALLOWED[role]:
        assert svc(rig, "meters")["meters"] is not None
    assert isinstance(svc(rig, "recall", "5")["rounds"], list)
    assert svc(rig, "events", "3")["events"][0]["event"] == "service_action"
    assert svc(rig, "bills")["bills"][0]["cents"] == 2000
    tickets = svc(rig, "tickets", "5")
    assert "vouchers" in tickets and "cashless" in tickets
    if "software" in ALLOWED[role]:
        assert svc(rig, "software")["verification"]["ok"] is True
        report = svc(rig, "software", "hash", "sha256")
        assert report["algorithm"] == "sha256" and len(report["files"]) == 6
        assert svc(rig, "software", "hash", "hmac-sha256", "00ff")["seed"] == "00ff"
    else:
        refused(rig, role, "software", match=f"the {role} role may not use software")
        refused(rig, role, "software", "hash", "sha256", match="may not use software hash")
        refused(rig, role, "meters", match=f"the {role} role may not use meters")


@pytest.fixture
def played(rig):
    """Some history: a note, a software verification."""
    rig.ledger.bill_in(2000)
    rig.api.set_software_result({"ok": True, "reason": None, "version": "test"})
    return rig


def test_attendant(played):
    rig = played
    login(rig, "attendant")
    reads(rig)
    # handpay: refused while none waits, then paid
    refused(rig, "attendant", "handpay", match="no handpay is waiting")
    rig.ledger.bill_in(148_000)                          # 150,000 credits: at the handpay limit
    rig.terminal.request_cashout()
    assert rig.terminal.cabinet.state is S.HANDPAY
    paid = svc(rig, "handpay")
    assert paid == {"paid": 150_000, "reason": "limit"}
    assert rig.terminal.cabinet.state is S.IDLE and rig.ledger.credits_cents == 0
    assert rig.ledger.meters["handpay_cancelled_credits"] == 150_000
    # a player's call, answered
    rig.terminal.supervision.on_button(Button.SERVICE)
    assert svc(rig, "call-cleared")["was_waiting"] is True
    assert svc(rig, "call-cleared")["was_waiting"] is False
    # what an attendant may not do
    rig.terminal.cabinet.service_key_on()
    refused(rig, "attendant", "config", "set", "three-card-poker", "pair_plus_pays.flush=3", match="may not use config set")
    refused(rig, "attendant", "test", "lamps", match="may not use test lamps")
    refused(rig, "attendant", "ram-clear", "CLEAR", "because", match="may not use ram-clear")
    refused(rig, "attendant", "demo", "start", match="may not use demo start")
    refused(rig, "attendant", "diagnostics", match="may not use diagnostics")


def test_technician(played):
    rig = played
    login(rig, "technician")
    reads(rig)
    diag = svc(rig, "diagnostics")
    assert diag["devices"]["bill_validator"] == {"lifecycle": "open", "backend": "FakeValidator",
                                                 "counters": {"garbage": 0, "timeouts": 1}}
    assert diag["devices"]["io_board"]["counters"] == {"bad_crc": 0, "reconnects": 1}
    shown = svc(rig, "config", "show", "three-card-poker")["games"]["three-card-poker"]
    assert shown["options"]["dealer_cards"] == 3 and shown["stored"] is False
    # the credit meter is not empty: nothing that changes devices or configuration
    refused(rig, "technician", "test", "lamps", match="needs the technician key .* 2000 credits")
    refused(rig, "technician", "config", "set", "three-card-poker", "pair_plus_pays.flush=3",
            match="needs the technician key")
    refused(rig, "technician", "handpay", match="the technician role may not use handpay")
    rig.terminal.cabinet.service_key_on()
    # device tests
    io = rig.devices.io_board
    assert svc(rig, "test", "lamps")["lamps"] == sorted(b.value for b in Button)
    assert svc(rig, "test", "lamps", "off")["lamps"] == [] and io.lamps[-1] == frozenset()
    svc(rig, "test", "tower", "2", "flash-slow")
    assert io.towers[-1][0] == 2 and io.towers[-1][1].name == "FLASH_SLOW"
    svc(rig, "test", "tower", "off")
    assert [p.name for _, p in io.towers[-4:]] == ["OFF"] * 4
    refused(rig, "technician", "test", "tower", "9", "on", match="TIER 0..3")
    inputs = svc(rig, "test", "meters")
    assert inputs["active"] == ["cash_box"] and io.pulses == []
    ticket = svc(rig, "test", "ticket")
    assert ticket["flags"] == "paper_out" and rig.devices.printer.printed == []
    validator = rig.devices.bill_validator
    assert svc(rig, "test", "note-return")["returned"] is False
    validator.escrowed = True
    assert svc(rig, "test", "note-return")["returned"] is True and validator.returned == 1
    # ram clear: refused by default, and while credits are on the meter
    refused(rig, "technician", "ram-clear", "CLEAR", "new", "board", match="the credit meter holds 2000 credits")
    assert rig.ledger.meters["bills_in"] == 2000


def test_auditor(played):
    rig = played
    login(rig, "auditor")
    reads(rig)
    rig.terminal.cabinet.service_key_on()
    refused(rig, "auditor", "config", "set", "three-card-poker", "pair_plus_pays.flush=3", match="may not use config set")
    refused(rig, "auditor", "handpay", match="may not use handpay")
    refused(rig, "auditor", "test", "tower", match="may not use test tower")
    refused(rig, "auditor", "config", "show", match="may not use config show")


def test_regulator(played):
    rig = played
    login(rig, "regulator")
    reads(rig)
    rig.terminal.cabinet.service_key_on()
    refused(rig, "regulator", "config", "set", "three-card-poker", "dealer_cards=4", match="may not use config set")
    refused(rig, "regulator", "ram-clear", "CLEAR", "audit", match="may not use ram-clear")
    refused(rig, "regulator", "demo", "start", match="may not use demo start")
    refused(rig, "regulator", "test", "note-return", match="may not use test note-return")
    refused(rig, "regulator", "call-cleared", match="may not use call-cleared")


def test_reads_work_in_any_state_changes_only_in_service_or_idle_and_empty(rig):
    login(rig, "technician")
    rig.terminal.cabinet.tilt("door", "main", "main door open")
    assert svc(rig, "meters")["credits"] == 0
    refused(rig, "technician", "test", "lamps", match="the cabinet is TILT")
    rig.terminal.cabinet.clear_tilt("door", "main")
    assert svc(rig, "test", "lamps")["lamps"]                  # IDLE with no credits


def test_no_software_result_recorded_yet(rig):
    login(rig, "regulator")
    assert svc(rig, "software")["verification"] is None
    refused(rig, "regulator", "software", "hash", "md5", match="unknown hash algorithm 'md5'")
    refused(rig, "regulator", "software", "hash", "hmac-sha256", "xyz", match="hexadecimal")


def test_a_missing_device_is_a_clear_refusal(tmp_path):
    r = build(tmp_path, devices=Devices())
    login(r, "technician")
    assert svc(r, "diagnostics")["devices"] == {}
    refused(r, "technician", "test", "ticket", match="no printer is fitted")
    r.ledger.close()


# --- configuration -----------------------------------------------------------------------------------
def test_a_pay_table_the_profile_refuses_is_refused_and_logged(rig):
    login(rig, "technician")
    rig.terminal.cabinet.service_key_on()
    message = refused(rig, "technician", "config", "set", "three-card-poker", "dealer_cards=4",
                      match="refused by the jurisdiction profile")
    assert "52.66%" in message and "below the minimum 75.00%" in message
    refused(rig, "technician", "config", "set", "three-card-poker", "dealer_cards=5",
            match="games.options.three-card-poker.dealer_cards")
    refused(rig, "technician", "config", "set", "roulette", "x=1", match="not enabled")


def test_an_accepted_change_is_stored_and_used_from_the_next_round(rig, tmp_path):
    t = rig.terminal
    old = t.rounds.kernel_for("three-card-poker")
    login(rig, "technician")
    rig.terminal.cabinet.service_key_on()
    answer = svc(rig, "config", "set", "three-card-poker", "pair_plus_pays.flush=3")
    assert answer["table"] == {"pair_plus_pays": {"flush": 3}}
    assert {f["verdict"] for f in answer["findings"]} == {"ok"}
    assert rig.ledger.setting("config.games.three-card-poker") == {"pair_plus_pays": {"flush": 3}}
    kernel = t.rounds.kernel_for("three-card-poker")
    assert kernel is not old and kernel.options.pair_plus_pays.flush == 3
    assert t.rounds.kernel_for("baccarat-war").options.pool.enabled is False            # the others untouched
    event = last_event(rig)
    assert (event["action"], event["result"], event["detail"]) == (
        "config set", "ok", "three-card-poker: pair_plus_pays.flush=3")
    assert svc(rig, "config", "show", "three-card-poker")["games"]["three-card-poker"]["stored"] is True
    # after a restart, the stored change is used again
    rig.ledger.close()
    again = build(tmp_path)
    assert again.terminal.rounds.kernel_for("three-card-poker").options.pair_plus_pays.flush == 3
    assert last_event(again, "service_config_applied")["games"] == ["three-card-poker"]
    again.ledger.close()


def test_no_configuration_change_during_a_round(rig):
    login(rig, "technician")
    rig.ledger.bill_in(1000)
    t = rig.terminal
    t.choose_game("three-card-poker")
    t.play()
    t.step()
    assert t.kernel is not None                               # waiting for the player's decision
    t.cabinet.tilt("door", "main", "main door open")
    t.cabinet.service_key_on()
    assert t.cabinet.state is S.SERVICE and t.cabinet.round_in_progress
    refused(rig, "technician", "config", "set", "three-card-poker", "pair_plus_pays.flush=3",
            match="a round is in progress")


def test_ram_clear_needs_the_word_a_reason_and_the_runner(tmp_path):
    calls: list[str] = []
    r = build(tmp_path, on_ram_clear=lambda reason: calls.append(reason) or {"cleared": True})
    login(r, "technician")
    r.terminal.cabinet.service_key_on()
    refused(r, "technician", "ram-clear", match="confirm with ram-clear CLEAR REASON")
    refused(r, "technician", "ram-clear", "clear", "x", match="confirm with")
    refused(r, "technician", "ram-clear", "CLEAR", match="needs a reason")
    assert svc(r, "ram-clear", "CLEAR", "new", "logic", "board") == {"cleared": True}
    assert calls == ["new logic board"]
    event = last_event(r)
    assert (event["action"], event["result"], event["detail"]) == ("ram-clear", "ok", "requested: new logic board")
    r.ledger.close()


def test_ram_clear_without_a_runner_is_refused(rig):
    login(rig, "technician")
    rig.terminal.cabinet.service_key_on()
    refused(rig, "technician", "ram-clear", "CLEAR", "test", match="egm ledger clear")


# --- through the control socket ------------------------------------------------------------------
def test_egm_simctl_service_words_reach_the_api(tmp_path):
    from firmware.cabinet.control import ControlError, ControlServer, request, socket_path
    from firmware.commands.simctl import parse_request

    r = build(tmp_path)
    server = ControlServer(r.terminal, socket_path(r.ledger.state_dir), command_timeout=10).start()
    thread = threading.Thread(target=r.terminal.run, daemon=True)
    thread.start()
    try:
        def simctl(*words: str) -> Any:
            op, args = parse_request(list(words))
            return request(r.ledger.state_dir, op, args, timeout=10)

        assert simctl("service", "login", "technician", "5002")["role"] == "technician"
        assert simctl("service", "meters")["credits"] == 0
        assert simctl("demo")["demo"] is False
        with pytest.raises(ControlError, match="the technician role may not use handpay"):
            simctl("service", "handpay")
        assert simctl("service", "logout") == {"logged_out": "technician"}
    finally:
        r.terminal.stop()
        thread.join(5)
        server.close()
        r.ledger.close()


def test_a_change_only_monte_carlo_can_check_is_computed_in_the_background_then_applied(tmp_path):
    # Hold'em War's TIE at 17 to 1 on a two-seat cabinet: TIE is exact, but the two seats share the
    # dealer's war cards, which only Monte Carlo follows; no shipped sheet. The terminal's thread
    # must not spend minutes on Monte Carlo: the change is refused for now, the sheet computed on a
    # worker thread into the PAR cache, and the same change asked again is checked and applied.
    r = build(tmp_path)
    try:
        cfg = r.terminal.cfg
        r.terminal.use_config(cfg.model_copy(update={
            "math": cfg.math.model_copy(update={"monte_carlo_rounds": 10_000}),
            "games": cfg.games.model_copy(update={"seats": 2})}), [])
        login(r, "technician")
        refused(r, "technician", "config", "set", "holdem-war", "tie_pays=17", match="being computed in the background")
        assert r.ledger.setting("config.games.holdem-war") is None            # nothing changed
        jobs = svc(r, "config", "show")["par_jobs"]
        assert [(j["game"], j["options"]["tie_pays"], j["rounds"]) for j in jobs] == [("holdem-war", 17, 10_000)]
        # asked again while it runs: the same job, not a second one
        refused(r, "technician", "config", "set", "holdem-war", "tie_pays=17", match="being computed")
        assert len(r.api.par_jobs.all()) == 1
        assert r.api.par_jobs.wait(120)
        assert svc(r, "config", "show")["par_jobs"][0]["state"] == "done"
        answer = svc(r, "config", "set", "holdem-war", "tie_pays=17")
        assert answer["table"]["tie_pays"] == 17
        tie = [f for f in answer["findings"] if f["wager"] == "tie"]
        # 18 x 5.04% back per unit on a split: about 90.7%; 10,000 rounds do not prove it to the
        # profile's precision (unproven, which a single wager may be), but never refuse it
        assert tie and tie[0]["verdict"] in ("ok", "unproven") and 0.8 < tie[0]["rtp"] < 1.0
        assert r.ledger.setting("config.games.holdem-war")["tie_pays"] == 17
        assert list((tmp_path / "par").iterdir())                              # the sheet is cached
    finally:
        r.api.par_jobs.wait(120)
        r.ledger.close()
