"""The app on an in-process terminal (no devices), stepped frame by frame: bets, deal, playback,
refusals, attract, help and pays, game selection, the button deck, a lockup."""

from __future__ import annotations

import pygame
import pytest

from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.rng.service import RngService
from firmware.ui.app import UiApp
from firmware.ui.demo import demo_config
from hal.events import Button, ButtonPressed

FRAME = 1 / 30


@pytest.fixture
def app(tmp_path):
    made = []

    def build(cfg: Config | None = None, credits_cents: int = 0, size=(1280, 720), **kw) -> UiApp:
        ledger = Ledger.open(tmp_path / f"state{len(made)}")
        cfg = cfg or demo_config()
        terminal = Terminal(cfg, ledger, RngService.seeded(11), Devices(), VoucherBook(ledger, terminal_id="T1"))
        terminal.power_up()
        if credits_cents:
            ledger.bill_in(credits_cents)
        a = UiApp(terminal, size=size, **kw)
        made.append(a)
        a.step(FRAME)
        return a

    yield build
    for a in made:
        assert accounting_difference(a.terminal.ledger.meters) == 0
        a.terminal.ledger.close()


def click(app: UiApp, name: str) -> None:
    """A mouse click on the centre of the named hit area of the frame on screen."""
    hit = app.frame.hit(name)
    pos = app.scaler.point(*hit.rect.center)
    app.step(FRAME, [pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=pos)])


def texts(app: UiApp, region: str) -> str:
    return " | ".join(app.frame.texts_in(region))


def settle(app: UiApp, frames: int = 3) -> None:
    for _ in range(frames):
        app.step(FRAME)


def test_chips_on_the_table_then_deal_plays_the_round_and_shows_it(app):
    a = app(credits_cents=2000)
    click(a, "chip.25")
    click(a, "spot.1.bac")
    click(a, "spot.1.tie")
    click(a, "chip.10")
    click(a, "spot.1.war_pool")
    assert a.slip.wagers == {1: {"bac": 25, "war": 25, "tie": 25, "war_pool": 10}}
    assert "85 credits" in texts(a, "meter.bet")
    click(a, "button.deal")
    settle(a)
    status = a.terminal.status()
    assert status["rounds_played"] == 1 and a.playback is not None and not a.playback.done
    record = a.terminal.last_record
    assert a.record is record and record["seats"][0]["wagers"] == {"bac": 25, "war": 25, "tie": 25, "war_pool": 10}
    # The meter holds back the payout while the round is shown; a touch shows the rest at once.
    paid = sum(w + r["net"] for w, r in zip(record["seats"][0]["wagers"].values(),
                                            record["seats"][0]["results"].values(), strict=True))
    assert f"{2000 - 85:,} credits" in texts(a, "meter.credit")
    click(a, "skip")
    assert a.playback.done and a.playback.skipped
    settle(a, 1)
    assert f"{2000 - 85 + paid:,} credits" in texts(a, "meter.credit") and f"{paid:,} credits" in texts(a, "meter.win")
    assert a.terminal.ledger.credits == 2000 - 85 + paid
    # REPEAT BET puts the same wagers back; DEAL with an empty table repeats them too.
    click(a, "button.repeat")
    assert a.slip.wagers == {1: {"bac": 25, "war": 25, "tie": 25, "war_pool": 10}}


def test_a_round_plays_out_beat_by_beat_when_nobody_touches(app):
    a = app(credits_cents=1000)
    click(a, "spot.1.bac")
    click(a, "button.deal")
    seen = set()
    for _ in range(30 * 30):
        a.step(FRAME)
        if a.playback is not None:
            seen.add(a.playback.beat.kind)
            if a.playback.done:
                break
    assert a.playback.done and not a.playback.skipped
    assert {"deal", "scores", "settle"} <= seen


def test_refusals_are_messages_and_change_nothing(app):
    a = app(credits_cents=60)
    assert "button.deal" not in {h.name for h in a.frame.hits}       # nothing to deal: DEAL is dark
    a.terminal.on_input(ButtonPressed("io_board", Button.DEAL))      # the deck's DEAL says why
    settle(a, 1)
    assert "Place a bet first" in texts(a, "message")
    click(a, "chip.25")
    click(a, "spot.1.bac")                                # BAC 25 + WAR 25
    click(a, "spot.1.bac")                                # 50 + 50 > 60 credits: refused
    assert a.slip.wagers == {1: {"bac": 25, "war": 25}}
    assert "Not enough credits: that needs 100, you have 60" in texts(a, "message")
    a.slip.wagers = {1: {"tie": 5}}                        # the game's own rule, before the terminal's
    click(a, "button.deal")
    assert "Spot 1 needs a BAC bet" in texts(a, "message")
    assert a.terminal.status()["rounds_played"] == 0 and a.terminal.ledger.credits == 60


def test_attract_after_idle_and_back_on_a_touch_or_money(app):
    a = app(attract_after_s=1.0)
    for _ in range(40):
        a.step(FRAME)
    assert a.mode == "attract" and "INSERT MONEY" in texts(a, "prompt")
    click(a, "wake")
    assert a.mode == "table"
    for _ in range(40):
        a.step(FRAME)
    assert a.mode == "attract"
    a.terminal.ledger.bill_in(500)
    settle(a, 2)
    assert a.mode == "table" and "$5.00" in texts(a, "meter.credit")


def test_help_and_pays_pages(app):
    a = app(credits_cents=100)
    click(a, "button.help")
    assert a.mode == "help" and "HOW TO PLAY" in texts(a, "title")
    click(a, "button.next")
    assert a.page == 1 and "TIE wins" in texts(a, "body")
    click(a, "button.back")
    assert a.mode == "table"
    click(a, "button.paytable")
    assert "PAYS" in texts(a, "title") and "91.86%" in texts(a, "body")
    a.step(FRAME, [pygame.event.Event(pygame.KEYDOWN, key=pygame.K_ESCAPE, mod=0)])
    assert a.mode == "table"


def test_choosing_another_game(app):
    a = app(credits_cents=100)
    click(a, "button.games")
    assert a.mode == "games"
    click(a, "game.blackjack-war")
    settle(a)
    assert a.terminal.game_id == "blackjack-war" and a.mode == "table"
    assert "Blackjack War" in texts(a, "title")


def test_the_button_deck_deals_and_repeats(app):
    a = app(credits_cents=1000)
    click(a, "spot.1.bac")
    assert a.terminal.on_input(ButtonPressed("io_board", Button.DEAL)) is True
    settle(a)
    assert a.terminal.status()["rounds_played"] == 1
    a.playback.skip()
    settle(a)
    a.terminal.on_input(ButtonPressed("io_board", Button.BET))
    settle(a, 1)
    assert a.slip.chip == 25
    a.terminal.on_input(ButtonPressed("io_board", Button.REPEAT))     # the last wagers, dealt again
    settle(a)
    assert a.terminal.status()["rounds_played"] == 2
    assert a.terminal.on_input(ButtonPressed("io_board", Button.CASH_OUT)) is False   # the terminal's


def test_a_lockup_covers_the_table_and_nothing_answers(app):
    a = app(credits_cents=700)                            # no printer: a cash-out is a handpay
    click(a, "button.cash_out")
    settle(a)
    assert a.terminal.status()["state"] == "HANDPAY"
    assert "HAND PAY $7.00" in texts(a, "overlay")
    assert a.frame.hits == []


def test_the_pygame_loop_opens_a_window_and_stops_with_the_terminal(app):
    a = app(credits_cents=100, size=(640, 360))
    frames = []

    def until():
        frames.append(a.frame)
        if len(frames) == 3:
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_h, mod=0))
        return a.mode == "help" and len(frames) > 5

    a.run(fps=200, until=until)
    assert a.mode == "help" and not pygame.display.get_init()
    a.terminal.stop()
    a.run(fps=200)                                         # a stopped terminal ends the loop at once
    assert a.step(FRAME).regions                           # and the app draws off screen again


def test_a_game_without_screens_gives_way_to_one_with_screens(app, monkeypatch):
    from firmware.ui.games import GAME_UIS

    monkeypatch.delitem(GAME_UIS, "blackjack-war")
    cfg = Config.model_validate({"games": {"enabled": ["blackjack-war", "baccarat-war"],
                                           "default": "blackjack-war"}})
    a = app(cfg)
    settle(a)
    assert a.terminal.game_id == "baccarat-war" and "Baccarat War" in texts(a, "title")


def test_no_game_with_screens_is_a_clear_error(tmp_path, monkeypatch):
    from firmware.ui.games import GAME_UIS, NoScreenError

    monkeypatch.delitem(GAME_UIS, "blackjack-war")
    cfg = Config.model_validate({"games": {"enabled": ["blackjack-war"], "default": "blackjack-war"}})
    with Ledger.open(tmp_path) as ledger:
        terminal = Terminal(cfg, ledger, RngService.seeded(1), Devices(), VoucherBook(ledger, terminal_id="T1"))
        with pytest.raises(NoScreenError, match="no enabled game has screens yet"):
            UiApp(terminal)
