"""View-model builders: the terminal's ``status()`` + the round record + the bet slip -> a view.

These are the only functions that read the terminal's status document. The app calls them every
frame; ``egm screenshot`` calls them with a demonstration state; tests call them with plain dicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from firmware.ui.actions import UiAction
from firmware.ui.betting import BetSlip, stake
from firmware.ui.games import has_screens
from firmware.ui.games.base import (
    GAME_DETAILS,
    GAME_NAMES,
    GameUi,
    coin_out,
    paid_shown,
    round_stake,
)
from firmware.ui.messages import key, text
from firmware.ui.playback import Playback
from firmware.ui.view import AttractView, ButtonView, GameChoice, SelectView, TableView

#: Cabinet states in which the player can place chips and deal.
BETTING_STATES = frozenset({"IDLE"})


#: Catalogue keys naming the cabinet's devices and doors, and the device faults (hal FaultKind).
DEVICE_NAMES: dict[str, str] = {
    "bill_validator": key("tilt.devices.bill_validator"), "printer": key("tilt.devices.printer"),
    "touch": key("tilt.devices.touch"), "shoe": key("tilt.devices.shoe"), "io_board": key("tilt.devices.io_board"),
}
DOOR_NAMES: dict[str, str] = {
    "main": key("tilt.doors.main"), "cash_box": key("tilt.doors.cash_box"), "logic": key("tilt.doors.logic"),
}
FAULT_NAMES: dict[str, str] = {
    "jam": key("tilt.faults.jam"), "cheat": key("tilt.faults.cheat"), "failure": key("tilt.faults.failure"),
    "stacker_full": key("tilt.faults.stacker_full"), "stacker_open": key("tilt.faults.stacker_open"),
    "paper_out": key("tilt.faults.paper_out"), "chassis_open": key("tilt.faults.chassis_open"),
    "misread": key("tilt.faults.misread"), "communication": key("tilt.faults.communication"),
    "state_lost": key("tilt.faults.state_lost"), "deal": key("tilt.faults.deal"),
}


def tilt_text(tilt: str, port: str | None = None) -> str:
    """A tilt condition (``source:name`` as the cabinet names it) as the attendant reads it; a
    device not connected with the ``port`` it is looked for on, when known."""
    source, _, name = tilt.partition(":")
    if source == "door":
        return text("tilt.door_open", door=text(DOOR_NAMES[name]) if name in DOOR_NAMES else name.upper())
    if source in ("device_fault", "device_disconnected"):
        device, _, fault = name.partition(".")
        device_name = text(DEVICE_NAMES[device]) if device in DEVICE_NAMES else device.upper()
        if source == "device_disconnected":
            if port:
                return text("tilt.disconnected_port", device=device_name, port=port)
            return text("tilt.disconnected", device=device_name)
        return text("tilt.device_fault", device=device_name,
                    fault=text(FAULT_NAMES[fault]) if fault in FAULT_NAMES else fault.upper())
    if source == "critical_memory":
        return text("tilt.critical_memory")
    if source == "rng":
        return text("tilt.rng")
    if source == "self_test":
        return text("tilt.self_test", check=name)
    return text("tilt.other", tilt=tilt)


def overlay_detail_for(status: Mapping[str, Any]) -> tuple[str, ...]:
    """What holds the cabinet: each open tilt named (a halt: its reason), for the lockup notice."""
    if status.get("state") == "HALTED":
        return (str(status.get("halted") or ""),)
    if status.get("state") != "TILT":
        return ()
    return tuple(dict.fromkeys(tilt_text(t["tilt"], t.get("port")) for t in status.get("tilts") or []))


def overlay_for(status: Mapping[str, Any], gui: GameUi) -> str:
    """The lockup notice for the cabinet's state ("" while the player can play)."""
    state = status.get("state", "IDLE")
    money = gui.ctx.money
    if state == "HALTED":
        return text("overlay.halted")
    if state == "TILT":
        return text("overlay.tilt")
    if state == "HANDPAY":
        handpay = status.get("handpay") or {}
        return text("overlay.handpay", amount=money.currency_of(int(handpay.get("credits", 0))))
    if state == "SERVICE":
        return text("overlay.service")
    if state in ("POWER_UP", "SELF_TEST"):
        return text("overlay.starting")
    if state == "DISABLED":
        return text("overlay.disabled")
    return ""


def table_view(gui: GameUi, status: Mapping[str, Any], slip: BetSlip, *,
               record: Mapping[str, Any] | None = None, playback: Playback | None = None,
               message: str = "") -> TableView:
    """The table: ``record`` is the last round (shown through ``playback`` while it plays)."""
    credits = int(status.get("credits", 0))
    state = status.get("state", "IDLE")
    in_round = bool(status.get("round")) or bool(status.get("starting"))
    pending = (status.get("round") or {}).get("pending") or []
    playing_back = playback is not None and not playback.done
    betting = state in BETTING_STATES and not in_round and not playing_back
    beat = playback.beat if playback is not None else None
    shown_record = record if (record is not None and (not betting or not slip.wagers)) else None
    wagers = slip.wagers if betting else {}
    if pending:                          # a round waits for the player: its cards, not the last round
        shown_record, playing_back, beat = None, False, None
        wagers = slip.last or {}
    if betting:
        bet = slip.total or (round_stake(record) if shown_record is not None else 0)
    elif pending:
        bet = stake(wagers)
    else:
        bet = round_stake(record) if record is not None else 0
    # The round's dice (Split 21 Stud, Double Super 9) go to the felt while it waits for the player,
    # and only to games whose round has dice (the others' felt takes no ``dice``).
    # The seats already decided in a round still waiting for others (several spots) go to the felt
    # too, with the cards they decided on (only games with decisions are given ``decided``).
    dice = (status.get("round") or {}).get("dice") if pending else None
    decided = (status.get("round") or {}).get("decided") if pending else None
    felt = gui.felt(wagers=wagers, record=shown_record, beat=beat if playing_back else None,
                    progress=playback.progress if playback is not None else 1.0, betting=betting,
                    pending=pending, **({"dice": tuple(dice)} if dice else {}),
                    **({"decided": tuple(decided)} if decided else {}))
    # WIN is what the round paid to the credit meter: the sum of the result tags shown so far (the
    # whole payout once the round has been shown); the credit meter holds back what is not shown yet.
    win = paid_shown(felt)
    if playing_back and record is not None:
        credits -= coin_out(record) - win
    caption = beat.caption if (playing_back and beat is not None) else ""
    banner = beat.banner if (playing_back and beat is not None) else ""
    if not message and not caption and betting and shown_record is not None:
        caption = gui.beats(shown_record)[-1].caption             # how the last round ended
    if not message:
        message = caption or state_message(status, gui, betting, credits, in_round)
    can_cash_out = (int(status.get("credits_cents", credits)) > 0 and state in ("IDLE", "PLAYING", "DISABLED")
                    and not status.get("printing")) or (state == "HANDPAY" and (status.get("handpay") or {})
                                                         .get("reason") == "printer")
    decisions = tuple(b for request in pending for b in gui.decision_buttons(request))
    chrome = gui.chrome(
        credits=credits, bet=bet, win=win, chip=slip.chip, betting=betting, extra=decisions,
        can_deal=bool(slip.wagers) or (bool(slip.last) and stake(slip.last or {}) <= credits),
        can_repeat=bool(slip.last), can_clear=bool(slip.wagers),
        can_cash_out=can_cash_out, message=message, banner=banner, skippable=playing_back,
        overlay=overlay_for(status, gui), overlay_detail=overlay_detail_for(status))
    return TableView(chrome, felt)


def state_message(status: Mapping[str, Any], gui: GameUi, betting: bool, credits: int, in_round: bool) -> str:
    state = status.get("state", "IDLE")
    if status.get("printing") or state == "CASHOUT":
        return text("message.printing")
    pending = (status.get("round") or {}).get("pending") or []
    if pending:
        left = (status.get("round") or {}).get("decide_within_s")
        if left is None:
            return text("message.decide")
        return text("message.decide_within", seconds=int(left + 0.999))
    if in_round:
        return text("message.dealing")
    if betting and credits <= 0:
        return text("message.insert_money")
    if betting:
        return text("message.place_bets")
    return ""


def attract_view(gui: GameUi, enabled: list[str], t: float, credits: int) -> AttractView:
    names = tuple(text(GAME_NAMES[g]) for g in enabled if g in GAME_NAMES and has_screens(g))
    prompt = text("attract.touch") if credits > 0 else text("attract.insert")
    lines = gui.attract_lines()
    cards = ("Qs", "3h", "Ad", "9c", "Kh")
    return AttractView(gui.name.upper(), lines, prompt, names, t, cards)


def select_view(enabled: list[str], current: str) -> SelectView:
    games = []
    for game_id in enabled:
        if not has_screens(game_id) or game_id not in GAME_NAMES:
            continue
        games.append(GameChoice(game_id, text(GAME_NAMES[game_id]), text(GAME_DETAILS[game_id]), game_id == current))
    back = ButtonView("button.back", text("button.back"), UiAction("back"), True, "deal")
    return SelectView(text("games.title"), tuple(games), (back,))
