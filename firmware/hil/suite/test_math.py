"""The games' mathematics as the lab examines it (GLI-11's payout and game-fairness requirements):
each game's PAR sheet against rounds played through the real kernel, and the configured games'
minimum return under the jurisdiction profile.

``math.par.<game>`` (one test per game the product plays) runs ``egm par GAME --verify N --seed S
--json``: the exact PAR figures and N rounds of the automatic play through the round kernel, with
each wager's simulated return and 95% interval. The verifier's own verdict (every exact figure
inside its simulated 95% interval) would, over a game's three or four wagers, fail a correct game
about one run in six by chance; the suite keeps the verifier's standard error (the 95% half-width
/ 1.96) and widens the interval to a family-wise false-alarm rate of :data:`FAMILY_ALPHA` per game
(Sidak over the game's wagers): the limits are ``exact +- z * SE``. The seed is drawn afresh for
each run and noted, so a failure can be replayed exactly. The exact figures are also compared with
the PAR sheet shipped in the product (``firmware/math/sheets``), the one the terminal checks its
configuration with at start.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import cast

import pytest
from scipy.stats import norm

from firmware.config import load_config
from firmware.games.registry import available, configured_options
from firmware.hil.checks_rng import egm, sidak
from firmware.hil.recorder import Recorder
from firmware.math import cache
from firmware.math.profile import check_configuration, load_profile

FAMILY_ALPHA = 0.001
#: The 95% interval's z (the verifier's ``ci95`` is simulated +- Z95 * SE).
Z95 = 1.959964
MATH_SECTION = "GLI-11 'Payout Requirements' (theoretical payout, minimum payout percentage)"

#: Rounds simulated per game (sized to this machine: about 30 s each) and the expected seconds.
PAR_ROUNDS: dict[str, tuple[int, int]] = {
    "baccarat-war": (500_000, 35),
    "blackjack-war": (500_000, 35),
    "holdem-war": (500_000, 35),
    "three-card-poker": (400_000, 35),
    "split21-stud": (150_000, 50),
    "double-super-9": (200_000, 50),
}
#: A game added later gets this until it is sized.
DEFAULT_ROUNDS = (200_000, 60)


def _verify_par(record: Recorder, game: str, rounds: int) -> None:
    seed = secrets.token_hex(8)
    record.note(f"seed {seed}: egm par {game} --verify {rounds} --seed {seed} --json replays this run")
    args = ["par", game, "--verify", str(rounds), "--seed", seed, "--json"]
    record.step(f"egm {' '.join(args)} (exact PAR, then {rounds:,} rounds through the round kernel)")
    done = egm(*args, timeout=1800)
    record.attach("par-stderr", done.stderr.decode("utf-8", "replace"))
    # exit 1 only says a figure lies outside the verifier's own 95% interval, judged below
    record.measure("egm par: exit status (0, or 1 = outside a 95% interval)", done.returncode in (0, 1), equals=True)
    sheet = json.loads(done.stdout)
    record.attach("par", sheet, "json")
    checks = sheet.get("verification") or []
    record.measure("wagers verified against the simulation", len(checks), low=1)

    cfg = load_config(None)
    shipped = cache.lookup(game, configured_options(cfg, game), seats=cfg.games.seats, unit=sheet["unit"] or 10,
                           rounds=cfg.math.monte_carlo_rounds, cache_dir=None)
    record.measure("PAR sheet shipped with the product for the default configuration", shipped is not None,
                   equals=True)
    assert shipped is not None

    alpha = sidak(FAMILY_ALPHA, len(checks))
    z = float(norm.isf(alpha / 2))
    record.note(f"limits: exact +- {z:.3f} standard errors (family-wise false-alarm rate {FAMILY_ALPHA} over "
                f"{len(checks)} wagers, Sidak); the standard error is the verifier's 95% half-width / {Z95}")
    for check in checks:
        wager = check["wager"]
        exact, simulated = float(check["exact"]), float(check["simulated"])
        low, high = (float(v) for v in check["ci95"])
        se = (high - low) / (2 * Z95)
        ours = float(shipped.wagers[wager].rtp) if wager in shipped.wagers else None
        record.measure(f"{wager}: exact RTP equals the shipped sheet's", ours is not None and abs(ours - exact) < 1e-12,
                       equals=True)
        record.measure(f"{wager}: rounds simulated", int(check["rounds"]), equals=rounds)
        record.measure(f"{wager}: exact RTP (PAR)", exact)
        record.measure(f"{wager}: verifier's 95% interval of the simulated RTP", [round(low, 6), round(high, 6)])
        record.measure(f"{wager}: exact RTP inside the verifier's 95% interval (information)", bool(check["inside"]))
        record.measure(f"{wager}: simulated RTP", simulated, low=round(exact - z * se, 6), high=round(exact + z * se, 6),
                       soft=True)


def _par_test(game: str, rounds: int, duration: int) -> Callable[..., None]:
    @pytest.mark.hil(id=f"math.par.{game}", standard="gli-11", clause="3.2 Payout Requirements (approx.)",
                     requirement="The game's stated return (its PAR sheet) must be what the game actually pays: "
                                 "rounds played through the game software return the stated figure within "
                                 f"sampling error. (Section number approximate: {MATH_SECTION}.)",
                     title=f"{game}: PAR sheet confirmed by {rounds:,} simulated rounds", operator=False,
                     duration=duration, targets=("sim", "cabinet"))
    def test(record: Recorder) -> None:
        _verify_par(record, game, rounds)

    test.__name__ = test.__qualname__ = f"test_par_{game.replace('-', '_')}"
    return cast(Callable[..., None], test)


for _game in available():
    _rounds, _duration = PAR_ROUNDS.get(_game, DEFAULT_ROUNDS)
    globals()[f"test_par_{_game.replace('-', '_')}"] = _par_test(_game, _rounds, _duration)


@pytest.mark.hil(id="math.min-rtp", standard="gli-11", clause="3.2.1 Minimum Theoretical Payout Percentage (approx.)",
                 requirement="Every wager the configuration offers must return at least the minimum the "
                             "jurisdiction sets (and no more than its maximum), checked before play is offered. "
                             f"(Section number approximate: {MATH_SECTION}.)",
                 title="Every enabled wager at or above the jurisdiction's minimum RTP", operator=False,
                 duration=10, targets=("sim", "cabinet"))
def test_min_rtp(cabinet, record):
    record.step(f"load the terminal's configuration ({cabinet.config_path or 'the default'}) and its "
                "jurisdiction profile")
    cfg = load_config(cabinet.config_path)
    profile = load_profile(cfg.math.profile)
    record.note(f"profile {profile.name!r}: {profile.description}")
    record.measure("games enabled", len(cfg.games.enabled), low=1)
    record.step("check_configuration, as egm run does at start (shipped PAR sheets; none computed here)")
    findings = check_configuration(cfg, profile, compute_missing=False)
    record.attach("findings", [f.to_json() for f in findings], "json")
    games = {f.game for f in findings}
    record.measure("enabled games with a PAR sheet checked", sorted(games), equals=sorted(cfg.games.enabled))
    for finding in findings:
        lo, hi = profile.limits(finding.game, finding.wager)
        record.measure(f"{finding.game} {finding.wager}: RTP", finding.rtp, low=lo, high=hi, soft=True)
        record.measure(f"{finding.game} {finding.wager}: profile verdict", finding.verdict, equals="ok", soft=True)
