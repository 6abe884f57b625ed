"""Jurisdiction profiles and the configuration check against them.

A profile (TOML) states what a jurisdiction accepts of a game's math: the minimum and maximum
return of every wager (GLI-11 leaves the minimum to the jurisdiction; 75% is common and is this
product's default), per-wager overrides, and the largest amount a single wager may win. The
terminal runs :func:`check_configuration` at start-up and the service menu before it saves a
changed configuration: a configuration whose PAR breaks the profile is refused with a message that
names the game, the wager and its return.

Exact figures are compared directly. A Monte Carlo figure (wagers no enumeration reaches) is
refused when its 95% interval lies wholly outside the limits, and reported as *unproven* (a warning,
not a refusal) when the interval straddles a limit; its sheet is kept in a cache keyed by the
game, options, seats and stake, so a terminal plays the rounds once per configuration.

Profile file::

    name = "default"
    description = "..."
    min_rtp = 0.75            # every wager
    max_rtp = 1.0             # a wager returning more than 100% is refused
    max_win = 250000          # credits one wager may win at the table maximum (optional)

    [wagers.four_card]        # per-wager override, by wager name (or "GAME.WAGER")
    min_rtp = 0.80
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from firmware.config.validation import describe_validation_error
from firmware.errors import EgmError
from firmware.math.sheet import ParSheet, WagerPar

if TYPE_CHECKING:
    from firmware.config.schema import Config

BUILT_IN = ("default",)


class ProfileError(EgmError):
    """A profile file that is missing, unreadable or invalid."""


class WagerLimits(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    min_rtp: float | None = Field(None, ge=0, le=10)
    max_rtp: float | None = Field(None, ge=0, le=10)


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64)
    description: str = ""
    min_rtp: float = Field(0.75, ge=0, le=10)
    max_rtp: float = Field(1.0, ge=0, le=10)
    max_win: int | None = Field(None, ge=1)
    wagers: dict[str, WagerLimits] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _ordered(self) -> Profile:
        if self.min_rtp > self.max_rtp:
            raise ValueError(f"min_rtp ({self.min_rtp}) must not exceed max_rtp ({self.max_rtp})")
        return self

    def limits(self, game_id: str, wager: str) -> tuple[float, float]:
        lo, hi = self.min_rtp, self.max_rtp
        for key in (wager, f"{game_id}.{wager}"):
            override = self.wagers.get(key)
            if override is not None:
                lo = override.min_rtp if override.min_rtp is not None else lo
                hi = override.max_rtp if override.max_rtp is not None else hi
        return lo, hi


def load_profile(name_or_path: str) -> Profile:
    """A built-in profile by name, or a profile file (TOML)."""
    if name_or_path in BUILT_IN:
        text = resources.files("firmware.math").joinpath(f"profiles/{name_or_path}.toml").read_text("utf-8")
        source = f"profile {name_or_path}"
    else:
        path = Path(name_or_path)
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ProfileError(
                f"{path}: cannot read the jurisdiction profile ({exc}); built-in profiles: "
                f"{', '.join(BUILT_IN)}"
            ) from None
        source = str(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{source}: not valid TOML: {exc}") from None
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise ProfileError(f"{source}: {describe_validation_error(exc, Profile)}") from None


@dataclass(frozen=True, slots=True)
class Finding:
    """One wager's verdict against the profile."""

    game: str
    wager: str
    rtp: float
    verdict: str                     # "ok", "refused", "unproven"
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "wager": self.wager, "rtp": self.rtp, "verdict": self.verdict,
                "message": self.message}


def check_sheet(sheet: ParSheet, profile: Profile, *, max_bet: int | None = None) -> list[Finding]:
    """Every wager of ``sheet`` against ``profile``."""
    out = []
    for name, wager in sheet.wagers.items():
        if "+" in name:
            continue           # a combined line (BAC+WAR) is reported, its parts are what is played
        out.append(_check_wager(sheet.game, name, wager, profile, max_bet))
    return out


def _check_wager(game: str, name: str, wager: WagerPar, profile: Profile, max_bet: int | None) -> Finding:
    lo, hi = profile.limits(game, name)
    rtp = float(wager.rtp)
    where = f"{game}: wager {name} returns {rtp:.2%}"
    prof = f"of jurisdiction profile {profile.name!r}"
    ci = wager.ci95
    if ci is not None:
        where += f" (Monte Carlo, 95% interval {ci[0]:.2%} to {ci[1]:.2%})"
        if ci[1] < lo:
            return Finding(game, name, rtp, "refused", f"{where}, below the minimum {lo:.2%} {prof}")
        if ci[0] > hi:
            return Finding(game, name, rtp, "refused", f"{where}, above the maximum {hi:.2%} {prof}")
        if ci[0] < lo or ci[1] > hi:
            return Finding(game, name, rtp, "unproven",
                           f"{where}: the interval reaches past the limits {lo:.2%}-{hi:.2%} {prof}")
    else:
        exact = wager.rtp
        if isinstance(exact, Fraction):
            below, above = exact < Fraction(lo).limit_denominator(10**9), exact > Fraction(hi).limit_denominator(10**9)
        else:
            below, above = rtp < lo, rtp > hi
        if below:
            return Finding(game, name, rtp, "refused", f"{where}, below the minimum {lo:.2%} {prof}")
        if above:
            return Finding(game, name, rtp, "refused", f"{where}, above the maximum {hi:.2%} {prof}")
    if profile.max_win is not None and max_bet is not None and wager.outcomes:
        top = max(o.net for o in wager.outcomes)
        win = int(top * max_bet)
        if win > profile.max_win:
            return Finding(game, name, rtp, "refused",
                           f"{game}: wager {name} can win {win:,} credits at the maximum bet {max_bet:,} "
                           f"({float(top):g}:1), above the maximum win {profile.max_win:,} {prof}")
    return Finding(game, name, rtp, "ok", f"{where}: within {lo:.2%}-{hi:.2%} {prof}")


def check_configuration(cfg: Config, profile: Profile, *, cache_dir: Path | None = None,
                        seed: str | None = None, compute_missing: bool = True,
                        processes: int | None = None) -> list[Finding]:
    """Every enabled game of the terminal configuration ``cfg`` against ``profile``.

    The figures assume the terminal's automatic stake (10 credits within the table limits) and
    ``games.seats`` seats. Each game's sheet comes from the PAR sheets shipped with the firmware
    (the default configuration), then from ``cache_dir``; only when neither has it is it computed
    (exact, or ``math.monte_carlo_rounds`` rounds of Monte Carlo) and cached. With
    ``compute_missing = False`` a game that would need Monte Carlo is reported *unproven* instead.
    ``processes``: Monte Carlo's worker processes (None: one per core; 1: none forked).
    """
    from firmware.games.registry import make_options
    from firmware.math import cache
    from firmware.math.par import ParError, par_sheet

    unit = max(cfg.limits.min_bet, min(10, cfg.limits.max_bet))
    seats = cfg.games.seats
    rounds = cfg.math.monte_carlo_rounds
    findings: list[Finding] = []
    for game_id in cfg.games.enabled:
        options = make_options(game_id, cfg.games.options.get(game_id, {}),
                               prefix=f"games.options.{game_id}")
        sheet = cache.lookup(game_id, options, seats=seats, unit=unit, rounds=rounds,
                             cache_dir=cache_dir)
        if sheet is None:
            try:
                sheet = par_sheet(game_id, options, method="exact", seats=seats, unit=unit)
            except ParError:
                if not compute_missing:
                    findings.append(Finding(game_id, "*", float("nan"), "unproven",
                                            f"{game_id}: no PAR sheet for this configuration yet; "
                                            f"compute it with egm par {game_id} (or the service menu)"))
                    continue
                sheet = par_sheet(game_id, options, method="auto", seats=seats, unit=unit,
                                  rounds=rounds, seed=seed, processes=processes)
            if cache_dir is not None:
                cache.store(sheet, cache_dir, rounds=rounds)
        findings.extend(check_sheet(sheet, profile, max_bet=cfg.limits.max_bet))
    return findings
