"""Whole service sessions driven by touches on the touchscreen: an auditor reads the meters and the
recall of the last round (drawn with its cards), a technician runs device tests and changes a
game option, and the refusals of the service API are what the screen shows (an attendant never
sees the meters; a wrong PIN, a lockout, an option the jurisdiction refuses)."""

from __future__ import annotations

import numpy as np
import pytest

from firmware.cards.card import parse_card
from firmware.ui import theme
from firmware.ui.cards import rank_label
from firmware.ui.service.actions import ServiceAction
from tests.ui.conftest import region_pixels
from tests.ui.service.conftest import actions, login, settle, texts, touch

WAGERS = {1: {"bac": 10, "war": 10, "tie": 5, "four_card": 5}}


def play(r, rounds: int = 2) -> dict:
    """Rounds through the terminal's own ``play`` command; the last record."""
    for _ in range(rounds):
        future = r.terminal.submit("play", wagers=WAGERS)
        for _ in range(50):
            r.terminal.step(0)
            if future.done() and r.terminal.kernel is None and not r.terminal.starting:
                break
        future.result(0)
    assert r.terminal.status()["rounds_played"] == rounds
    return r.terminal.last_record


def events(r, name: str) -> list[dict]:
    return [e for e in r.ledger.events(200) if e["event"] == name]


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_an_auditor_reads_the_meters_and_recalls_the_last_round_with_its_cards(rig, size):
    r = rig(credits_cents=2000, size=size)
    record = play(r)
    app = r.app
    assert app.menu.state.page == "login"
    assert {"role.attendant", "role.technician", "role.auditor", "role.regulator"} <= actions(app)
    login(r, "auditor")
    state = app.menu.state
    assert state.page == "menu" and state.role == "auditor"
    entry = events(r, "service_entry")[0]
    assert entry["role"] == "auditor" and entry["result"] == "ok"
    # The menu: the auditor's pages only (read-only ones), from the API's permission table.
    shown = {n for n in actions(app) if n.startswith("menu.")}
    assert shown == {"menu.meters", "menu.recall", "menu.bills", "menu.tickets", "menu.events",
                     "menu.software", "menu.packages"}
    assert "Logged in as AUDITOR" in texts(app, "message")

    touch(r, "menu.meters")
    assert state.page == "meters"
    report = r.ledger.meters_report()
    coin_in = report["meters"]["coin_in"]
    assert coin_in == 2 * 30
    assert texts(app, "meter.coin_in") == f"Coin in (played) | ${coin_in // 100}.{coin_in % 100:02d} | {coin_in} credits"
    assert texts(app, "meter.bills_in") == "Bills in | $20.00 | 2,000 credits"
    assert texts(app, "meter.games_played") == "Games played | 2"
    assert f"{report['credits']:,} credits" in texts(app, "meter.credits")
    assert texts(app, "meter.notes.2000") == "Notes of $20.00 | 1"
    bac = report["meters"]["games"]["baccarat-war"]["wagers"]["bac"]["coin_in"]
    assert bac == 20 and texts(app, "meter.game.baccarat-war.bac.coin_in") == "Baccarat War BAC: coin in | $0.20"
    assert "Page 1 of 2" in texts(app, "pager")                 # every meter: the counts go on
    touch(r, "button.next")
    assert "meter.game.baccarat-war.war.coin_out" in app.frame.regions
    assert min(t.size for t in app.frame.texts) >= theme.MIN_TEXT

    touch(r, "button.menu")
    touch(r, "menu.recall")
    assert state.page == "recall"
    assert "LAST 2 ROUNDS" in texts(app, "table.recall.rounds")
    assert "round.seat.1" in app.frame.regions and "round.dealer" in app.frame.regions
    assert f"Round {record['round_id']}" in texts(app, "round")            # the newest is drawn first
    seat = record["seats"][0]
    for who, hand in (("round.seat.1", seat), ("round.dealer", record["dealer"])):
        shown_texts = app.frame.texts_in(who)
        for card in hand["cards"] + hand.get("war_cards", []):
            assert rank_label(parse_card(card)) in shown_texts, (who, card, shown_texts)
        # The cards are drawn: a good part of the hand's area is card face.
        pixels = region_pixels(app.surface, app.scaler, app.frame.regions[who]).reshape(-1, 3)
        face = np.all(np.abs(pixels.astype(int) - np.array(theme.CARD_FACE)) < 8, axis=1).mean()
        assert face > 0.12, (who, face)
    for wager, result in seat["results"].items():
        tag = texts(app, f"round.wager.1.{wager}.result")
        assert {"win": "WIN", "lose": "LOSE", "push": "PUSH"}[result["outcome"]] in tag
        paid = seat.get("stakes", seat["wagers"])[wager] + result["net"]
        assert tag.split()[1:] == ([f"{paid:,}"] if paid else [])     # what the wager paid, as the player saw
    # Touching the older round in the list draws that one.
    touch(r, "row.round.1")
    older = r.ledger.recall(2)[1]
    assert f"Round {older['round_id']}" in texts(app, "round")
    touch(r, "button.logout")
    assert app.menu.state.page == "login" and r.api.session is None


def test_an_attendant_never_sees_the_meters_and_the_api_refuses_them(rig):
    r = rig(credits_cents=1000)
    login(r, "attendant")
    app = r.app
    assert app.menu.state.role == "attendant"
    names = actions(app)
    assert "menu.meters" not in names and "menu.software" not in names and "menu.diagnostics" not in names
    assert {"menu.recall", "menu.bills", "menu.tickets", "menu.events", "menu.attendant"} <= names
    # The screen does not offer it; asked anyway, the API refuses and logs it, and the screen says so.
    app.menu.dispatch(ServiceAction("open", "meters"))
    settle(app)
    assert app.menu.state.page == "menu"
    assert "Your role may not open that page" in texts(app, "message")
    app.menu.dispatch(ServiceAction("run", ("meters",)))
    settle(app)
    assert "Refused: the attendant role may not use meters" in texts(app, "message")
    refusal = events(r, "service_action")[0]
    assert (refusal["role"], refusal["action"], refusal["result"]) == ("attendant", "meters", "refused")
    assert app.menu.state.role == "attendant"                    # still logged in


def test_a_wrong_pin_and_the_lockout_are_the_api_s_words(rig):
    r = rig()
    app = r.app
    login(r, "regulator", "1234")
    assert app.menu.state.page == "pin" and app.menu.state.role is None
    assert "Refused: wrong PIN (4 more before the regulator role locks)" in texts(app, "message")
    assert app.frame.texts_in("keypad.entry") == ["-"]           # the PIN typed is gone
    for _ in range(4):
        for digit in "1234":
            touch(r, f"key.{digit}", frames=1)
        touch(r, "button.enter")
    assert "locked for 60 s after 5 wrong PINs" in texts(app, "message")
    touch(r, "button.cancel")
    login(r, "regulator")                                        # even the right PIN, while locked
    assert "locked for 60 more s" in texts(app, "message") and app.menu.state.role is None
    assert events(r, "service_lockout")[0]["role"] == "regulator"
    touch(r, "button.cancel")
    login(r, "auditor")                                          # other roles are not locked
    assert app.menu.state.role == "auditor"


def test_a_technician_tests_the_devices_and_changes_a_game_option(rig):
    r = rig()
    app = r.app
    login(r, "technician")
    names = actions(app)
    assert {"menu.diagnostics", "menu.config", "menu.calibration", "menu.ram_clear", "menu.meters"} <= names
    assert "menu.attendant" not in names                         # a technician pays no handpays

    touch(r, "menu.diagnostics")
    assert app.menu.state.page == "diagnostics"
    # Live device state from the terminal's status, link counters from the diagnostics answer.
    assert texts(app, "row.device.printer").startswith("printer | open | FakePrinter | garbage=2")
    assert "bad_crc=0" in texts(app, "row.device.io_board")
    assert "State: IDLE" in texts(app, "panel.cabinet") and "No tilts" in texts(app, "panel.cabinet")
    touch(r, "test.lamps_on")
    assert len(r.devices.io_board.lamps[-1]) == 6                # every button lamp lit
    assert "Done: test lamps on" in texts(app, "message")
    assert "lamps:" in texts(app, "panel.result")
    touch(r, "test.ticket")
    assert "PAPER_OUT" in texts(app, "panel.result").upper().replace(" ", "_")
    r.devices.touch.calibration = None
    touch(r, "test.touch")
    assert "touches[0].x" in texts(app, "panel.result")
    assert [e["action"] for e in events(r, "service_action")][:3] == ["test touch", "test ticket", "test lamps"]

    touch(r, "button.menu")
    touch(r, "menu.config")
    assert app.menu.state.page == "config"
    touch(r, "game.three-card-poker")
    assert "Three Card Poker: OPTIONS" in texts(app, "table.options")
    assert texts(app, "row.option.pair_plus_pays.flush") == "pair_plus_pays.flush | 4"
    assert "row.option.dealer_qualifies" not in actions(app)     # shown, not a choice on screen
    touch(r, "row.option.pair_plus_pays.flush")
    assert "CHANGE pair_plus_pays.flush" in texts(app, "panel.editor")
    touch(r, "step.-1")
    assert "New: 3" in texts(app, "panel.editor")
    touch(r, "button.apply", frames=4)
    assert "three-card-poker: pair_plus_pays.flush=3 stored" in texts(app, "message")
    assert r.ledger.setting("config.games.three-card-poker") == {"pair_plus_pays": {"flush": 3}}
    assert texts(app, "row.option.pair_plus_pays.flush") == "pair_plus_pays.flush | 3"
    # An option the jurisdiction profile refuses: the API's reason on the screen, nothing changed.
    cfg = r.terminal.cfg
    touch(r, "row.option.dealer_cards")
    touch(r, "choice.4")
    touch(r, "button.apply", frames=4)
    assert "Refused: refused by the jurisdiction profile" in texts(app, "message")
    assert r.terminal.cfg == cfg
    assert r.ledger.setting("config.games.three-card-poker") == {"pair_plus_pays": {"flush": 3}}


def test_a_technician_is_refused_a_config_change_with_credits_on_the_meter(rig):
    r = rig(credits_cents=500)
    login(r, "technician")
    touch(r, "menu.ram_clear")
    touch(r, "reason.0")
    assert "ARE YOU SURE?" in texts(r.app, "panel.confirm")
    touch(r, "button.confirm")
    assert "Refused: ram-clear needs the technician key (SERVICE) or an idle cabinet with no credits" \
        in texts(r.app, "message")
    assert r.ledger.credits_cents == 500 and r.app.menu.state.role == "technician"
