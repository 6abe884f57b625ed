"""Pay tables of the side bets: each category pays N:1, 0 loses.

A game declares a table as a subclass of :class:`PayTable` with one integer field per category and
the categories, best first, in ``CATEGORIES``. In TOML the table is given by category name; on the
command line as a comma list in the order of ``CATEGORIES``: every category given, or, where
``SHORT_LIST_LOSES`` is set, the first ones, the categories left out losing.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator

from firmware.games.base import WagerResult
from firmware.games.options import GameOptions, split_list
from firmware.games.results import paid

#: The highest N a category may pay.
MAX_PAY = 100_000


def pay(default: int) -> Any:
    """A category's field: N:1, 0 to :data:`MAX_PAY`, ``default`` when not configured."""
    return Field(default, ge=0, le=MAX_PAY)


class PayTable(GameOptions):
    """A pay table by category name; see the module docstring."""

    CATEGORIES: ClassVar[tuple[str, ...]] = ()
    #: Whether a command-line list may stop early, the categories left out paying 0 (losing).
    SHORT_LIST_LOSES: ClassVar[bool] = False

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        data = split_list(data)
        if not isinstance(data, list | tuple):
            return data
        names = cls.CATEGORIES
        if cls.SHORT_LIST_LOSES:
            if len(data) > len(names):
                raise ValueError(f"at most {len(names)} pays ({', '.join(names)})")
            return {name: data[i] if i < len(data) else 0 for i, name in enumerate(names)}
        if len(data) != len(names):
            raise ValueError(f"give {len(names)} pays, in the order {', '.join(names)}; got {len(data)}")
        return dict(zip(names, data, strict=True))

    def pays(self, category_name: str) -> int:
        """N of a category paying N:1 (0: it loses)."""
        return int(getattr(self, category_name))

    def result(self, category_name: str, stake: int) -> WagerResult:
        """What a wager of ``stake`` credits on a hand of this category wins or loses."""
        return paid(stake, self.pays(category_name))
