"""The service screens rendered headless from their demonstration states (what ``egm screenshot
service|recall|calibration`` draws), at 1920x1080 and 1280x720: the expected elements where the
layout puts them, their texts and pixels, no text under 18 px, and golden images (tolerance; the
rendered, golden and difference images saved on a failure)."""

from __future__ import annotations

import numpy as np
import pytest

from firmware.errors import EgmError
from firmware.games.base import Outcome
from firmware.ui import theme
from firmware.ui.layout import Scaler
from firmware.ui.service import screenshots
from firmware.ui.service.calibration import check_target
from firmware.ui.service.demo import recall_rounds
from firmware.ui.service.screenshots import render
from hal.calibration import targets
from tests.ui import golden
from tests.ui.conftest import SIZES, colour_at, region_pixels

GOLDEN_DIR = golden.GOLDEN.parent / "service" / "golden"


@pytest.fixture(scope="module")
def shots():
    return {(screen, size): render(screen, size) for size in SIZES
            for screen in screenshots.SCREENS + screenshots.EXTRA}


def texts(frame, region):
    return " | ".join(frame.texts_in(region))


@pytest.mark.parametrize("size", SIZES)
def test_every_service_screen_is_readable_at_both_sizes(shots, size):
    for screen in screenshots.SCREENS + screenshots.EXTRA:
        surface, frame = shots[screen, size]
        assert surface.get_size() == size
        assert frame.texts and min(t.size for t in frame.texts) >= theme.MIN_TEXT, screen
        for hit in frame.hits:                               # every button a fingertip can hit
            assert hit.rect.w >= 60 and hit.rect.h >= 30, (screen, hit.name, hit.rect)


@pytest.mark.parametrize("size", SIZES)
def test_the_service_menu_shows_the_technician_s_functions(shots, size):
    surface, frame = shots["service", size]
    names = {h.name for h in frame.hits}
    assert {"menu.meters", "menu.recall", "menu.diagnostics", "menu.calibration", "menu.config",
            "menu.software", "menu.ram_clear", "button.logout"} <= names
    assert "menu.attendant" not in names
    assert texts(frame, "menu.meters") == "METERS" and "TECHNICIAN" in texts(frame, "subtitle")
    actions = {h.name: h.action for h in frame.hits}
    assert (actions["menu.recall"].name, actions["menu.recall"].arg) == ("open", "recall")
    # A menu button is a lit button, its label readable on it.
    scaler = Scaler(*size)
    button = region_pixels(surface, scaler, frame.regions["menu.meters"].inset(30)).reshape(-1, 3)
    assert np.abs(button.mean(0) - np.array(theme.BUTTON)).max() < 40


@pytest.mark.parametrize("size", SIZES)
def test_the_recall_draws_the_fig_8_round_with_its_cards_and_outcomes(shots, size):
    surface, frame = shots["recall", size]
    scaler = Scaler(*size)
    assert "LAST 3 ROUNDS" in texts(frame, "table.recall.rounds")
    assert "Baccarat War" in texts(frame, "row.round.0") and "+54" in texts(frame, "row.round.0")
    # FIG. 8: spot Q 3 + war 10 6 against the dealer's 2 A + war 10 9.
    spot, dealer = frame.texts_in("round.seat.1"), frame.texts_in("round.dealer")
    for rank in ("Q", "3", "10", "6", "WAR"):
        assert rank in spot, (rank, spot)
    for rank in ("2", "A", "10", "9"):
        assert rank in dealer, (rank, dealer)
    # The war scores after each war card, labelled as on the table: spot 3 then 9, the dealer 3 then 2.
    assert spot[spot.index("WAR 3"):][:2] == ["WAR 3", "WAR 9"], spot
    assert dealer[dealer.index("WAR 3"):][:2] == ["WAR 3", "WAR 2"], dealer
    for who in ("round.seat.1", "round.dealer"):
        pixels = region_pixels(surface, scaler, frame.regions[who]).reshape(-1, 3).astype(int)
        face = np.all(np.abs(pixels - np.array(theme.CARD_FACE)) < 8, axis=1).mean()
        assert face > 0.15, (who, face)
    # The tags as the player saw them: what each wager paid to the credit meter, and their sum as WIN.
    assert "WIN 20" in texts(frame, "round.wager.1.bac.result")
    assert "PUSH 10" in texts(frame, "round.wager.1.war.result")
    assert "WIN 45" in texts(frame, "round.wager.1.tie.result")
    assert texts(frame, "round.wager.1.four_card.result") == "LOSE"
    assert "WIN (paid to the credit meter) 94 credits" in texts(frame, "round")
    # An outcome is its colour *and* its word *and* its shape: the tag is the win colour.
    tag = frame.regions["round.wager.1.bac.result"]
    assert colour_at(surface, scaler, tag.right - 8, tag.y + 3) == theme.OUTCOME_STYLES[Outcome.WIN].colour
    assert "Credits before 1,960 credits, after 2,014 credits" in texts(frame, "round")
    assert {"row.round.0", "row.round.1", "row.round.2"} <= {h.name for h in frame.hits}


@pytest.mark.parametrize("size", SIZES)
def test_the_calibration_screen_shows_the_target_at_its_pixel_and_nothing_to_press(shots, size):
    surface, frame = shots["calibration", size]
    assert not frame.hits                                      # touches are raw: nothing to press
    assert "target 2 of 4" in texts(frame, "calibration.instruction")   # 3 targets and the check
    scaler = Scaler(*size)
    target = frame.regions["calibration.target"]
    assert max(abs(a - b) for a, b in zip(scaler.point(*target.center), targets(*size)[1], strict=True)) <= 2
    assert colour_at(surface, scaler, *target.center) == theme.TEXT         # the centre dot
    assert check_target(*size) not in targets(*size)


def test_the_demonstration_rounds_are_real_rounds():
    rounds = recall_rounds()
    assert [r["game"] for r in rounds] == ["baccarat-war", "three-card-poker", "blackjack-war"]
    for record in rounds:
        paid = sum(w + r["net"] for s in record["seats"] for w, r in
                   zip(s.get("stakes", s["wagers"]).values(), s["results"].values(), strict=False))
        assert record["credits_after"] == record["credits_before"] + record["net"]
        assert paid >= 0


def test_an_unknown_service_screen_is_a_clear_error():
    with pytest.raises(EgmError, match="unknown service screen 'attract'"):
        render("attract")


@pytest.mark.parametrize("screen", ["service", "recall"])
def test_golden_images(shots, screen, tmp_path, monkeypatch):
    monkeypatch.setattr(golden, "GOLDEN", GOLDEN_DIR)
    surface, _ = shots[screen, (1280, 720)]
    assert golden.compare(surface, f"{screen}-1280x720", tmp_path / "diff") <= golden.TOLERANCE


def test_a_changed_screen_fails_its_golden_image_and_leaves_the_diff(shots, tmp_path, monkeypatch):
    monkeypatch.setattr(golden, "GOLDEN", GOLDEN_DIR)
    monkeypatch.delenv("EGM_UPDATE_GOLDEN", raising=False)
    surface, _ = shots["service", (1280, 720)]
    changed = surface.copy()
    changed.fill(theme.ACCENT, (0, 200, 1280, 300))
    with pytest.raises(AssertionError, match="differs from its golden image"):
        golden.compare(changed, "service-1280x720", tmp_path / "diff")
    assert (tmp_path / "diff" / "service-1280x720.diff.png").exists()
