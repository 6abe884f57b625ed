"""The technician's game configuration: ``config show``, ``config set``, the check of a change against
the jurisdiction profile (PAR sheets; Monte Carlo in the background, ``firmware/cabinet/par_jobs.py``)
and the stored options used again at start-up.

A change is stored in critical memory (setting ``config.games.<game>``) and played from the next
round; a round in progress keeps its options.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from firmware.cabinet.par_jobs import ParJob
from firmware.cabinet.service.errors import ServiceError
from firmware.cabinet.service.guards import round_open
from firmware.errors import EgmError

if TYPE_CHECKING:
    from firmware.cabinet.service.api import ServiceApi


def setting_name(game: str) -> str:
    """The critical-memory setting that holds ``game``'s stored options."""
    return f"config.games.{game}"


def config_show(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    from firmware.games.registry import available, make_options

    cfg = api.terminal.cfg
    games = [g for g in cfg.games.enabled if g in set(available())]
    if args:
        if len(args) != 1 or args[0] not in games:
            raise ServiceError(f"usage: config show [GAME]; games: {', '.join(games)}")
        games = args
    shown = {}
    for game in games:
        table = cfg.games.options.get(game, {})
        shown[game] = {"table": table, "options": make_options(game, table).to_json(),
                       "stored": api.ledger.setting(setting_name(game)) is not None}
    return {"games": shown, "profile": cfg.math.profile, "seats": cfg.games.seats,
            "limits": cfg.limits.model_dump(),
            "par_jobs": [j.to_json() for j in api.par_jobs.all()]}, f"{len(shown)} games"


def config_set(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    from firmware.games.options import parse_assignments

    if len(args) < 2:
        raise ServiceError("usage: config set GAME KEY=VALUE [KEY=VALUE ...]")
    game, pairs = args[0], args[1:]
    if round_open(api.terminal):
        raise ServiceError("a round is in progress: configuration changes wait for it to end")
    candidate, stored, findings = plan_options(api, api.terminal.cfg, game, parse_assignments(pairs))
    api.ledger.store_setting(setting_name(game), stored)
    api.terminal.use_config(candidate, [game])       # from the next round
    detail = f"{game}: {' '.join(pairs)}"
    return {"game": game, "table": stored, "applied": "from the next round",
            "findings": [f.to_json() for f in findings]}, detail


def plan_options(api: ServiceApi, cfg: Any, game: str,
                 change: Mapping[str, Any]) -> tuple[Any, dict[str, Any], list[Any]]:
    """``cfg`` with ``change`` merged into ``game``'s options: (candidate configuration, the table
    to store, the profile's findings). :class:`ServiceError` if the game is not enabled, an
    option is wrong, or the jurisdiction profile refuses the result. Changes nothing."""
    from firmware.games.registry import available, make_options

    if game not in cfg.games.enabled or game not in set(available()):
        raise ServiceError(f"game {game!r} is not enabled; enabled: {', '.join(cfg.games.enabled)}")
    table = _merged(cfg.games.options.get(game, {}), change)
    options = make_options(game, table, prefix=f"games.options.{game}")
    stored = _pick(options.to_json(), table)               # typed values, only the keys set
    candidate = cfg.model_copy(update={"games": cfg.games.model_copy(
        update={"options": {**cfg.games.options, game: stored}})})
    findings = _check(api, candidate, game)
    refused = [f for f in findings if f.verdict == "refused" or (f.verdict == "unproven" and f.wager == "*")]
    if refused:
        raise ServiceError(f"refused by the jurisdiction profile: {refused[0].message}")
    return candidate, stored, findings


def _check(api: ServiceApi, candidate: Any, game: str) -> list[Any]:
    """The changed game's PAR against the profile (only that game: the others did not change)."""
    from firmware.math.profile import check_configuration

    only = candidate.model_copy(update={"games": candidate.games.model_copy(
        update={"enabled": [game], "default": game})})
    cache_dir = api.par_cache_dir if api.par_cache_dir is not None else Path(api.ledger.state_dir) / "par"
    profile = api.profile()
    findings = check_configuration(only, profile, cache_dir=cache_dir, compute_missing=False)
    if not api.compute_missing or not any(f.verdict == "unproven" and f.wager == "*" for f in findings):
        return findings
    # Only Monte Carlo reaches this configuration: minutes of work, never on this thread.
    options = candidate.games.options.get(game, {})
    rounds = candidate.math.monte_carlo_rounds
    key = json.dumps([game, options, candidate.games.seats, candidate.limits.model_dump(), rounds],
                     sort_keys=True, default=str)
    job = api.par_jobs.start(key, ParJob(game, dict(options), rounds), lambda: check_configuration(
        only, profile, cache_dir=cache_dir, compute_missing=True, processes=1))
    if job.state == "failed":
        api.par_jobs.forget(key)                 # asked again: computed again
        raise ServiceError(f"{game}: the PAR sheet of these options could not be computed: {job.error}")
    if job.state == "done":                      # finished meanwhile: the cache has it now
        return check_configuration(only, profile, cache_dir=cache_dir, compute_missing=False)
    raise ServiceError(f"{game}: no PAR sheet for these options yet; it is being computed in the "
                       f"background (Monte Carlo, {rounds:,} rounds; play goes on). Nothing was changed: "
                       "ask again when 'config show' lists it done")


def apply_stored_config(api: ServiceApi) -> list[str]:
    """Use the game options a technician stored (``config set``) over the configuration file's:
    at start-up. A stored table the firmware no longer accepts is logged and skipped. Returns the
    games changed."""
    from firmware.games.registry import available, make_options

    cfg = api.terminal.cfg
    applied = []
    for game in cfg.games.enabled:
        table = api.ledger.setting(setting_name(game))
        if table is None or game not in set(available()):
            continue
        try:
            make_options(game, table)
        except EgmError as exc:
            api.ledger.event("service_config_not_applied", game=game, reason=str(exc)[:200])
            continue
        cfg = cfg.model_copy(update={"games": cfg.games.model_copy(
            update={"options": {**cfg.games.options, game: table}})})
        applied.append(game)
    if applied:
        # A round in progress keeps the kernel it started with (terminal.kernel); only the
        # next round is built from the new options.
        api.terminal.use_config(cfg, applied)
        api.ledger.event("service_config_applied", games=applied)
    return applied


def _merged(base: Mapping[str, Any], change: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: (_merged(v, {}) if isinstance(v, Mapping) else v) for k, v in base.items()}
    for key, value in change.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = _merged(value, {}) if isinstance(value, Mapping) else value
    return out


def _pick(full: Mapping[str, Any], keys: Mapping[str, Any]) -> dict[str, Any]:
    """The values of ``full`` (validated, typed) at the keys ``keys`` names (nested)."""
    out: dict[str, Any] = {}
    for key, value in keys.items():
        if key not in full:
            continue
        if isinstance(value, Mapping) and isinstance(full[key], Mapping):
            out[key] = _pick(full[key], value)
        else:
            out[key] = full[key]
    return out
