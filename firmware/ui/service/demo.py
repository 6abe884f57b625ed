"""Demonstration states of the service screens: for ``egm screenshot service|recall|calibration``,
the docs and the tests.

A demonstration is a :class:`~firmware.ui.service.builders.MenuState` holding what the service API
would answer on a terminal that has been played a little: a technician logged in (the actions the
permission table gives the role), the meters document made by the ledger's own report function,
and recalled rounds that are real rounds, played by the round kernel and the games' code from
stacked cards (the first is seed 000's FIG. 8 war, the core's demonstration round). The screens
draw it with the same builders as on the cabinet.
"""

from __future__ import annotations

from typing import Any

from firmware.cabinet.service import ACTIONS
from firmware.config import Config
from firmware.ledger import meters as M
from firmware.ui.context import GameContext
from firmware.ui.demo import demo_round, play_round
from firmware.ui.money import Money
from firmware.ui.service.builders import MenuState
from firmware.ui.service.calibration import CalibrationRun

#: The demonstration rounds, newest first: (game, stacked cards, wagers, time, credits before).
RECALL: tuple[tuple[str, str, dict[int, dict[str, int]], str, int], ...] = (
    ("baccarat-war", demo_round("baccarat-war").cards, demo_round("baccarat-war").wagers,
     "2026-11-23T18:24:05.412Z", 1960),
    ("three-card-poker", "Qs Kd Qh 4c 7d 9s", {1: {"ante": 10, "pair_plus": 5}}, "2026-11-23T18:22:51.090Z", 1995),
    ("blackjack-war", demo_round("blackjack-war").cards, demo_round("blackjack-war").wagers,
     "2026-11-23T18:21:17.733Z", 2000),
)

#: Meter values of the demonstration, in cents (counts for games and doors).
METERS: dict[str, int] = {
    "coin_in": 12_340, "coin_out": 11_895, "bills_in": 10_000, "bills_in_by_denom.2000": 3,
    "bills_in_by_denom.500": 8, "ticket_in": 2_500, "ticket_in_cashable": 2_500, "ticket_out": 9_950,
    "ticket_out_cashable": 9_950, "games_played": 96, "games_won": 41, "games_lost": 49,
    "games_since_power_up": 12, "games_since_door_close": 12, "door_open": 3, "door_open.main": 2,
    "door_open.cash_box": 1, "power_reset": 2, "coin_in.baccarat-war": 9_120, "coin_out.baccarat-war": 8_806,
    "coin_in.three-card-poker": 3_220, "coin_out.three-card-poker": 3_089, "credits": 2_105,
}

DEVICES = {"bill_validator": "open", "printer": "open", "io_board": "open", "touch": "open", "shoe": "gone"}


def demo_config() -> Config:
    return Config.model_validate({"games": {"enabled": ["baccarat-war", "blackjack-war", "three-card-poker"],
                                            "default": "baccarat-war", "seats": 1,
                                            "options": {g: {"pool": {"enabled": True, "dealer_ante": 10}}
                                                        for g in ("baccarat-war", "blackjack-war")}}})


def recall_rounds() -> list[dict[str, Any]]:
    """The demonstration rounds in the ``recall`` answer's format (newest first)."""
    cfg = demo_config()
    out = []
    for i, (game, cards, wagers, time, before) in enumerate(RECALL):
        record = play_round(GameContext.from_config(cfg, game), cards, wagers, round_id=f"demo{len(RECALL) - i:04d}")
        record.update(time=time, status="complete", credits_before=before, credits_after=before + record["net"])
        out.append(record)
    return out


def demo_state(screen: str, size: tuple[int, int] = (1920, 1080)) -> MenuState:
    """The state behind ``egm screenshot SCREEN`` for the service screens: ``service`` (the
    technician's menu), ``recall`` (the last rounds, the first drawn), ``meters``, ``calibration``
    (the second target shown), or ``login``."""
    status = {"state": "SERVICE", "credits": 0, "credits_cents": 0, "tilts": [], "devices": dict(DEVICES)}
    state = MenuState(money=Money(1, "USD"), status=status, role="technician",
                      allowed=tuple(a.name for a in ACTIONS if "technician" in a.roles))
    if screen == "login":
        state.role, state.allowed = None, ()
    elif screen == "service":
        state.page = "menu"
        state.message, state.message_tone = "Logged in as TECHNICIAN", "good"
    elif screen == "meters":
        state.page = "meters"
        state.answers["meters"] = {"meters": M.report(METERS), "credits": METERS["credits"],
                                   "credit_count": METERS["credits"], "denomination": 1}
    elif screen == "recall":
        state.page = "recall"
        state.answers["recall"] = {"rounds": recall_rounds()}
    elif screen == "calibration":
        state.page = "calibration"
        run = CalibrationRun(*size)
        sensor = (7.9, 13.3, 420.0, 610.0)                 # a touch panel as mounted: scale, offset
        x, y = run.targets[0]
        run.touch(sensor[0] * x + sensor[2], sensor[1] * y + sensor[3])
        state.calibration = run.view()
    else:
        raise ValueError(f"no service demonstration {screen!r}")
    return state
