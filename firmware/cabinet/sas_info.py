"""What SAS reads of the terminal's games and software: the game catalog of the game information
polls (:class:`TerminalGames`) and the installed software image of the ROM signature
(:class:`InstalledSoftware`).

Game numbers: SAS numbers every game the firmware implements, 1..N in the order of the game
registry (``firmware.games.registry.GAMES``), whether the configuration enables it or not, and
never renumbers them (SAS 6.02 section 7.6.3); docs/protocols/sas.md lists the table. Each game's
pay table ID is its 2-letter SAS game ID and the first four hex digits of the SHA-256 of its
configured options (a changed pay table is a new ID); its base percentage comes from the PAR sheet
of the configuration (:func:`base_return`), shipped with the firmware or cached by the terminal,
"0000" when none is known (the sheet is never computed here: a Monte Carlo sheet takes minutes).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drivers.sas.crc import sas_crc
from firmware.cabinet.software import (
    DEFAULT_PACKAGES,
    default_root,
    installed_files,
    installed_paths,
)
from firmware.games.registry import available, configured_options, get_game
from firmware.math import cache
from firmware.sas.games import GameEntry

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal

#: Each game's SAS game ID (two ASCII characters, 0x53).
SAS_GAME_IDS: dict[str, str] = {
    "baccarat-war": "BW", "blackjack-war": "JW", "holdem-war": "HW", "three-card-poker": "TP",
    "split21-stud": "ST", "double-super-9": "D9",
}
#: The base percentage when no PAR sheet is known.
UNKNOWN_PERCENT = "0000"


class TerminalGames:
    """:class:`~firmware.sas.games.GameCatalog` over ``terminal`` (its configuration and the game
    selected now); ``par_cache``: where the terminal caches PAR sheets (None: shipped ones only)."""

    def __init__(self, terminal: Terminal, *, par_cache: Path | None = None) -> None:
        self.t = terminal
        self.par_cache = par_cache
        self._percent: dict[tuple[str, str], str] = {}

    def games(self) -> Sequence[GameEntry]:
        cfg = self.t.cfg
        entries = []
        for number, game_id in enumerate(available(), start=1):
            options = configured_options(cfg, game_id)
            options_json = json.dumps(options.to_json(), sort_keys=True)
            sas_id = SAS_GAME_IDS[game_id]
            paytable = sas_id + hashlib.sha256(options_json.encode()).hexdigest()[:4].upper()
            wagers = get_game(game_id).wager_names
            entries.append(GameEntry(
                number=number, game_id=sas_id, paytable_id=paytable,
                base_percent=self._base_percent(game_id, options, options_json),
                max_bet=cfg.limits.max_total_bet, name=game_id, paytable_name=paytable,
                wager_categories=len(wagers), enabled=game_id in cfg.games.enabled))
        return entries

    def selected(self) -> int:
        games = available()
        return games.index(self.t.game_id) + 1 if self.t.game_id in games else 0

    def _base_percent(self, game_id: str, options: Any, options_json: str) -> str:
        known = self._percent.get((game_id, options_json))
        if known is not None:
            return known
        cfg = self.t.cfg
        unit = max(cfg.limits.min_bet, min(10, cfg.limits.max_bet))      # as the start-up check
        sheet = cache.lookup(game_id, options, seats=cfg.games.seats, unit=unit,
                             rounds=cfg.math.monte_carlo_rounds, cache_dir=self.par_cache)
        percent = UNKNOWN_PERCENT
        if sheet is not None:
            rtp = base_return(sheet.wagers, get_game(game_id).wager_names)
            if rtp is not None:
                percent = f"{min(9999, round(rtp * 10000)):04d}"
            self._percent[(game_id, options_json)] = percent
        return percent


def base_return(wagers: Mapping[str, Any], order: Sequence[str]) -> float | None:
    """The return SAS reports as a game's base percentage, from its PAR sheet's wagers: the
    sheet's combined figure for the bets a round always carries (a row named ``a+b``, such as
    ``bac+war``) if it has one, else the first of the game's wagers (in ``order``) that has a
    house edge; None if no wager has one. (A table game has a return per wager; SAS expects one
    figure per pay table, as a slot machine has. Our choice, docs/protocols/sas.md.)"""
    for name, par in wagers.items():
        if "+" in name:
            return float(par.rtp)
    for name in order:
        if name in wagers and wagers[name].rtp < 1:
            return float(wagers[name].rtp)
    return None


class InstalledSoftware:
    """:class:`~firmware.sas.rom.SoftwareImage` over the software installed under ``root``
    (default: this firmware's): the files of ``egm software manifest``, in its order. The image's
    CRC is computed again whenever a file was added, removed or changed since the last one (size,
    modification time or inode)."""

    def __init__(self, root: Path | None = None, packages: Sequence[str] = DEFAULT_PACKAGES) -> None:
        self.root = Path(root) if root is not None else default_root()
        self.packages = tuple(packages)
        self._stamp: tuple[tuple[str, int, int, int], ...] | None = None
        self._crc = (0, 0)

    def _current_stamp(self) -> tuple[tuple[str, int, int, int], ...]:
        stamp = []
        for rel in installed_paths(self.root, self.packages):
            st = os.stat(self.root / rel)
            stamp.append((rel, st.st_size, st.st_mtime_ns, st.st_ino))
        return tuple(stamp)

    def crc(self) -> tuple[int, int]:
        stamp = self._current_stamp()
        if stamp != self._stamp:
            crc, length = 0, 0
            for _rel, data in installed_files(self.root, self.packages):
                crc = sas_crc(data, crc)
                length += len(data)
            self._stamp, self._crc = stamp, (crc, length)
        return self._crc
