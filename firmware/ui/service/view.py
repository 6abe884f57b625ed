"""View models of the service screens: plain, immutable data the service screen draws.

The builders (``firmware.ui.service.builders``) make them from the service API's answers; every
string is already the technician's text from the catalogue, every amount already formatted from
integer cents or credits. Buttons are the core's :class:`~firmware.ui.view.ButtonView` carrying a
:class:`~firmware.ui.service.actions.ServiceAction`; outcomes are the core's
:class:`~firmware.ui.view.ResultView` (colour, word and shape).
"""

from __future__ import annotations

from dataclasses import dataclass

from firmware.ui.service.actions import ServiceAction
from firmware.ui.service.calibration import CalibrationView
from firmware.ui.view import ButtonView, ResultView

#: Row and panel tones. Each is a colour *and* a shape drawn beside the text (the mark), so no
#: meaning rests on colour alone: ``good`` a ring, ``alert`` a cross, ``warn`` a bar.
TONES = ("normal", "dim", "heading", "good", "alert", "warn", "selected")


@dataclass(frozen=True, slots=True)
class RowView:
    cells: tuple[str, ...]
    action: ServiceAction | None = None     #: a touch on the row
    tone: str = "normal"
    name: str = ""                          #: region name (``row.<table>.<i>`` if empty)


@dataclass(frozen=True, slots=True)
class TableView:
    """A table, paged by the screen (as many rows as fit; PREVIOUS / NEXT under it)."""

    name: str
    heading: str
    columns: tuple[str, ...]
    rows: tuple[RowView, ...]
    weights: tuple[int, ...]
    aligns: str = ""                        #: per column: ``l`` or ``r`` (default: first l, rest r)
    page: int = 0
    empty: str = ""                         #: shown when there are no rows


@dataclass(frozen=True, slots=True)
class PanelView:
    name: str
    heading: str
    lines: tuple[str, ...] = ()
    tone: str = "normal"


@dataclass(frozen=True, slots=True)
class CardGroup:
    label: str                              #: "" for a hand's first cards
    cards: tuple[str, ...]                  #: notation, ``Qs``


@dataclass(frozen=True, slots=True)
class RecallHand:
    name: str                               #: region: ``round.dealer``, ``round.seat.1``
    label: str
    groups: tuple[CardGroup, ...]
    info: str = ""                          #: score, hand name
    war_scores: tuple[str, ...] = ()        #: a war-family hand's war score after each war card: WAR 9


@dataclass(frozen=True, slots=True)
class WagerLine:
    name: str                               #: region: ``round.wager.1.bac``
    label: str
    stake: str
    result: ResultView | None


@dataclass(frozen=True, slots=True)
class RoundView:
    """One recalled round drawn with its cards, its wagers and their outcomes."""

    title: str
    lines: tuple[str, ...]                  #: id, time, credits before / after, net
    hands: tuple[RecallHand, ...]
    wagers: tuple[WagerLine, ...]
    extra: tuple[CardGroup, ...] = ()       #: cards of the round itself (community cards)


@dataclass(frozen=True, slots=True)
class KeypadView:
    name: str                               #: region of the pad: ``keypad``
    title: str
    prompt: str
    entry: str                              #: as shown (a PIN masked)
    keys: tuple[ButtonView, ...]            #: laid out ``columns`` to a row
    columns: int = 3


@dataclass(frozen=True, slots=True)
class ServiceView:
    """One service screen. ``layout`` says how the body is arranged: ``grid`` (big buttons),
    ``keypad``, ``list`` (one table), ``columns`` (tables side by side), ``split`` (a table beside
    panels and buttons), ``recall`` (the round list beside the round drawn), ``calibration``."""

    page: str
    layout: str
    title: str
    subtitle: str
    top: tuple[ButtonView, ...] = ()
    message: str = ""
    message_tone: str = "normal"
    tables: tuple[TableView, ...] = ()
    panels: tuple[PanelView, ...] = ()
    buttons: tuple[ButtonView, ...] = ()
    keypad: KeypadView | None = None
    round: RoundView | None = None
    calibration: CalibrationView | None = None
