"""The core pieces on their own: sizes and scaling, money, the bet slip, playback time, input."""

from __future__ import annotations

import pygame
import pytest

from firmware.games.base import Outcome
from firmware.kernel.limits import BetLimits
from firmware.ui.actions import UiAction
from firmware.ui.betting import BetSlip, SlipRefused
from firmware.ui.context import chip_values
from firmware.ui.input import BUTTONS, DeviceInbox, actions, from_device, from_pygame
from firmware.ui.layout import Rect, Scaler, SizeError, parse_size
from firmware.ui.money import Money
from firmware.ui.painter import Frame, Hit, Painter
from firmware.ui.playback import Beat, Playback
from hal.events import Button, ButtonPressed, Touch, TouchPhase


# --- layout -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, size", [("1920x1080", (1920, 1080)), ("1280X720", (1280, 720)),
                                        (" 800x600 ", (800, 600))])
def test_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["0x0", "99999x1", "abc", "", "1920", "-5x5", "1920x1080x3", "400x4000"])
def test_bad_sizes(text):
    with pytest.raises(SizeError):
        parse_size(text)


def test_design_pixels_scale_to_720p_and_back():
    s = Scaler(1280, 720)
    assert s.scale == pytest.approx(2 / 3) and s.offset == (0, 0)
    assert s.rect(Rect(30, 60, 300, 150)) == (20, 40, 200, 100)
    assert s.to_design(640, 360) == pytest.approx((960, 540))
    wide = Scaler(2560, 1080)                      # another shape: centred, bars at the sides
    assert wide.scale == 1 and wide.offset == (320, 0) and wide.to_design(320, 0) == (0, 0)


def test_rect_splits_cover_the_whole_and_keep_the_gaps():
    parts = Rect(0, 0, 1000, 50).split_h(1, 2, 1, gap=10)
    assert [p.w for p in parts] == [245, 490, 245] and parts[-1].right == 1000


def test_text_never_goes_below_the_minimum():
    p = Painter(pygame.Surface((1280, 720)))
    with pytest.raises(ValueError, match="below the 18 px minimum"):
        p.text("tiny", Rect(0, 0, 100, 20), 12, (255, 255, 255))
    drawn = p.text("a rather long label that cannot fit", Rect(0, 0, 120, 30), 28, (255, 255, 255))
    assert p.frame.texts[-1].size == 18 and p.frame.texts[-1].text.endswith("...")
    assert drawn.w <= 121


# --- money ------------------------------------------------------------------------------------------
def test_money_is_integer_credits_shown_in_currency_and_credits():
    m = Money(1, "USD")
    assert m.currency_of(2059) == "$20.59" and m.credits(2059) == "2,059 credits" and m.credits(1) == "1 credit"
    assert Money(5, "EUR").currency_of(3) == "€0.15"
    assert Money(25, "CHF").currency_of(1000) == "250.00 CHF"
    assert m.currency_of(-150) == "-$1.50" and m.signed(40) == "+40" and m.signed(-5) == "-5"
    with pytest.raises(ValueError):
        Money(0)


# --- the bet slip -----------------------------------------------------------------------------------
def _slip(link=lambda w: w, **limits):
    lim = BetLimits(**{"min_bet": 1, "max_bet": 500, "max_total_bet": 5000, **limits})
    return BetSlip(lim, chip_values(lim), link=link)


def test_chips_come_from_the_table_limits():
    assert chip_values(BetLimits(1, 500, 5000)) == (1, 5, 10, 25, 100)
    assert chip_values(BetLimits(5, 50, 500)) == (5, 10, 25)
    assert chip_values(BetLimits(3, 7, 100)) == (3,)


def test_chips_go_on_the_table_capped_at_the_maximum_and_refusals_change_nothing():
    slip = _slip(max_bet=30, max_total_bet=58)
    slip.select(25)
    assert slip.place(1, "bac", credits=1000) == 25
    assert slip.place(1, "bac", credits=1000) == 30              # capped at the table maximum
    with pytest.raises(SlipRefused, match="table maximum"):
        slip.place(1, "bac", credits=1000)
    slip.place(1, "tie", credits=1000)
    with pytest.raises(SlipRefused, match="round maximum"):
        slip.place(1, "tie", credits=1000)                        # 30 + 30 > 58
    assert slip.wagers == {1: {"bac": 30, "tie": 25}}
    slip.select(1)
    with pytest.raises(SlipRefused, match="Not enough credits"):
        slip.place(1, "war", credits=55)
    assert slip.wagers == {1: {"bac": 30, "tie": 25}} and slip.total == 55
    with pytest.raises(SlipRefused):
        slip.select(7)


def test_linked_wagers_follow_and_repeat_brings_back_the_last_round():
    def war_follows_bac(w):
        return {s: {**b, "war": b["bac"]} if b.get("bac") else b for s, b in w.items()}

    slip = _slip(link=war_follows_bac)
    slip.select(10)
    slip.place(1, "bac", credits=100)
    assert slip.wagers == {1: {"bac": 10, "war": 10}}
    slip.dealt()
    assert slip.wagers == {} and slip.last == {1: {"bac": 10, "war": 10}}
    slip.repeat(credits=100)
    assert slip.total == 20
    slip.clear()
    with pytest.raises(SlipRefused, match="Not enough credits"):
        slip.repeat(credits=15)
    assert slip.wagers == {}
    assert slip.next_chip() == 25 and slip.next_chip() == 100 and slip.next_chip() == 1


# --- playback ---------------------------------------------------------------------------------------
def test_playback_keeps_time_and_skips():
    pb = Playback([Beat("a", 1.0, 1), Beat("b", 0.5, 2), Beat("end", 0.0, 3)])
    pb.advance(0.5)
    assert pb.beat.kind == "a" and pb.progress == pytest.approx(0.5) and not pb.done
    pb.advance(0.75)
    assert pb.beat.kind == "b" and pb.progress == pytest.approx(0.5)
    pb.advance(10)
    assert pb.done and pb.beat.reveal == 3
    pb2 = Playback([Beat("a", 1.0, 1), Beat("end", 0.0, 2)], speed=2.0)
    pb2.advance(0.25)
    assert pb2.progress == pytest.approx(0.5)
    pb2.skip()
    assert pb2.done and pb2.skipped
    with pytest.raises(ValueError):
        Playback([])
    with pytest.raises(ValueError):
        pb.advance(-1)


# --- input ------------------------------------------------------------------------------------------
def _frame():
    return Frame(hits=[Hit(Rect(0, 0, 1920, 1080), UiAction("skip"), "skip"),
                       Hit(Rect(1700, 950, 200, 110), UiAction("deal"), "button.deal")])


def test_a_calibrated_touch_at_720p_lands_on_the_button_drawn_there():
    scaler = Scaler(1280, 720)
    frame = _frame()
    down = Touch("touch", 1200, 670, TouchPhase.DOWN)             # (1800, 1005) in design pixels
    assert from_device(down, frame, scaler) == UiAction("deal")
    assert from_device(Touch("touch", 100, 100, TouchPhase.DOWN), frame, scaler) == UiAction("skip")
    assert from_device(Touch("touch", 1200, 670, TouchPhase.UP), frame, scaler) is None
    assert from_device(Touch("touch", 1200, 670, TouchPhase.MOVE), frame, scaler) is None


def test_the_button_deck_and_the_inbox():
    inbox = DeviceInbox()
    assert inbox.offer(ButtonPressed("io", Button.DEAL)) is True          # the screens take it
    assert inbox.offer(ButtonPressed("io", Button.CASH_OUT)) is False     # the terminal keeps it
    assert inbox.offer(Touch("touch", 1, 2)) is False                     # touches: both see them
    events = inbox.drain()
    assert [type(e).__name__ for e in events] == ["ButtonPressed", "Touch"] and inbox.drain() == []
    assert BUTTONS[Button.REPEAT] == UiAction("repeat_deal") and BUTTONS[Button.HELP] == UiAction("help")
    assert actions(events, [], None, Scaler(1920, 1080)) == [UiAction("deal")]


def test_mouse_and_keys_in_development():
    scaler = Scaler(1920, 1080)
    frame = _frame()
    click = pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(1800, 1000))
    assert from_pygame(click, frame, scaler) == UiAction("deal")
    key = pygame.event.Event(pygame.KEYDOWN, key=pygame.K_2, mod=0)
    assert from_pygame(key, frame, scaler, chips=(1, 5, 10)) == UiAction("chip", 5)
    assert from_pygame(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_SPACE, mod=0), frame, scaler) == UiAction("skip")
    finger = pygame.event.Event(pygame.FINGERDOWN, x=0.9, y=0.95, finger_id=0, touch_id=0, dx=0, dy=0, pressure=1)
    assert from_pygame(finger, frame, scaler) == UiAction("deal")


def test_ui_actions_are_a_closed_set():
    with pytest.raises(ValueError, match="unknown UI action"):
        UiAction("dael")
    assert Outcome.WIN.value == "win"
