"""What the player sees, checked against what the terminal holds: the help and pay screens reachable
in every game state, the pays drawn equal to the pays configured, and the round's outcome drawn equal
to its record.

The screens are the product's own (``firmware/ui``: its hit areas, navigation, pay table and
playback), run in the suite's process over the live terminal's status and its last round from
``recall`` (:mod:`firmware.hil.checks_player`): the cabinet under test runs headless, and these
copies of its screens act on nothing. What a player can open is tapped on the drawn frame.
"""

from __future__ import annotations

from typing import Any

import pytest

from firmware.hil.checks_money import cash_out_all, config_of, fresh, settle, until
from firmware.hil.checks_player import (
    Screens,
    recorded_cards,
    recorded_results,
    shown_cards,
    shown_results,
)
from firmware.hil.target import Target

HELP_PAY = (
    "The rules of the game and its pay table must be available to the player at any time the "
    "game can be played: before a bet, while betting, during a round waiting for the player, and "
    "after a result. (Section title: 'Game Rules' / information displayed to the player; number approximate.)")


def _newest_round(cabinet: Target) -> dict[str, Any] | None:
    rounds = cabinet.recall(1)
    return rounds[0] if rounds else None


def _check_state(cabinet, record, label: str) -> None:
    """In the screens drawn over the cabinet's state now: help and the pay table open by touch,
    and BACK returns to the table."""
    snap = cabinet.status()
    screens = Screens(config_of(cabinet), snap, _newest_round(cabinet))
    record.attach(f"status-{label}", snap, "json")
    drawn = screens.buttons()
    for button, mode in (("button.help", "help"), ("button.paytable", "paytable")):
        record.measure(f"{label}: {button} drawn", button in drawn, equals=True, soft=True)
        if button not in drawn:
            continue
        record.measure(f"{label}: touching {button} opens", screens.tap(button), equals=mode, soft=True)
        record.measure(f"{label}: BACK drawn on the {mode} page", "button.back" in screens.buttons(), equals=True,
                       soft=True)
        if "button.back" in screens.buttons():
            record.measure(f"{label}: BACK returns to", screens.tap("button.back"), equals="table", soft=True)


@pytest.mark.hil(id="player.help-pay", standard="gli-11", clause="3.2 Game Rules and Paytable (approx.)",
                 requirement=HELP_PAY, title="Help and pays reachable in every game state", operator=False,
                 duration=6, targets=("sim", "cabinet"))
def test_help_pay(cabinet, record):
    record.note("the product's screens (firmware/ui UiApp) run in the suite over the live terminal's status "
                "and last round; touches are left clicks at the drawn hit areas")
    fresh(cabinet, record)
    record.step("idle, no credits")
    _check_state(cabinet, record, "idle")
    record.step("betting: credits on the meter")
    cabinet.insert_note(20)
    _check_state(cabinet, record, "betting")
    record.step("mid-round: Three Card Poker waiting for PLAY or FOLD")
    game = cabinet.status()["game"]
    cabinet.control("game", {"game": "three-card-poker"})
    until(lambda: cabinet.status()["game"] == "three-card-poker", timeout=15, what="Three Card Poker chosen")
    cabinet.play()
    until(lambda: ((cabinet.status().get("round") or {}).get("pending")), timeout=30,
          what="a round waiting for the player's decision")
    _check_state(cabinet, record, "mid-round")
    cabinet.control("decide", {"seat": 1, "action": "fold"})
    settle(cabinet)
    cabinet.control("game", {"game": game})
    until(lambda: cabinet.status()["game"] == game, timeout=15, what=f"{game} chosen again")
    record.step("after a win: rounds until one pays")
    won = False
    for _ in range(25):
        cabinet.play_rounds(1)
        newest = _newest_round(cabinet)
        if newest and any(r[0] == "win" for r in recorded_results(newest).values()):
            won = True
            break
        if cabinet.status()["credits_cents"] < 200:
            cabinet.insert_note(20)
    record.measure("a winning round was played", won, equals=True)
    _check_state(cabinet, record, "after-win")
    cash_out_all(cabinet)


PAYS = (
    "The pays shown to the player must be the pays the game is configured to pay. "
    "(Section title: 'Game Rules and Paytable' / paytable display; number approximate.)")


def _expected_pays(options: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(what, section heading, row label, pays text) the pay table must show, from the options in
    force (heading "": any section; label "": any row): each
    ``*_pays`` table (hand -> N to 1; 0 loses) of a side bet that is on, each ``*_pays`` number
    (the wager's N to 1), each ``*_pays`` ratio ("1:1"), and a commission taken on wins (a row's
    pays "less N%"; row label "": any row)."""
    out = []
    for key, value in options.items():
        if not key.endswith("_pays"):
            continue
        name = key.removesuffix("_pays")
        if options.get(name) is False:
            continue                                      # a side bet that is off is not shown
        if isinstance(value, dict):
            for hand, pays in value.items():
                label = hand.replace("_", " ").capitalize()
                out.append((f"{key}.{hand}", name.upper().replace("_", " "), label,
                            "loses" if pays == 0 else f"{pays:,} to 1"))
        elif isinstance(value, int) and not isinstance(value, bool):
            out.append((key, "", name.upper().replace("_", " "), f"{value:,} to 1"))
        elif isinstance(value, str) and ":" in value:
            a, b = value.split(":", 1)
            out.append((key, "", name.upper().replace("_", " "), f"{a} to {b}"))
    commission = options.get("commission")
    if isinstance(commission, int) and not isinstance(commission, bool) and commission > 0:
        out.append(("commission", "", "", f"less {commission}%"))   # the house's commission on a win
    return out


@pytest.mark.hil(id="player.pays", standard="gli-11", clause="3.2 Game Rules and Paytable (approx.)",
                 requirement=PAYS, title="The pays shown equal the pays configured, every enabled game",
                 operator=False, duration=2, targets=("sim", "cabinet"))
def test_pays(cabinet, record):
    cfg = config_of(cabinet)
    fresh(cabinet, record)
    snap = cabinet.status()
    enabled = list(cfg.games.enabled)
    record.note(f"enabled games: {', '.join(enabled)}")
    compared = 0
    for game in enabled:
        record.step(f"{game}: the options in force (service config show), the pay table the screens draw")
        shown = cabinet.service("config", "show", game, role="technician")["games"][game]
        options = shown["options"]
        screens = Screens(cfg, {**snap, "game": game}, None)
        rows = screens.paytable_rows()
        record.attach(f"paytable-{game}", {"options": options, "rows": rows}, "json")
        for what, heading, label, pays in _expected_pays(options):
            cells = [row[1:] for row in rows if len(row) > 2 and row[0].upper().startswith(heading)]
            if label:
                found = [cell[1] for cell in cells if cell[0].lower() == label.lower()][:1]
            else:
                found = [pays for cell in cells if pays in cell[1]][:1]
            record.measure(f"{game} {what}: shown", found, equals=[pays], soft=True)
            compared += 1
        record.measure(f"{game}: pay rows compared", len(_expected_pays(options)), low=1)
    record.measure("pays compared", compared, low=len(enabled))


OUTCOME = (
    "The outcome the game displays (the cards and each wager's result) must be the outcome the "
    "gaming device recorded for that round. (Section title: 'Game Outcome' / display of results "
    "and game recall; number approximate.)")


@pytest.mark.hil(id="player.outcome", standard="gli-11", clause="3.6 Game Recall (approx.)",
                 requirement=OUTCOME, title="The outcome shown equals the round's record", operator=False,
                 duration=4, targets=("sim", "cabinet"))
def test_outcome(cabinet, record):
    fresh(cabinet, record)
    cabinet.insert_note(20)
    record.step("play one round")
    cabinet.play_rounds(1)
    settle(cabinet)
    snap = cabinet.status()
    last = _newest_round(cabinet)
    assert last is not None, "recall holds no round"
    record.attach("recall-round", last, "json")
    record.measure("the round recalled is the status's last round", last["round_id"], equals=snap["last_round"])
    screens = Screens(config_of(cabinet), snap, last)
    view = screens.table()
    record.measure("the screens show the round's record", (screens.app.record or {}).get("round_id"),
                   equals=last["round_id"])
    cards = shown_cards(view)
    record.measure("cards shown equal the cards recorded", cards, equals=recorded_cards(last))
    record.measure("cards shown", len(cards), low=2)
    results = {f"seat {s} {w}": r for (s, w), r in shown_results(view).items()}
    expected = {f"seat {s} {w}": r for (s, w), r in recorded_results(last).items()}
    record.attach("results", {"shown": results, "recorded": expected}, "json")
    for name, value in expected.items():
        record.measure(f"{name}: outcome and net shown", list(results.get(name, ("not shown", None))),
                       equals=list(value), soft=True)
    cash_out_all(cabinet)
