"""View models: the plain, immutable data a screen draws from.

A builder turns the terminal's ``status()``, the round record and the player's bet slip into one
of these; the screen draws it and nothing else (no terminal, no clock, no game code in a screen).
Every string in them is already the player's text, from the message catalogue; money is already
formatted from integer credits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from firmware.games.base import Outcome
from firmware.ui.actions import UiAction


@dataclass(frozen=True, slots=True)
class MeterView:
    name: str                    #: region name: meter.credit, meter.bet, meter.win
    label: str
    value: str                   #: in the currency
    detail: str                  #: in credits


@dataclass(frozen=True, slots=True)
class ButtonView:
    name: str                    #: region name: button.deal...
    label: str
    action: UiAction
    enabled: bool = True
    style: str = "normal"        #: normal, deal, cashout, top


@dataclass(frozen=True, slots=True)
class ChipView:
    value: int                   #: credits
    label: str
    selected: bool = False
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class CardView:
    card: str | None             #: notation (``Qs``); None: face down
    arriving: float = 1.0        #: 0..1: how far it has come from the shoe (1: in place)
    outline: bool = False        #: part of a war or contest now
    dim: bool = False            #: out of the contest


@dataclass(frozen=True, slots=True)
class ResultView:
    outcome: Outcome
    label: str                   #: WIN, LOSE, PUSH...
    amount: str                  #: what the wager paid to the credit meter, in credits ("" when nothing)
    paid: int = 0                #: those credits (the WIN meter adds up the tags shown); 0 for a tag
                                 #: that only names an outcome (a hand's, an ante bonus's pay)


@dataclass(frozen=True, slots=True)
class BetAreaView:
    seat: int
    wager: str
    label: str
    amount: int                  #: credits on it
    amount_text: str
    result: ResultView | None = None
    enabled: bool = True         #: a touch places the selected chip
    linked: bool = False         #: follows another wager (WAR = BAC when required)
    short: str = ""              #: a shorter name for a narrow area


@dataclass(frozen=True, slots=True)
class HandView:
    name: str                    #: region name: dealer, spot.1.hand
    label: str
    cards: tuple[CardView, ...] = ()
    extra: tuple[CardView, ...] = ()     #: war cards (or a game's further cards)
    score: str = ""
    status: str = ""
    highlight: bool = False


@dataclass(frozen=True, slots=True)
class ChromeView:
    """What every game's table shows around its felt."""

    title: str
    subtitle: str
    meters: tuple[MeterView, ...]
    chips: tuple[ChipView, ...]
    buttons: tuple[ButtonView, ...]       #: the bottom row: clear, repeat, deal (and decisions)
    top: tuple[ButtonView, ...]           #: help, pays, games
    cash_out: ButtonView
    message: str = ""
    banner: str = ""
    skippable: bool = False               #: a round is being shown: a touch shows the rest at once
    overlay: str = ""                     #: a lockup notice over everything (tilt, handpay)
    overlay_detail: tuple[str, ...] = ()  #: what the lockup is: each open condition, named


@dataclass(frozen=True, slots=True)
class TableView:
    chrome: ChromeView
    felt: Any                             #: the game's own view (its screen knows it)


@dataclass(frozen=True, slots=True)
class DocSection:
    heading: str
    rows: tuple[tuple[str, ...], ...] = ()   #: table rows, the first is the header if ``header``
    header: bool = False
    paragraphs: tuple[str, ...] = ()
    cards: tuple[tuple[str, ...], ...] = ()  #: example hands drawn as cards (notation)


@dataclass(frozen=True, slots=True)
class DocView:
    """A pay table or a help screen: titled pages of sections."""

    name: str                                 #: paytable or help
    title: str
    pages: tuple[tuple[DocSection, ...], ...]
    page: int = 0
    footer: str = ""
    buttons: tuple[ButtonView, ...] = ()


@dataclass(frozen=True, slots=True)
class AttractView:
    title: str
    lines: tuple[str, ...]
    prompt: str
    games: tuple[str, ...]
    t: float = 0.0                            #: seconds into the attract loop (the animation)
    cards: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GameChoice:
    game_id: str
    name: str
    detail: str
    current: bool = False


@dataclass(frozen=True, slots=True)
class SelectView:
    title: str
    games: tuple[GameChoice, ...]
    buttons: tuple[ButtonView, ...] = field(default_factory=tuple)
