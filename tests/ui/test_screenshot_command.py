"""``egm screenshot``: the PNG, the --json document, and one clear line for every bad input."""

from __future__ import annotations

import contextlib
import io
import json

import pygame
import pytest

from firmware.cli import main


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["screenshot", *args])
        except SystemExit as exc:           # argparse refused the command line (an unknown --game)
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def test_a_screenshot_is_a_png_of_the_asked_size_and_json_says_where_things_are(tmp_path):
    out = tmp_path / "war.png"
    code, stdout, stderr = run("war", "--out", str(out), "--size", "1280x720", "--json")
    assert code == 0, stderr
    assert pygame.image.load(str(out)).get_size() == (1280, 720)
    doc = json.loads(stdout)
    assert doc["screen"] == "war" and doc["game"] == "baccarat-war" and doc["size"] == [1280, 720]
    x, y, w, h = doc["regions"]["button.cash_out"]
    assert 0 <= x < 1280 and 0 <= y < 720 and w > 0 and h > 0
    assert "skip" in doc["actions"]
    assert list(tmp_path.iterdir()) == [out]                       # no temporary file left behind


@pytest.mark.parametrize("args, message", [
    (["dance"], "unknown screen 'dance'"),
    (["table", "--game", "poker"], "unknown game 'poker'"),
    (["table", "--game", "blackjack-war"], "has no screens yet"),      # taken out of GAME_UIS below
    (["table", "--size", "0x0"], "cannot be drawn"),
    (["table", "--size", "99999x1"], "cannot be drawn"),
    (["table", "--size", "abc"], "a size is WIDTHxHEIGHT"),
    (["table", "--size", "4000x400"], "too narrow or too wide"),
    (["help", "--page", "0"], "--page counts from 1"),
    (["help", "--game", "double-super-9", "--page", "9"], "has 2 page(s); there is no page 9"),
    (["paytable", "--page", "5"], "there is no page 5"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, monkeypatch, args, message):
    from firmware.ui.games import GAME_UIS

    monkeypatch.delitem(GAME_UIS, "blackjack-war")          # a game with no screens
    out = tmp_path / "shot.png"
    code, stdout, stderr = run(*args, "--out", str(out))
    assert code != 0 and message in stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr and stdout == ""
    assert not out.exists()


@pytest.mark.parametrize("where, message", [
    ("missing/dir/shot.png", "does not exist"),
    ("shot.jpg", "must name a .png file"),
    (".", "must name a .png file"),
])
def test_an_output_that_cannot_be_written_is_refused(tmp_path, where, message):
    code, _, stderr = run("table", "--out", str(tmp_path / where))
    assert code != 0 and message in stderr and stderr.count("\n") == 1


def test_a_directory_named_like_a_png_is_refused(tmp_path):
    (tmp_path / "dir.png").mkdir()
    code, _, stderr = run("table", "--out", str(tmp_path / "dir.png"))
    assert code != 0 and "is a directory" in stderr
