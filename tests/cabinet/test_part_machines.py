"""The terminal's parts' machines (money in, cash-out, rounds): each moves only by its table's rows,
an illegal move raises and changes nothing, and a note-in / round / cash-out flow takes each part
through the rows it should."""

from __future__ import annotations

import enum

import pytest

from firmware.cabinet.cashout import PRINTING_TABLE, PrintingState
from firmware.cabinet.money_in import VALIDATOR_TABLE, ValidatorState
from firmware.cabinet.rounds import ACTIVITY_TABLE, RoundActivity
from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook, VoucherState
from firmware.config import Config
from firmware.kernel.machine import TableMachine
from firmware.kernel.table import IllegalMove, Row, StateTable
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService


@pytest.mark.parametrize("table", [VALIDATOR_TABLE, PRINTING_TABLE, ACTIVITY_TABLE], ids=lambda t: t.name)
def test_every_row_of_a_part_is_a_move_of_its_machine_and_nothing_else_is(table):
    for state in table.states:
        for trigger in table.triggers:
            machine = TableMachine(table)
            machine._model.state = state                # put it there, as a path through the table would
            rows = [row.dest for row in table.rows if row.trigger == trigger and state in row.sources]
            if rows:
                machine.fire(trigger)
                assert machine.state is rows[0]
            else:
                with pytest.raises(IllegalMove, match=f"{table.name}: {trigger} is not allowed in {state.name}"):
                    machine.fire(trigger)
                assert machine.state is state


def test_an_illegal_move_raises_before_the_device_is_told_and_a_device_that_fails_moves_nothing():
    machine = TableMachine(VALIDATOR_TABLE)
    told: list[str] = []
    machine.fire("enable", lambda: told.append("enable"))
    assert machine.state is ValidatorState.ENABLED and told == ["enable"]
    with pytest.raises(IllegalMove, match=r"enable is not allowed in ENABLED \(allowed there: disable, halt, "
                                          r"connection_changed\)"):
        machine.fire("enable", lambda: told.append("enable again"))
    assert machine.state is ValidatorState.ENABLED and told == ["enable"]

    def jammed() -> None:
        raise OSError("the validator did not answer")

    with pytest.raises(OSError):
        machine.fire("disable", jammed)
    assert machine.state is ValidatorState.ENABLED


def test_a_table_refuses_rows_that_would_make_a_move_ambiguous_or_name_a_stranger():
    class Light(enum.Enum):
        ON = "on"
        OFF = "off"

    class Other(enum.Enum):
        X = "x"

    with pytest.raises(ValueError, match="several destinations"):
        StateTable("light", Light, Light.OFF, (Row("flip", (Light.OFF,), Light.ON),
                                               Row("flip", (Light.OFF,), Light.OFF)))
    with pytest.raises(ValueError, match="not one of its states"):
        StateTable("light", Light, Light.OFF, (Row("flip", (Light.OFF,), Other.X),))
    guarded = StateTable("light", Light, Light.OFF, (Row("flip", (Light.OFF,), Light.ON, "a"),
                                                     Row("flip", (Light.OFF,), Light.OFF, "b")))
    with pytest.raises(ValueError, match="one destination per trigger"):
        TableMachine(guarded)


def test_a_note_in_a_round_and_a_cash_out_take_each_part_through_its_rows(tmp_path):
    from hal.registry import parse_spec
    from sim_hardware.rig import SimRig

    rig = SimRig({"bill_validator": parse_spec("bill_validator", "sim:id003"),
                  "printer": parse_spec("printer", "sim:tcl")})
    ledger = Ledger.open(tmp_path)
    try:
        terminal = Terminal(Config.model_validate({}), ledger, RngService.seeded(1),
                            Devices(bill_validator=rig.device("bill_validator"), printer=rig.device("printer")),
                            VoucherBook(ledger, terminal_id="T1"))
        moves: list[tuple[str, str]] = []
        for part, machine in (("money-in", terminal.money_in._validator),
                              ("cash-out", terminal.cashout._printing),
                              ("rounds", terminal.rounds._activity)):
            machine.fire = _logging(machine.fire, part, moves)

        def until(done, what: str) -> list[tuple[str, str]]:
            for _ in range(800):
                terminal.step(0.01)
                if done():
                    taken = moves[:]
                    moves.clear()
                    return taken
            raise AssertionError(f"no {what}: {terminal.status()}")

        assert terminal.money_in.validator is ValidatorState.UNKNOWN
        terminal.power_up()
        sim = rig.simulator("bill_validator")
        assert until(lambda: terminal.money_in.accepting and sim.insert_note(20), "validator taking notes") == \
            [("money-in", "connection_changed"), ("money-in", "enable")]
        assert until(lambda: ledger.credits_cents == 2000, "credit") == []     # the validator stays ENABLED

        terminal.play()
        assert terminal.rounds.activity is RoundActivity.STARTING
        assert until(lambda: terminal.rounds_played == 1, "round") == \
            [("rounds", "request"), ("rounds", "begin"), ("rounds", "enter_kernel"), ("rounds", "leave_kernel")]
        assert terminal.rounds.activity is RoundActivity.IDLE

        terminal.request_cashout()
        assert terminal.cashout.printing_state is PrintingState.VOUCHER
        assert until(lambda: terminal.tickets_printed == 1 and terminal.money_in.accepting, "ticket") == \
            [("cash-out", "send_voucher"), ("money-in", "disable"), ("cash-out", "voucher_printed"),
             ("money-in", "enable")]
        assert terminal.cashout.printing_state is PrintingState.IDLE
        assert terminal.vouchers.state(terminal.last_ticket) is VoucherState.PRINTED
    finally:
        ledger.close()
        rig.close()


def _logging(fire, part: str, moves: list[tuple[str, str]]):
    def logged(trigger: str, effect=None) -> None:
        fire(trigger, effect)
        moves.append((part, trigger))
    return logged


def test_a_decision_that_leaves_another_seat_waiting_enters_the_kernel_once(tmp_path):
    # decide() goes on to time the open decisions out inside its own entry: one entry, one exit.
    cfg = Config.model_validate({"games": {"enabled": ["three-card-poker"], "default": "three-card-poker",
                                           "seats": 2}})
    with Ledger.open(tmp_path) as ledger:
        terminal = Terminal(cfg, ledger, RngService.seeded(3), Devices(), VoucherBook(ledger, terminal_id="T1"))
        terminal.power_up()
        ledger.bill_in(2000)
        terminal.play({1: {"ante": 10}, 2: {"ante": 10}})
        terminal.step()
        moves: list[tuple[str, str]] = []
        terminal.rounds._activity.fire = _logging(terminal.rounds._activity.fire, "rounds", moves)
        terminal.decide(1, "play")
        assert moves == [("rounds", "enter_kernel"), ("rounds", "leave_kernel")]
        assert terminal.rounds.activity is RoundActivity.IDLE and terminal.kernel is not None
