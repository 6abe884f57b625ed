"""A live table's screens (issue 24) at 1920 x 1080, headless: the dealer's screen and a station's
table view, drawn from snapshots of real kernel rounds (tests/ui/table_round.py: seven seats, a war
pool contested by three tied seats, a misdeal), against golden frames; the own seat's highlight,
the dealer's buttons per phase and what a touch on them calls, and the app's switch to the table
view when the terminal's status has a ``"table"`` entry."""

from __future__ import annotations

from concurrent.futures import Future

import pygame
import pytest

from firmware.errors import EgmError
from firmware.ui import theme
from firmware.ui.betting import BetSlip
from firmware.ui.games import GAME_UIS, game_ui
from firmware.ui.layout import SUPPORTED, Scaler
from firmware.ui.livetable import draw as table_draw
from firmware.ui.livetable.dealer import ACTION_PHASES, DealerConsole, run_dealer_screen
from firmware.ui.livetable.pool import pool_view
from firmware.ui.livetable.station import StationScreen, station_view
from firmware.ui.money import Money
from tests.ui.conftest import colour_at
from tests.ui.golden import compare
from tests.ui.table_round import pool_record, snapshot, table_ctx
from tests.ui.test_layout_sizes import assert_laid_out

SIZE = (1920, 1080)
FRAME = 1 / 30


class Actions:
    """The controller's operator methods, recorded (``refuse``: the next call raises)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.refuse = ""

    def _call(self, *what: str) -> None:
        if self.refuse:
            raise EgmError(self.refuse)
        self.calls.append(what)

    def open_betting(self) -> None:
        self._call("open_betting")

    def close_betting(self) -> None:
        self._call("close_betting")

    def deal(self) -> None:
        self._call("deal")

    def declare_misdeal(self, reason: str) -> None:
        self._call("declare_misdeal", reason)


@pytest.fixture(scope="module")
def record():
    return pool_record(table_ctx())


@pytest.fixture(scope="module")
def misdeal_record():
    """Spots 1 and 2 tie the dealer and tie again on the one war card the options allow: the war
    ends in the rules' misdeal, every wager returned."""
    ctx = table_ctx(options={"pool": {"enabled": True}, "max_war_steps": 1})
    from firmware.ui.demo import play_round

    return play_round(ctx, "5h 5d 5c Kh Kd Ks 2h 2d 2c", {1: {"bac": 10, "war": 10}, 2: {"bac": 10, "war": 10}},
                      round_id="T1-000043")


def settled(record, **more):
    return snapshot(record, phase="settled", messages=("Round settled",), **more)


def dealer_frame(snap, actions=None, size=SIZE):
    console = DealerConsole(lambda: snap, actions or Actions(), size=size)
    frame = console.step(FRAME)
    return console, frame


def station_frame(snap, own_seat=3, link="up", betting=False, game="baccarat-war", status_more=None, size=SIZE):
    ctx = table_ctx(game) if game != "baccarat-war" else table_ctx()
    gui = game_ui(ctx)
    slip = BetSlip(ctx.limits, ctx.chips, link=gui.link)
    status = {"state": "IDLE", "credits": 1500, "credits_cents": 1500,
              "table": {**snap, "own_seat": own_seat, "link": link, **(status_more or {})}}
    surface = pygame.Surface(size)
    frame = StationScreen().render(surface, station_view(gui, status, slip, betting=betting))
    return surface, frame


# --- the pool among the players (FIGS. 9-14) ---------------------------------------------------------
def test_the_pool_shows_the_tiers_the_contest_and_the_payout_from_the_record(record):
    pool = pool_view(settled(record), record, Money())
    assert [(t.score, t.hands, t.tied, t.note) for t in pool.tiers] == [
        ("Score 9", "SEAT 6", False, "OUT"),
        ("Score 8", "SEAT 2, SEAT 3, SEAT 5", True, "CONTESTS"),
        ("Score 3", "SEAT 1, SEAT 7, DEALER", True, "OUT")]
    assert pool.summary == ("Pot 60 credits", "SEAT 2 wins 57 credits", "Commission 3 credits")
    assert pool.columns == ("SEAT 2", "SEAT 3", "SEAT 5")
    out = [[c.out for c in step.cells] for step in pool.steps]
    assert out == [[False, False, True], [False, False, False], [False, True, False]]
    assert pool.steps[-1].cells[0].winner and pool.winner_column == 0
    # Before the settlement: the pot gathered so far.
    betting = snapshot(None, phase="betting", bets={1: {"bac": 10, "war_pool": 10}, 2: {"bac": 5, "war_pool": 5}})
    assert pool_view(betting, None, Money()).summary == ("Pot 15 credits", "2 in the pool")
    assert pool_view(snapshot(None, phase="betting", bets={1: {"bac": 10}}), None, Money()) is None


# --- the dealer's screen ----------------------------------------------------------------------------
def test_dealer_screen_matches_its_golden_frame(record, tmp_path):
    console, frame = dealer_frame(settled(record))
    compare(console.surface, "table-dealer-1920x1080", tmp_path)
    for n in range(1, 8):
        assert f"seat.{n}" in frame.regions
    pool = " | ".join(frame.texts_in("pool"))
    assert "SEAT 2, SEAT 3, SEAT 5" in pool and "CONTESTS" in pool and "Commission 3 credits" in pool
    assert "WIN 87" in " | ".join(frame.texts_in("seat.2"))


def test_dealer_prompt_is_big_and_buttons_follow_the_phase(record):
    snap = snapshot(record, phase="dealing", dealt=1, prompt="Deal the first card")
    _, frame = dealer_frame(snap)
    prompt = [t for t in frame.texts if t.text == "Deal the first card"]
    assert prompt and prompt[0].size == theme.BANNER
    offered = {"closed": {"open"}, "betting": {"close"}, "dealing": {"deal", "misdeal"}, "decisions": {"misdeal"},
               "showdown": {"misdeal"}, "settled": {"open"}, "misdeal": {"open"}, "paused": set()}
    for phase, actions in offered.items():
        _, frame = dealer_frame(snapshot(record if phase != "closed" else None, phase=phase))
        assert {h.name for h in frame.hits} == {f"button.table_{a}" for a in actions}, phase
        assert set(ACTION_PHASES) == {f"table_{a}" for a in ("open", "close", "deal", "misdeal")}


def touch(console, name):
    hit = console.frame.hit(name)
    console.touch(*console.scaler.point(*hit.rect.center))


def test_a_touch_on_the_dealers_buttons_calls_the_controller(record):
    actions = Actions()
    console, _ = dealer_frame(snapshot(None, phase="closed"), actions)
    touch(console, "button.table_open")
    assert actions.calls == [("open_betting",)]
    region = console.frame.regions["button.table_close"]           # disabled while closed
    console.touch(*console.scaler.point(*region.center))
    assert actions.calls == [("open_betting",)]
    live = {"snap": snapshot(record, phase="dealing", dealt=1, prompt="Misread: declare a misdeal")}
    console = DealerConsole(lambda: live["snap"], actions)
    console.step(FRAME)
    touch(console, "button.table_misdeal")
    assert actions.calls[-1] == ("declare_misdeal", "declared by the dealer at the table")
    actions.refuse = "no round to deal"
    touch(console, "button.table_deal")
    frame = console.step(FRAME)
    assert "Not possible now: no round to deal" in " | ".join(frame.texts_in("messages"))


def test_a_click_in_the_dealers_window_calls_the_controller():
    actions = Actions()
    console, frame = dealer_frame(snapshot(None, phase="betting"), actions)
    pos = console.scaler.point(*frame.hit("button.table_close").rect.center)
    console.step(FRAME, [pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=pos)])
    assert actions.calls == [("close_betting",)]


def test_the_pool_names_a_dealers_win_a_single_winner_and_a_pool_misdeal(record):
    def summary(**pool):
        changed = {**record, "war_pool": {**record["war_pool"], **pool}}
        return pool_view(settled(changed), changed, Money()).summary

    assert summary(winner="dealer") == ("Pot 60 credits", "The dealer wins the pot")
    assert summary(contestants=[6], winner=6, steps=0, eliminated=[]) == (
        "Pot 60 credits", "SEAT 6 wins 57 credits", "Commission 3 credits", "No tie: the highest hand takes the pot")
    assert summary(winner=None, misdeal=True) == ("Pot 60 credits", "Pool misdeal: the antes are returned")


def test_run_dealer_screen_draws_until_stopped(record):
    frames = []

    def provider():
        frames.append(1)
        return settled(record)

    console = run_dealer_screen(provider, Actions(), headless=True, stop=lambda: len(frames) >= 2, fps=1000)
    assert len(frames) == 2 and "pool" in console.frame.regions


def test_a_misdeal_shows_on_the_dealers_screen(misdeal_record):
    assert misdeal_record["wars"]["misdeal"]
    snap = snapshot(misdeal_record, phase="misdeal", prompt="Clear the table: every wager is returned",
                    messages=("Misdeal: the war did not end, every wager returned",))
    _, frame = dealer_frame(snap)
    assert "MISDEAL" in frame.texts_in("phase")
    assert "Misdeal: the war did not end, every wager returned" in frame.texts_in("messages")
    assert {h.name for h in frame.hits} == {"button.table_open"}


# --- a station's table view -------------------------------------------------------------------------
def test_station_screen_matches_its_golden_frame(record, tmp_path):
    surface, frame = station_frame(settled(record))
    compare(surface, "table-station-1920x1080", tmp_path)
    assert "YOU" in frame.texts_in("seat.3")
    assert "WIN 87" in frame.texts_in("seat.2.result")
    assert "Table link up" in frame.texts_in("link")


def frame_colour(surface, frame, name):
    r = frame.regions[name]
    return colour_at(surface, Scaler(*SIZE), r.x + 2, r.y + r.h // 2)


@pytest.mark.parametrize("own", [3, 5])
def test_the_own_seat_is_highlighted_and_no_other(record, own):
    surface, frame = station_frame(settled(record), own_seat=own)
    for n in range(1, 8):
        framed = frame_colour(surface, frame, f"seat.{n}") == theme.ACCENT
        assert framed == (n == own), f"seat {n}"
        assert (f"seat.{n}.you" in frame.regions) == (n == own)


def test_the_highlight_check_fails_when_the_frame_is_not_drawn(record, monkeypatch):
    """The check above can fail: drawn without the own seat's frame, seat 3 looks like the others."""
    monkeypatch.setattr(table_draw, "OWN_FRAME", 2)
    original = table_draw.draw_seat

    def plain(p, r, seat, *, card_h):
        original(p, r, seat.__class__(**{**{f: getattr(seat, f) for f in seat.__slots__}, "own": False}),
                 card_h=card_h)

    monkeypatch.setattr(table_draw, "draw_seat", plain)
    surface, frame = station_frame(settled(record), own_seat=3)
    assert frame_colour(surface, frame, "seat.3") != theme.ACCENT


def test_the_station_shows_the_clock_and_a_link_down(record):
    snap = snapshot(None, phase="betting", bets={1: {"bac": 10, "war": 10}}, betting_left_s=3.2)
    _, frame = station_frame(snap, link="down", betting=False)
    assert "Bets close in 4 s" in frame.texts_in("clock")
    assert "Link down: waiting for the table" in frame.texts_in("banner")
    assert "button.deal" not in {h.name for h in frame.hits}
    _, frame = station_frame(snap, own_seat=None)                  # joined, no seat yet
    assert frame.texts_in("bets") == ["Waiting for a seat at the table"]
    assert not any(n.endswith(".you") for n in frame.regions)


def test_decision_buttons_when_the_own_seat_is_deciding():
    ctx = table_ctx("three-card-poker")
    from firmware.ui.demo import play_round

    record = play_round(ctx, "As Ks Qs 2h 3d 5c 9h 9d 4c Jc 7d 8s", {1: {"ante": 10}, 2: {"ante": 10}, 3: {"ante": 10}})
    snap = snapshot(record, phase="decisions", game="three-card-poker", dealt=3, deciding=(3,))
    request = {"round_id": "T1-000042", "seat": 3, "kind": "play", "actions": ["play", "fold"], "default": "fold"}
    _, frame = station_frame(snap, game="three-card-poker", status_more={"decision": request})
    assert {"button.play", "button.fold"} <= {h.name for h in frame.hits}
    assert frame.hit("button.play").action.arg == (3, "play")
    assert "DECIDING" in frame.texts_in("seat.3.status")
    _, frame = station_frame(snapshot(record, phase="decisions", game="three-card-poker", dealt=3, deciding=(2,)),
                             game="three-card-poker", status_more={"decision": {**request, "seat": 2}})
    assert "button.play" not in {h.name for h in frame.hits}


# --- the app picks the table view -------------------------------------------------------------------
@pytest.fixture
def station_app(tmp_path):
    from firmware.cabinet.terminal import Devices, Terminal
    from firmware.cashless.vouchers import VoucherBook
    from firmware.ledger.ledger import Ledger
    from firmware.rng.service import RngService
    from firmware.ui.app import UiApp
    from firmware.ui.demo import demo_config

    ledger = Ledger.open(tmp_path / "state")
    terminal = Terminal(demo_config(), ledger, RngService.seeded(11), Devices(), VoucherBook(ledger, terminal_id="T1"))
    terminal.power_up()
    ledger.bill_in(1500)
    table: dict = {}
    submitted: list = []
    plain = terminal.status

    def status():
        doc = plain()
        return {**doc, "table": table["snap"]} if table else doc

    def submit(op, **fields):
        submitted.append((op, fields))
        done: Future = Future()
        done.set_result({"ok": True})
        return done

    terminal.status = status
    terminal.submit = submit
    app = UiApp(terminal, size=SIZE)
    app.step(FRAME)
    yield app, table, submitted
    ledger.close()


def click(app, name):
    hit = app.frame.hit(name)
    app.step(FRAME, [pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=app.scaler.point(*hit.rect.center))])


def test_the_app_switches_to_the_table_view_on_a_table_status_and_deal_places_the_bet(station_app, record):
    app, table, submitted = station_app
    assert "seat.1" not in app.frame.regions                      # the game's own table
    table["snap"] = {**snapshot(None, phase="betting", betting_left_s=5.0), "own_seat": 3, "link": "up"}
    app.step(FRAME)
    assert "seat.7" in app.frame.regions and "YOU" in app.frame.texts_in("seat.3")
    click(app, "spot.3.bac")
    click(app, "button.deal")
    assert submitted[-1] == ("play", {"wagers": {3: {"bac": 10, "war": 10}}})
    table["snap"] = {**settled(record), "own_seat": 3, "link": "up"}
    app.step(FRAME)
    assert "button.deal" not in {h.name for h in app.frame.hits}   # no window open
    assert "Commission 3 credits" in " | ".join(app.frame.texts_in("pool"))
    table.clear()
    app.step(FRAME)
    assert "seat.1" not in app.frame.regions


@pytest.mark.parametrize("size", SUPPORTED, ids=[f"{w}x{h}" for w, h in SUPPORTED])
def test_both_screens_lay_out_at_every_size(record, size):
    """The layout checks of every screen (test_layout_sizes.py) on the dealer's screen and a station's."""
    console, frame = dealer_frame(settled(record), size=size)
    assert_laid_out(console.surface, frame, size, banded=True)
    surface, frame = station_frame(settled(record), size=size)
    assert_laid_out(surface, frame, size, banded=True)


@pytest.mark.parametrize("game", sorted(GAME_UIS))
def test_every_games_bets_are_named_on_the_dealers_screen(game):
    """A table of any game: the seats' bets named as the game's own table names its areas."""
    gui = game_ui(table_ctx(game))
    wager = next(w for _, w in gui.bet_areas())
    _, frame = dealer_frame(snapshot(None, phase="betting", game=game, bets={2: {wager: 10}}))
    assert f"{gui.area_label(wager)} 10" in " ".join(frame.texts_in("seat.2.bets"))
    assert "Baccarat" not in " ".join(frame.texts_in("title")) or game == "baccarat-war"


def test_the_docs_images_are_written_by_their_command(tmp_path):
    from tests.ui.table_round import write_images

    for path in write_images(str(tmp_path)):
        assert pygame.image.load(path).get_size() == SIZE
