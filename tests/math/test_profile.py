"""Jurisdiction profiles: a configuration whose PAR breaks the profile is refused, naming the wager."""

from __future__ import annotations

import subprocess
import sys

import pytest

from firmware.config import GAME_IDS, load_config, validate_config
from firmware.math.profile import ProfileError, check_configuration, load_profile

DEFAULT = load_profile("default")


def config(text: dict) -> object:
    return validate_config(text)


def refused(cfg, profile=DEFAULT):
    return [f for f in check_configuration(cfg, profile, compute_missing=False) if f.verdict == "refused"]


def test_default_profile():
    assert DEFAULT.min_rtp == 0.75 and DEFAULT.max_rtp == 1.0


def test_the_default_configuration_passes():
    """Every game of the shipped configuration: exact sheets, and the Monte Carlo sheets shipped in
    firmware/math/sheets (nothing is computed here: compute_missing is off)."""
    findings = check_configuration(load_config(None), DEFAULT, compute_missing=False)
    assert {f.game for f in findings} == set(GAME_IDS)
    assert all(f.verdict in ("ok", "unproven") for f in findings), [f.message for f in findings]
    # Monte Carlo can only bound a return of exactly 100%: those are reported, not refused
    assert all(f.wager != "*" for f in findings)


def test_a_return_above_100_percent_is_refused_with_the_wager_and_its_return():
    cfg = config({"games": {"enabled": ["baccarat-war"],
                            "options": {"baccarat-war": {"tie_pays": 10, "pool": {"enabled": False}}}}})
    (f,) = refused(cfg)
    assert f.wager == "tie"
    assert "baccarat-war: wager tie returns 112.27%" in f.message and "above the maximum 100.00%" in f.message


def test_a_return_below_the_minimum_is_refused():
    cfg = config({"games": {"enabled": ["three-card-poker", "baccarat-war"], "default": "three-card-poker",
                            "options": {"three-card-poker": {"dealer_cards": 4},
                                        "baccarat-war": {"pool": {"enabled": True}}}}})
    found = {f.wager: f.message for f in refused(cfg)}
    assert set(found) == {"ante", "war_pool"}
    assert "three-card-poker: wager ante returns 52.66%" in found["ante"]
    assert "below the minimum 75.00%" in found["ante"]
    assert "baccarat-war: wager war_pool returns 45.00%" in found["war_pool"]


def test_per_wager_override_and_max_win(tmp_path):
    path = tmp_path / "strict.toml"
    path.write_text('name = "strict"\nmin_rtp = 0.80\nmax_win = 100000\n[wagers.tie]\nmin_rtp = 0.95\n')
    profile = load_profile(str(path))
    cfg = config({"games": {"enabled": ["baccarat-war"]}})
    found = {f.wager: f.message for f in refused(cfg, profile)}
    assert "below the minimum 95.00% of jurisdiction profile 'strict'" in found["tie"]
    # FOUR_CARD pays 1000:1 on a 500-credit maximum bet: 500,000 credits
    assert "can win 500,000 credits" in found["four_card"]


def test_bad_profiles_are_clear_errors(tmp_path):
    with pytest.raises(ProfileError, match="cannot read"):
        load_profile(str(tmp_path / "missing.toml"))
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nmin_rtp = 0.9\nmax_rtp = 0.8\n')
    with pytest.raises(ProfileError, match="must not exceed"):
        load_profile(str(bad))
    bad.write_text('name = "x"\nminimum = 0.9\n')
    with pytest.raises(ProfileError, match="minimum"):
        load_profile(str(bad))


def test_the_terminal_refuses_to_start_with_a_configuration_that_breaks_the_profile(tmp_path):
    cfg = tmp_path / "egm.toml"
    cfg.write_text('[games]\nenabled = ["three-card-poker"]\ndefault = "three-card-poker"\n'
                   '[games.options.three-card-poker]\ndealer_cards = 4\n')
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless",
                           "--config", str(cfg), "--state-dir", str(tmp_path / "state")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "configuration refused: three-card-poker: wager ante returns 52.66%" in proc.stderr
    assert "below the minimum 75.00% of jurisdiction profile 'default'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "game math (default)" in proc.stdout and "REFUSED" in proc.stdout


def test_egm_config_check_reports_the_findings(tmp_path, capsys):
    from firmware.cli import main

    cfg = tmp_path / "egm.toml"
    cfg.write_text('[games]\nenabled = ["baccarat-war"]\n[games.options.baccarat-war]\ntie_pays = 10\n')
    assert main(["config", "check", str(cfg)]) == 1
    out = capsys.readouterr().out
    assert "refused   baccarat-war: wager tie returns 112.27%" in out and "REFUSED" in out
    assert main(["config", "check", str(cfg), "--no-math"]) == 0


def test_shipped_exact_sheets_match_the_code():
    """The sheets shipped for the default configuration are what the code computes today
    (`make par-sheets` regenerates them when a game's math changes)."""
    from firmware.games.registry import make_options
    from firmware.math import cache
    from firmware.math.par import par_sheet

    cfg = load_config(None)
    for game_id in ("baccarat-war", "blackjack-war", "three-card-poker", "double-super-9"):
        options = make_options(game_id, cfg.games.options.get(game_id, {}))
        shipped = cache.lookup(game_id, options, seats=1, unit=10, rounds=0, cache_dir=None)
        assert shipped is not None, game_id
        fresh = par_sheet(game_id, options, method="exact")
        assert {n: w.rtp for n, w in shipped.wagers.items()} == {n: w.rtp for n, w in fresh.wagers.items()}


def test_a_corrupt_cached_sheet_is_recomputed(tmp_path):
    from firmware.games.registry import make_options
    from firmware.math import cache

    cfg = config({"games": {"enabled": ["double-super-9"], "default": "double-super-9",
                            "options": {"double-super-9": {"decks": 6}}}})
    first = check_configuration(cfg, DEFAULT, cache_dir=tmp_path)
    (path,) = tmp_path.glob("double-super-9-*.json")
    options = make_options("double-super-9", {"decks": 6})
    assert cache.lookup("double-super-9", options, seats=1, unit=10, rounds=0, cache_dir=tmp_path)
    path.write_text("{not json")
    assert cache.lookup("double-super-9", options, seats=1, unit=10, rounds=0, cache_dir=tmp_path) is None
    assert check_configuration(cfg, DEFAULT, cache_dir=tmp_path) == first
