"""Colours, text sizes and outcome styles, in one place.

Sizes are in design pixels (the 1920 x 1080 layout); the painter scales them to the screen, so a
1280 x 720 screen shows the same table two thirds the size. No text is smaller than
:data:`MIN_TEXT` (18 px at 1080p, the cabinet reading distance).

Colours never carry a meaning alone: a win is gold *and* says WIN *and* carries a star, a loss is
slate *and* says LOSE *and* a cross, a push is blue *and* says PUSH *and* a bar (colour-blind
players and a dimmed cabinet read the same thing). The palette avoids a red/green pair.
"""

from __future__ import annotations

from dataclasses import dataclass

from firmware.games.base import Outcome
from firmware.ui.messages import key

Colour = tuple[int, int, int]

# --- text sizes (design px: the rendered line height at 1920 x 1080) -------------------------------
MIN_TEXT = 18
#: ... and no text is smaller than this many pixels of the real screen, whatever its size (an
#: 800 x 600 screen draws 18 design px as 7.5 px; it gets 10). docs/ui.md, "Screen sizes".
MIN_TEXT_PX = 10
SMALL = 20
BODY = 24
LABEL = 28
HEADING = 34
TITLE = 44
METER = 40
BANNER = 80

# --- palette -------------------------------------------------------------------------------------
FELT: Colour = (14, 74, 92)            #: the table cloth (teal blue)
FELT_DARK: Colour = (9, 50, 64)
FELT_LINE: Colour = (214, 190, 120)    #: printed lines and labels on the felt (gold)
BAND: Colour = (18, 20, 28)            #: the meter and button band
PANEL: Colour = (30, 34, 46)
PANEL_LINE: Colour = (92, 100, 122)
TEXT: Colour = (244, 244, 238)
TEXT_DIM: Colour = (170, 176, 190)
TEXT_DARK: Colour = (20, 20, 24)
ACCENT: Colour = (255, 196, 40)        #: selection, the active thing (amber)
HIGHLIGHT: Colour = (120, 220, 255)    #: hands in a war or a contest (sky)
DISABLED: Colour = (86, 90, 104)
BUTTON: Colour = (50, 92, 170)
BUTTON_DEAL: Colour = (228, 150, 20)
BUTTON_CASHOUT: Colour = (120, 60, 150)
CARD_FACE: Colour = (250, 250, 246)
CARD_EDGE: Colour = (40, 40, 48)
CARD_BACK: Colour = (36, 62, 150)
CARD_BACK_LINE: Colour = (210, 216, 240)
SUIT_RED: Colour = (196, 28, 36)
SUIT_BLACK: Colour = (20, 20, 26)
POT: Colour = (8, 40, 52)
SHADE: Colour = (0, 0, 0)
ATTRACT: Colour = (10, 16, 40)

#: Chip colours by value, smallest first (a value not listed takes the last colour).
CHIP_COLOURS: tuple[tuple[int, Colour], ...] = (
    (1, (236, 236, 236)), (5, (200, 50, 60)), (10, (40, 90, 200)), (25, (30, 140, 80)),
    (100, (30, 30, 34)), (500, (120, 60, 160)), (1000, (230, 170, 30)),
)


def chip_colour(value: int) -> Colour:
    colour = CHIP_COLOURS[0][1]
    for threshold, c in CHIP_COLOURS:
        if value >= threshold:
            colour = c
    return colour


def text_on(colour: Colour) -> Colour:
    """Dark or light text, whichever reads on ``colour``."""
    r, g, b = colour
    return TEXT_DARK if (299 * r + 587 * g + 114 * b) / 1000 > 150 else TEXT


@dataclass(frozen=True, slots=True)
class OutcomeStyle:
    colour: Colour
    label: str                   #: catalogue key of the word shown (WIN, LOSE...)
    mark: str                    #: the shape drawn beside it: star, cross, bar, ring


OUTCOME_STYLES: dict[Outcome, OutcomeStyle] = {
    Outcome.WIN: OutcomeStyle((255, 200, 40), key("outcome.win"), "star"),
    Outcome.LOSE: OutcomeStyle((120, 126, 140), key("outcome.lose"), "cross"),
    Outcome.PUSH: OutcomeStyle((110, 180, 250), key("outcome.push"), "bar"),
    Outcome.FOLD: OutcomeStyle((120, 126, 140), key("outcome.fold"), "cross"),
    Outcome.VOID: OutcomeStyle((190, 170, 230), key("outcome.void"), "ring"),
}
