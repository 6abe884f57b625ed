"""Double Super 9 on screen: setting four cards into FRONT and BACK by touch while the real kernel
waits (a foul refused, HOUSE WAY, what SET HAND sends), the three dice and the position they pick,
the round beat by beat from its record (comparisons WIN / LOSE / COPY, commission), the pay table
from the options and the exact PAR sheet, and the hand ranking in the help."""

from __future__ import annotations

import pygame
import pytest

from firmware.games.double_super_9 import dealing_order, dice_position
from firmware.games.errors import DecisionError
from firmware.ui.actions import UiAction
from firmware.ui.betting import BetSlip
from firmware.ui.builders import table_view
from firmware.ui.demo import demo_config, play_round, status_doc
from firmware.ui.games.ds9 import DEMO_FILLER
from firmware.ui.games.setting import stack
from firmware.ui.par import sheet_for_config
from tests.ui.set_round import OpenRound, hands, results, scores, ui

GAME = "double-super-9"


def tags(seat_view):
    return {h.label: h.result.label for h in seat_view.hands if h.result}


def test_the_cards_wait_in_front_and_back_with_the_dice_and_the_position_they_pick():
    r = OpenRound(ui(GAME))
    view = r.view()
    seat = view.felt.seats[0]
    assert hands(seat) == {"FRONT": ["6s", "5d"], "BACK": ["3h", "5c"]}           # dealt order, two and two
    assert scores(seat) == {"FRONT": "1 point, 6 high", "BACK": "8 points, 5 high"}
    assert view.felt.dealer.hidden == 4 and view.felt.dealer.label == "BANKER (THE HOUSE)"
    dice = view.felt.dice
    assert dice.faces == (2, 3, 5) and dice.sides == 6
    assert dice.note == ("Dice 2 + 3 + 5 = 10, counted from the banker (position 8) as 1: position 1 is dealt "
                         "to first and acts first.")
    marks = {m.position: (m.label, m.state, m.first) for m in dice.positions}
    assert marks[1] == ("1", "player", True) and marks[8] == ("B", "dealer", False)
    assert [b.name for b in view.chrome.buttons] == ["button.house_way", "button.reset", "button.set_hand"]


def test_a_foul_is_refused_and_the_house_way_is_shown_then_sent():
    r = OpenRound(ui(GAME))
    r.act("move", 1, 0)                                      # 6s to BACK: three cards there
    assert not {b.name: b.enabled for b in r.view().chrome.buttons}["button.set_hand"]
    assert r.act("set") is None
    assert r.view().felt.seats[0].note == "Each hand holds exactly 2 cards: move a card back"
    r.act("move", 1, 3)                                      # 5c to FRONT: FRONT 5 5 (a pair), BACK 6 3
    seat = r.view().felt.seats[0]
    assert hands(seat) == {"FRONT": ["5d", "5c"], "BACK": ["6s", "3h"]}
    assert scores(seat) == {"FRONT": "Pair 5-5", "BACK": "SUPER 9, 6 high"}
    assert r.act("set") is None
    assert r.view().felt.seats[0].note == "Not allowed: the BACK hand must rank at least as high as the FRONT hand"
    with pytest.raises(DecisionError, match="the BACK must rank at least as high"):
        r.kernel.decide(1, "set:5d 5c|6s 3h")
    r.act("house_way")
    seat = r.view().felt.seats[0]
    assert hands(seat) == {"FRONT": ["6s", "3h"], "BACK": ["5d", "5c"]}
    assert r.act("set") == ("decide", {"seat": 1, "action": "house-way"})
    r.act("reset")
    r.act("move", 1, 1)
    r.act("move", 1, 2)                                      # the same setting by hand
    command = r.act("set")
    assert command == ("decide", {"seat": 1, "action": "set:6s 3h|5d 5c"}) and command[1]["action"] in r.request()[
        "actions"]
    frame = r.gui.screen().render(pygame.Surface((1920, 1080)), r.view())
    assert frame.hit("spot.1.card.1").action == UiAction("game", ("move", 1, 1))


def test_twin_cards_from_the_multi_deck_shoe_are_set_and_sent():
    gui = ui(GAME)
    cards = stack(dealing_order(dice_position(10, 8)), {1: "6s 6s 3h 3h", 8: "5s 5h 2d 6c"}, DEMO_FILLER, 4)
    r = OpenRound(gui, cards, dice=(2, 3, 5))
    r.act("move", 1, 1)
    r.act("move", 1, 2)                                      # FRONT 6s 3h, BACK 6s 3h: equal, allowed
    assert r.act("set") == ("decide", {"seat": 1, "action": "set:6s 3h|6s 3h"})
    frame = gui.screen().render(pygame.Surface((1280, 720)), r.view())
    assert {f"spot.1.card.{i}" for i in range(4)} <= set(frame.regions)   # each twin its own target


def test_the_round_beat_by_beat_from_its_record():
    gui = ui(GAME)
    d = gui.demo
    record = play_round(gui.ctx, d.cards, d.wagers, dice=d.dice, decisions=d.decisions)
    beats = gui.timeline(record)
    assert [b.kind for b in beats] == ["dice", "dealer", "spot", "settle"]

    def felt(i):
        return gui.felt(wagers={}, record=record, beat=beats[i], progress=1.0, betting=False)

    assert felt(0).dealer.hidden == 4 and results(felt(0).seats[0]) == {} and tags(felt(0).seats[0]) == {}
    dealer = felt(1).dealer
    assert hands(dealer) == {"FRONT": ["2d", "6c"], "BACK": ["5s", "5h"]}
    assert beats[1].caption == "The banker's hand, set the house way: FRONT 8 points, 6 high and BACK Pair 5-5"
    spot = felt(2).seats[0]
    assert tags(spot) == {"FRONT": "WIN", "BACK": "COPY"} and results(spot) == {"bet": ("win", "19")}
    assert beats[2].caption == "Spot 1: FRONT wins, BACK is a copy: your bet wins (less $0.01 commission)"
    assert beats[-1].caption == "You win $0.19"


def test_each_spot_in_action_order_from_the_dice_position():
    gui = ui(GAME, {}, seats=3)
    # Dice 1 + 1 + 2 = 4 from the banker at 8: position 3 first; the action order is 3, 1, 2.
    order = dealing_order(dice_position(4, 8))
    cards = stack(order, {1: "6s 3h 5d 5c", 2: "Ad Ac 2s 2h", 3: "4s 4h 6d 2c", 8: "5s 5h 2d 6c"}, DEMO_FILLER, 4)
    wagers = {1: {"bet": 10}, 2: {"bet": 10}, 3: {"bet": 20}}
    record = play_round(gui.ctx, cards, wagers, dice=(1, 1, 2))
    assert record["action_order"] == [3, 1, 2]
    beats = gui.timeline(record)
    spots = [b for b in beats if b.kind == "spot"]
    assert [b.caption.split(":")[0] for b in spots] == ["Spot 3", "Spot 1", "Spot 2"]
    first = gui.felt(wagers={}, record=record, beat=spots[0], progress=1.0, betting=False)
    settled = {s.seat: results(s) for s in first.seats}
    assert settled[1] == {} and settled[2] == {} and settled[3]["bet"][0] in ("win", "lose", "push")
    view = table_view(gui, status_doc(GAME, 2000), BetSlip(gui.ctx.limits, gui.ctx.chips), record=record)
    frame = gui.screen().render(pygame.Surface((1280, 720)), view)
    boxes = [frame.regions[f"spot.{s}"] for s in (1, 2, 3)]
    assert all(a.right <= b.x for a, b in zip(boxes, boxes[1:], strict=False))
    assert min(t.size for t in frame.texts) >= 18


def test_the_pay_table_and_the_hand_ranking():
    gui = ui(GAME)
    sheet = sheet_for_config(demo_config(GAME), GAME, gui.ctx.options)
    page = gui.paytable(sheet)
    assert page.pages[0][0].rows[1] == ("BET", "1 to 1, less 5%", "96.82%")
    showdown = dict(page.pages[0][1].rows[1:])
    assert showdown["Both win"] == "wins 1 to 1" and showdown["One wins, one loses"] == "push"
    assert showdown["One copy, one loses"] == "loses" and "exact" in page.footer
    cheaper = ui(GAME, {"commission": 4})
    assert cheaper.paytable(None).pages[0][0].rows[1] == ("BET", "1 to 1, less 4%", "not computed")
    ranking = gui.help(sheet).pages[1][0].rows
    assert ranking[1] == ("1", "Pair 6-6") and ranking[6] == ("6", "Pair A-A") and ranking[7] == ("7", "9 points (SUPER 9)")
    assert "12 decks of only aces to sixes" in gui.help(sheet).pages[0][0].paragraphs[0]


def test_betting_on_the_table():
    gui = ui(GAME)
    view = table_view(gui, status_doc(GAME, 2000), BetSlip(gui.ctx.limits, gui.ctx.chips, link=gui.link))
    areas = view.felt.seats[0].areas
    assert [(a.wager, a.enabled) for a in areas] == [("bet", True)]
    assert view.felt.dice.faces == () and view.felt.dice.note.startswith("Three dice are rolled when you deal")
    assert gui.check_slip({}) == "Place a bet first" and gui.check_slip({1: {"bet": 5}}) is None
    banked = ui(GAME, {"banking": "player", "collection": 1}, seats=2)
    assert banked.link({1: {"bank": 20}, 2: {"bet": 10}}) == {1: {"bank": 20, "collection": 1},
                                                             2: {"bet": 10, "collection": 1}}


def test_the_spot_set_first_is_the_one_the_dice_chose():
    # Dice 1 + 1 + 2 = 4 from the banker at 8: position 3 is dealt to first and acts first, then 1, 2.
    gui = ui(GAME, {}, seats=3)
    cards = stack(dealing_order(dice_position(4, 8)), {1: "6s 3h 5d 5c", 2: "Ad Ac 2s 2h", 3: "4s 4h 6d 2c",
                                                     8: "5s 5h 2d 6c"}, DEMO_FILLER, 4)
    r = OpenRound(gui, cards=cards, wagers={1: {"bet": 10}, 2: {"bet": 10}, 3: {"bet": 20}}, dice=(1, 1, 2))
    seats = {s.seat: s for s in r.view().felt.seats}
    assert seats[3].highlight and not seats[1].highlight and not seats[2].highlight
    assert seats[1].note == seats[2].note == "Set after SPOT 3: you may move its cards now"
    r.kernel.decide(3, "house-way")
    seats = {s.seat: s for s in r.view().felt.seats}
    assert seats[1].highlight and seats[3].note == "Set: waiting for the other spots"
    assert {h.label: h.score for h in seats[3].hands} == {"FRONT": "8 points, 6 high", "BACK": "Pair 4-4"}
