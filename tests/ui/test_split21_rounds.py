"""Split 21 Stud on screen: setting the five cards by touch while the real kernel waits (each
touch, HOUSE WAY, RESET, SET HAND and what it sends, a foul refused), the round shown beat by beat
from its record, the die and what it decides, the bets, and the pay table from options and PAR."""

from __future__ import annotations

import pygame
import pytest

from firmware.games.errors import DecisionError
from firmware.ui.actions import UiAction
from firmware.ui.betting import BetSlip
from firmware.ui.builders import table_view
from firmware.ui.demo import play_round, status_doc
from firmware.ui.games.split21 import DEMO_FILLER, stack
from firmware.ui.par import sheet_for_config
from tests.ui.set_round import OpenRound, hands, results, scores, ui

GAME = "split21-stud"


def test_the_cards_wait_in_the_two_hands_with_the_die_and_what_it_decides():
    r = OpenRound(ui(GAME))
    view = r.view()
    felt = view.felt
    seat = felt.seats[0]
    # Dealt Kd 9s As 5h 6c: the first two are HIGH until the player moves a card.
    assert hands(seat) == {"HIGH": ["Kd", "9s"], "LOW": ["As", "5h", "6c"]}
    assert scores(seat) == {"HIGH": "19", "LOW": "12"} and seat.summary == "Poker: High card"
    assert seat.highlight and seat.note == "Touch a card to move it to the other hand, then SET HAND"
    assert felt.dealer.hidden == 5 and felt.dealer.hands == ()                # the dealer's cards face down
    # Die 3: dealing starts at position 4; the house is position 8.
    assert felt.dice.faces == (3,) and felt.dice.sides == 8
    assert felt.dice.note == "Die 3: dealing starts at position 4. The house's hand is position 8."
    marks = {m.position: (m.label, m.state, m.first) for m in felt.dice.positions}
    assert marks[4] == ("4", "", True) and marks[8] == ("D", "dealer", False) and marks[1] == ("1", "player", False)
    assert [b.name for b in view.chrome.buttons] == ["button.house_way", "button.reset", "button.set_hand"]
    assert view.chrome.message == "Your decision, please: 20 s left"
    assert {a.wager: a.amount for a in seat.areas} == {"ante": 10, "low": 10, "high": 20}
    assert not any(a.enabled for a in seat.areas)                            # no betting while setting


def test_touching_cards_moves_them_and_set_hand_sends_the_kernels_action():
    r = OpenRound(ui(GAME))
    frame = r.gui.screen().render(pygame.Surface((1280, 720)), r.view())
    assert frame.hit("spot.1.card.2").action == UiAction("game", ("move", 1, 2))
    assert r.act("move", 1, 2) is None                                       # As to HIGH
    assert hands(r.view().felt.seats[0]) == {"HIGH": ["Kd", "9s", "As"], "LOW": ["5h", "6c"]}
    assert r.act("move", 1, 1) is None                                       # 9s to LOW
    seat = r.view().felt.seats[0]
    assert hands(seat) == {"HIGH": ["Kd", "As"], "LOW": ["9s", "5h", "6c"]}
    assert scores(seat) == {"HIGH": "21 in two cards", "LOW": "20"}
    command = r.act("set")
    assert command == ("decide", {"seat": 1, "action": "set:Kd As|9s 5h 6c"})
    assert command[1]["action"] in r.request()["actions"]                    # the kernel's own string
    r.kernel.decide(1, command[1]["action"])
    record = r.kernel.record()
    assert record["seats"][0]["high"] == ["Kd", "As"] and not record["seats"][0]["house_way"]


def test_a_foul_setting_is_refused_on_the_spot_and_changes_nothing():
    r = OpenRound(ui(GAME))
    for index in (0, 1, 3, 4):                     # HIGH 5h 6c (11), LOW Kd 9s As (20): HIGH below LOW
        r.act("move", 1, index)
    seat = r.view().felt.seats[0]
    assert hands(seat) == {"HIGH": ["5h", "6c"], "LOW": ["Kd", "9s", "As"]}
    assert r.act("set") is None
    seat = r.view().felt.seats[0]
    assert seat.note == "Not allowed: the HIGH hand must rank at least as high as the LOW hand"
    assert hands(seat) == {"HIGH": ["5h", "6c"], "LOW": ["Kd", "9s", "As"]}
    assert r.kernel.pending()                                                # nothing was sent
    with pytest.raises(DecisionError, match="must rank at least as high"):   # the kernel agrees
        r.kernel.decide(1, "set:5h 6c|Kd 9s As")
    r.act("move", 1, 0)                                                      # a touch clears the note
    assert r.view().felt.seats[0].note.startswith("Touch a card")


def test_a_hand_of_one_card_cannot_be_set():
    r = OpenRound(ui(GAME))
    r.act("move", 1, 0)                                                      # HIGH holds 9s alone
    view = r.view()
    assert hands(view.felt.seats[0])["HIGH"] == ["9s"]
    assert not {b.name: b.enabled for b in view.chrome.buttons}["button.set_hand"]
    assert r.act("set") is None
    assert r.view().felt.seats[0].note == "Each hand holds 2 or 3 cards: move a card back"


def test_house_way_is_shown_before_it_is_sent_and_reset_puts_the_cards_back():
    r = OpenRound(ui(GAME))
    assert r.act("house_way") is None
    seat = r.view().felt.seats[0]
    assert hands(seat) == {"HIGH": ["Kd", "As"], "LOW": ["9s", "5h", "6c"]}  # the game's house way
    assert all(c.outline for h in seat.hands for c in h.cards)
    assert seat.note.startswith("The house way is shown")
    assert r.act("set") == ("decide", {"seat": 1, "action": "house-way"})
    r.act("reset")
    assert hands(r.view().felt.seats[0]) == {"HIGH": ["Kd", "9s"], "LOW": ["As", "5h", "6c"]}
    r.act("house_way")
    r.act("move", 1, 2)                                                      # changed: no longer the house way
    assert r.act("set") is None                                              # HIGH Kd, LOW 9s As 5h 6c: 1 card
    r.gui.round_started()                                                    # a new round forgets it all
    assert hands(r.view().felt.seats[0]) == {"HIGH": ["Kd", "9s"], "LOW": ["As", "5h", "6c"]}


def test_the_round_beat_by_beat_from_its_record():
    gui = ui(GAME)
    d = gui.demo
    record = play_round(gui.ctx, d.cards, d.wagers, dice=d.dice, decisions=d.decisions)
    beats = gui.timeline(record)
    assert [b.kind for b in beats] == ["dice", "dealer", "ante", "hands", "settle"]

    def felt(i):
        return gui.felt(wagers={}, record=record, beat=beats[i], progress=1.0, betting=False)

    first = felt(0)
    assert beats[0].caption == "Die 3: dealing starts at position 4. The house's hand is position 8."
    assert first.dice.faces == (3,) and first.dealer.hidden == 5 and first.dealer.hands == ()
    assert hands(first.seats[0]) == {"HIGH": ["Kd", "As"], "LOW": ["9s", "5h", "6c"]}
    assert results(first.seats[0]) == {}
    dealer = felt(1).dealer
    assert hands(dealer) == {"HIGH": ["Qh", "7c", "4s"], "LOW": ["Qd", "3h"]}
    assert scores(dealer) == {"HIGH": "21", "LOW": "13"} and dealer.summary == "Poker: Pair - set the house way"
    assert beats[1].caption == "The dealer's hand, set the house way: HIGH 21 and LOW 13"
    ante = felt(2).seats[0]
    assert results(ante) == {"ante": ("lose", "")}                       # the poker hand is paid first
    assert beats[2].caption == "ANTE: your High card against the dealer's Pair"
    both = felt(3).seats[0]
    assert results(both) == {"ante": ("lose", ""), "high": ("win", "40"), "low": ("win", "20")}
    assert {h.label: h.result.label for h in both.hands} == {"HIGH": "WIN", "LOW": "WIN"}
    assert beats[-1].caption == "You win $0.60"


def test_the_meters_wait_for_the_end_of_the_round():
    gui = ui(GAME)
    d = gui.demo
    record = play_round(gui.ctx, d.cards, d.wagers, dice=d.dice, decisions=d.decisions)
    from firmware.ui.playback import Playback

    playback = Playback(gui.timeline(record))
    playback.advance(0.1)
    status = status_doc(GAME, 2000 - 40 + 60)
    view = table_view(gui, status, BetSlip(gui.ctx.limits, gui.ctx.chips, link=gui.link), record=record,
                      playback=playback)
    meters = {m.name: m.detail for m in view.chrome.meters}
    assert meters == {"meter.credit": "1,960 credits", "meter.bet": "40 credits", "meter.win": "0 credits"}
    playback.skip()
    view = table_view(gui, status, BetSlip(gui.ctx.limits, gui.ctx.chips), record=record, playback=playback)
    assert {m.name: m.detail for m in view.chrome.meters}["meter.win"] == "60 credits"


def test_a_foul_hand_accepted_with_foul_setting_lose_loses_every_wager():
    gui = ui(GAME, {"foul_setting": "lose", "jackpot": {"enabled": False}})
    r = OpenRound(gui)
    for index in (0, 1, 3, 4):
        r.act("move", 1, index)
    command = r.act("set")                         # listed by the kernel now: sent as it is
    assert command == ("decide", {"seat": 1, "action": "set:5h 6c|Kd 9s As"})
    d = gui.demo
    record = play_round(gui.ctx, d.cards, d.wagers, dice=d.dice, decisions=((1, command[1]["action"]),))
    beats = gui.timeline(record)
    assert beats[2].kind == "foul" and beats[2].caption == "A foul hand loses every wager"
    seat = gui.felt(wagers={}, record=record, beat=None, progress=1.0, betting=False).seats[0]
    assert results(seat) == {"ante": ("lose", ""), "high": ("lose", ""), "low": ("lose", "")}
    assert seat.summary == "Poker: High card - FOUL: every wager loses"


def test_the_jackpot_won_and_its_pay_table_without_a_par_figure():
    gui = ui(GAME, {"jackpot": {"enabled": True}})
    # Spot 1: As Ad Ks Kd Qc (two pair) against the house's 3h 4s 6c 7c Jd; die 8: dealing from 1.
    cards = stack(8, {1: "As Ad Ks Kd Qc", 8: "3h 4s 6c 7c Jd"}, DEMO_FILLER)
    wagers = {1: {"ante": 10, "low": 10, "high": 20, "jackpot": 10}}
    record = play_round(gui.ctx, cards, wagers, dice=(8,))
    beats = gui.timeline(record)
    assert beats[-2].kind == "jackpot" and beats[-2].caption == "The JACKPOT is won with Two pair"
    seat = gui.felt(wagers={}, record=record, beat=None, progress=1.0, betting=False).seats[0]
    assert results(seat)["jackpot"] == ("win", "9")                # its own 10 back less 5% (rounded up)
    assert "spot.1.jackpot" in gui.screen().render(pygame.Surface((1280, 720)), table_view(
        gui, status_doc(GAME, 2000), BetSlip(gui.ctx.limits, gui.ctx.chips, link=gui.link))).regions
    # One spot with the jackpot: the exact sheet (house banking) covers every wager.
    sheet = sheet_for_config(_cfg(gui), GAME, gui.ctx.options)
    page = gui.paytable(sheet)
    rows = page.pages[0][0].rows
    assert rows[1:] == (("ANTE", "1 to 1", "100.00%"), ("HIGH", "1 to 1", "100.00%"),
                        ("LOW", "1 to 1", "99.29%"), ("JACKPOT", "the pot, less 5%", "45.00%"))
    assert "exact" in page.footer
    page = gui.paytable(None)                       # no sheet for the configuration: the pays still show
    assert page.pages[0][0].rows[1:][-1] == ("JACKPOT", "the pot, less 5%", "not computed")
    assert "computed at start-up" in page.footer


def _cfg(gui):
    from firmware.config import Config

    return Config.model_validate({"games": {"enabled": [GAME], "default": GAME, "seats": 1,
                                            "options": {GAME: gui.ctx.options.to_json()}}})


def test_the_pay_table_comes_from_the_options_and_the_par_sheet():
    gui = ui(GAME)
    sheet = sheet_for_config(_cfg(gui), GAME, gui.ctx.options)
    rows = gui.paytable(sheet).pages[0][0].rows
    assert rows[1] == ("ANTE", "1 to 1", "100.00%") and rows[3] == ("LOW", "1 to 1", "99.29%")
    assert "exact" in gui.paytable(sheet).footer
    paid = ui(GAME, {"high_pays": "3:2", "low_pays": "2:1", "high_multiple": 0, "jackpot": {"enabled": False}})
    rows = paid.paytable(None).pages[0][0].rows
    assert rows[2] == ("HIGH", "3 to 2", "not computed") and rows[3] == ("LOW", "2 to 1", "not computed")
    notes = " ".join(paid.paytable(None).pages[0][1].paragraphs)
    assert "times LOW" not in notes                                          # high_multiple = 0
    help_text = " ".join(p for s in gui.help(sheet).pages[0] for p in s.paragraphs)
    assert "2 times its amount" in help_text and "will not accept" in help_text


def test_high_follows_low_on_the_slip_and_the_spot_needs_ante_and_low():
    gui = ui(GAME)
    assert gui.link({1: {"ante": 5, "low": 5}}) == {1: {"ante": 5, "low": 5, "high": 10}}
    assert gui.link({1: {"ante": 5, "high": 10}}) == {1: {"ante": 5}}
    assert gui.check_slip({1: {"ante": 5}}) == "Spot 1 needs ANTE and LOW bets (HIGH follows LOW)"
    assert gui.check_slip({1: {"ante": 5, "low": 5, "high": 10}}) is None
    slip = BetSlip(gui.ctx.limits, gui.ctx.chips, link=gui.link)
    view = table_view(gui, status_doc(GAME, 2000), slip)
    areas = {a.wager: a for a in view.felt.seats[0].areas}
    assert areas["ante"].enabled and areas["low"].enabled and not areas["high"].enabled and areas["high"].linked
    assert areas["high"].label == "HIGH (x2)"
    assert view.felt.dice.faces == () and view.felt.dice.note.startswith("The die is rolled when you deal")


def test_with_three_spots_the_spot_after_the_one_setting_says_so():
    gui = ui(GAME, {"jackpot": {"enabled": False}}, seats=3)
    d = gui.demo
    cards = stack(3, {1: "Kd 9s As 5h 6c", 2: "Ac Kc Qc Jc Js", 3: "Ad Kh Qs Jd Jh", 8: "Qh Qd 7c 4s 3h"}, DEMO_FILLER)
    wagers = {s: dict(d.wagers[1]) for s in (1, 2, 3)}
    r = OpenRound(gui, cards=cards, wagers=wagers, dice=(3,))
    seats = {s.seat: s for s in r.view().felt.seats}
    assert seats[1].highlight and seats[1].note == "Touch a card to move it to the other hand, then SET HAND"
    for s in (2, 3):
        assert not seats[s].highlight and seats[s].note == "Set after SPOT 1: you may move its cards now"
    assert [b.name for b in r.view().chrome.buttons] == ["button.house_way", "button.reset", "button.set_hand"]
    # Spot 1 set (A K HIGH, 9 5 6 LOW): it keeps its two hands on the table; spot 2 is next.
    r.kernel.decide(1, "set:Kd As|9s 5h 6c")
    seats = {s.seat: s for s in r.view().felt.seats}
    assert hands(seats[1]) == {"HIGH": ["Kd", "As"], "LOW": ["5h", "6c", "9s"]}
    assert scores(seats[1]) == {"HIGH": "21 in two cards", "LOW": "20"}
    assert seats[1].note == "Set: waiting for the other spots" and not seats[1].highlight
    assert seats[2].highlight and seats[3].note == "Set after SPOT 2: you may move its cards now"
    r.kernel.decide(2, "house-way")                                          # by time-out, or asked for
    assert len(hands(next(s for s in r.view().felt.seats if s.seat == 2))["HIGH"]) in (2, 3)
