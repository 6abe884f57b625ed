"""Pieces every game's pay table and help pages share: a wager's return from the PAR sheet, the
footer saying how the figures were computed, pay rows ("40 to 1" / "Loses"), the table-limits
section, and percentages as a player reads them. Each game's ``paytable``/``help`` composes these
with its own rows (games/base.py, docs/ui.md "Pay table and help")."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from firmware.ui.messages import text
from firmware.ui.view import DocSection

if TYPE_CHECKING:
    from firmware.math.sheet import ParSheet
    from firmware.ui.context import GameContext


def percent(value: Decimal) -> str:
    """A percentage option (a Decimal: 5, 2.5) as the player reads it."""
    return f"{value.normalize():f}"


def rtp(sheet: ParSheet | None, name: str) -> str:
    """The return of wager ``name`` from the PAR sheet, or "not computed" (no sheet, no figure)."""
    wager = sheet.wagers.get(name) if sheet is not None else None
    if wager is None:
        return text("paytable.rtp_unknown")
    return text("paytable.rtp", percent=f"{float(wager.rtp) * 100:.2f}")


def par_footer(sheet: ParSheet | None) -> str:
    """How the return figures were computed (exact or Monte Carlo, seats, unit), or that there are none."""
    if sheet is None:
        return text("paytable.footer_no_par")
    methods = {w.method for w in sheet.wagers.values()}
    how = text("paytable.method_exact") if methods <= {"exact", "recursion"} else text("paytable.method_mc")
    return text("paytable.footer", method=how, seats=sheet.seats, unit=sheet.unit or 0)


def to_one(pays: int) -> str:
    """A pay as the table says it: "40 to 1", or "Loses" for 0."""
    return text("paytable.to_one", n=f"{pays:,}") if pays else text("paytable.loses")


def wager_header() -> tuple[str, ...]:
    return (text("paytable.col_wager"), text("paytable.col_pays"), text("paytable.col_return"))


def category_section(heading: str, categories: Iterable[str], labels: Mapping[str, str],
                     pays_of: Callable[[str], int]) -> DocSection:
    """A hand-category pay table (Four Card, Pair Plus, 6-Card Bonus...): hand, "N to 1" or "Loses"."""
    rows: list[tuple[str, ...]] = [(text("paytable.col_hand"), text("paytable.col_pays"))]
    rows.extend((text(labels[name]), to_one(pays_of(name))) for name in categories)
    return DocSection(heading, tuple(rows), header=True)


def table_section(ctx: GameContext[Any, Any], decks: int, cards: str | None = None) -> DocSection:
    """The help's "At this table" section: bet limits, decks (or the game's own ``cards`` line),
    what WIN means (the amount paid, the convention of every tag and meter), malfunction voids."""
    money, limits = ctx.money, ctx.limits
    lines = (text("help.limits", min=money.currency_of(limits.min_bet), max=money.currency_of(limits.max_bet),
                  total=money.currency_of(limits.max_total_bet)),
             cards or text("help.decks", decks=decks), text("help.win"), text("help.malfunction"))
    return DocSection(text("help.heading_table"), paragraphs=lines)


def ratio(value: Fraction) -> str:
    """A pay given as a ratio (a ``Fraction``: 1, 3/2) as the table says it: "1 to 1", "3 to 2"."""
    return text("paytable.ratio", n=f"{value.numerator:,}", d=f"{value.denominator:,}")


def wager_section(sheet: ParSheet | None, rows: Iterable[tuple[str, str, str]]) -> DocSection:
    """The main pay table of a game: per wager (PAR sheet name, label, what it pays) a row with its
    return from the sheet ("not computed" where the sheet has no figure)."""
    body: list[tuple[str, ...]] = [wager_header()]
    body.extend((label, pays, rtp(sheet, name)) for name, label, pays in rows)
    return DocSection(text("paytable.main_heading"), tuple(body), header=True)
