"""``egm diagram NAME`` for the terminal's parts: every row of the table the code moves by is drawn,
in dot and in Mermaid, and an unknown name is refused with the names there are."""

from __future__ import annotations

import pytest

from firmware.cabinet.cashout import PRINTING_TABLE
from firmware.cabinet.money_in import VALIDATOR_TABLE
from firmware.cabinet.rounds import ACTIVITY_TABLE
from firmware.cashless.voucher_states import VOUCHER_TABLE
from firmware.cli import build_parser, main
from firmware.games.registry import GAMES
from firmware.table.phases import TABLE_PHASES

TABLES = {"money-in": VALIDATOR_TABLE, "cash-out": PRINTING_TABLE, "rounds": ACTIVITY_TABLE,
          "vouchers": VOUCHER_TABLE, "live-table": TABLE_PHASES}


def _label(row) -> str:
    return row.trigger if row.when is None else f"{row.trigger} [{row.when}]"


@pytest.mark.parametrize("name", TABLES)
def test_every_row_of_the_table_is_drawn_in_dot_and_mermaid(name, capsys):
    table = TABLES[name]
    assert main(["diagram", name]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith(f'digraph "{name}"')
    edges = [line for line in dot.splitlines() if " -> " in line and "[label=" in line]
    expected = [f'  {s.name if s else "__start"} -> {row.dest.name if row.dest else "__end"} '
                f'[label="{_label(row)}"];' for row in table.rows for s in row.sources]
    assert edges == expected
    for state in table.states:
        assert f'  {state.name} [label="{state.name}"' in dot

    assert main(["diagram", name, "--format", "mermaid"]) == 0
    mermaid = capsys.readouterr().out
    edges = [line for line in mermaid.splitlines() if ": " in line]
    expected = [f"    {s.name if s else '[*]'} --> {row.dest.name if row.dest else '[*]'}: {_label(row)}"
                for row in table.rows for s in row.sources]
    assert edges == expected
    start = f"    [*] --> {table.initial.name}" if table.initial else None
    assert start is None or start in mermaid.splitlines()


def test_the_vouchers_are_drawn_from_outside_the_book_to_their_final_states(capsys):
    assert main(["diagram", "vouchers", "--format", "mermaid"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "    [*] --> ISSUED: issue" in lines and "    REDEEMED --> [*]" in lines and "    VOID --> [*]" in lines
    assert "    REDEEM_PENDING --> [*]: cancel_redeem [another machine's]" in lines


def test_an_unknown_name_is_refused_with_every_machine_and_game(capsys):
    assert main(["diagram", "validator"]) == 2
    err = capsys.readouterr().err
    assert "no state machine 'validator'" in err
    for name in ("cabinet", *TABLES, *GAMES):
        assert name in err
    help_text = next(a.help for a in _diagram_parser()._actions if a.dest == "name")
    for name in ("cabinet", *TABLES, *GAMES):
        assert name in help_text


def _diagram_parser():
    for action in build_parser()._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict) and "diagram" in action.choices:
            return action.choices["diagram"]
    raise AssertionError("no diagram command")
