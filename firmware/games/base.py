"""What every game supplies to the round kernel.

A game is a set of pure rule steps over a mutable per-round state: it never touches a device, a file,
the clock or the RNG. Cards come from a :class:`~firmware.cards.source.CardSource`, so a round is a
function of its options, wagers, decisions and card sequence, and replays exactly from its record.

The kernel (``firmware.kernel``) calls, in this order::

    state = game.new_round(options, wagers)     # BETTING: wagers already validated
    game.deal(state, source)                    # DEALING
    game.pending_decisions(state) / game.decide(state, seat, action)   # DECISIONS (if any)
    game.showdown(state, source)                # WARS / SHOWDOWN
    game.settle(state)                          # SETTLEMENT -> results per seat and wager
    game.record(state)                          # the game's part of the round record (JSON)
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

from firmware.cards.source import CardSource
from firmware.games.errors import DecisionError, GameError
from firmware.games.options import GameOptions
from firmware.rng.interface import RandomSource

#: Wagers of one round: seat number (1-based) -> wager name -> integer credits.
Wagers = Mapping[int, Mapping[str, int]]

#: A game's options model (its subclass of :class:`GameOptions`).
OptionsT = TypeVar("OptionsT", bound=GameOptions)
#: A game's per-round state (the object its ``new_round`` returns and every later step takes).
StateT = TypeVar("StateT")


class Outcome(enum.StrEnum):
    WIN = "win"
    LOSE = "lose"
    PUSH = "push"
    FOLD = "fold"
    VOID = "void"


class WagerResult(NamedTuple):
    """How one wager ended: its outcome and the signed credit change (a 1:1 win of 10 is +10).

    A NamedTuple rather than a dataclass: a round creates several, and simulation creates millions.
    """

    outcome: Outcome
    net: int

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome.value, "net": self.net}


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    """The kernel waits in DECISIONS until every open request is answered (or times out)."""

    seat: int
    kind: str                      # "play_or_fold", "set_hand", ...
    actions: tuple[str, ...]       # what the player may answer, e.g. ("play", "fold")
    default: str                   # the documented action taken on time-out
    hint: str | None = None        # the optimal action, where the jurisdiction allows hints


@dataclass(slots=True)
class Settlement:
    """Results of a round: per seat and wager, plus the house's own result."""

    results: dict[int, dict[str, WagerResult]] = field(default_factory=dict)
    #: The amounts finally at stake per seat and wager (after decisions such as PLAY or fold).
    stakes: dict[int, dict[str, int]] = field(default_factory=dict)
    house_net: int = 0
    #: Of ``house_net``, the fee the house kept from a contest among the players (the war pool's
    #: commission): a live table meters it apart (``pool_commission``).
    commission: int = 0

    @property
    def players_net(self) -> int:
        return sum(r.net for seat in self.results.values() for r in seat.values())


class Game(ABC, Generic[OptionsT, StateT]):
    """One game's rules. Subclasses are stateless; per-round state lives in the object ``new_round`` returns.

    Generic over the game's options model (``OptionsT``) and round state (``StateT``): each game
    names both (``class ThreeCardPoker(Game[ThreeCardPokerOptions, ThreeCardRound])``), so its steps
    and the kernel that drives them are checked against the real types.
    """

    #: Game id of CONTRACTS.md.
    id: ClassVar[str]
    #: Human name for screens and reports.
    name: ClassVar[str]
    #: Wager names, lower case, in the order a record lists them.
    wager_names: ClassVar[tuple[str, ...]]
    #: Wagers placed only by a decision, mapped to the wager they raise (Three Card Poker's PLAY
    #: raises ANTE): the PAR sheet reports them together, per unit of the raised wager.
    raises: ClassVar[Mapping[str, str]] = {}
    #: The pydantic model of the game's options (the rules' (option) settings). Typed as the base
    #: model: a class variable cannot name the type parameter, and the registry builds options
    #: from it for a game it knows only by id.
    options_model: ClassVar[type[GameOptions]]
    #: Whether the game ever waits for players (DECISIONS state).
    has_decisions: ClassVar[bool] = False
    #: How many dice the game rolls (``--dice``), and their sides.
    dice: ClassVar[int] = 0
    dice_sides: ClassVar[int] = 6
    #: Highest seat number.
    max_seats: ClassVar[int] = 7
    #: Wagers exempt from the table and round maximums (a player-banker's wager has no maximum,
    #: DS9 [0015]); credits still cover them.
    uncapped_wagers: ClassVar[frozenset[str]] = frozenset()
    #: Fees placed like wagers whose amount the options fix (DS9's collection): exempt from every
    #: table limit, still covered by credits and checked by the game's ``validate_wagers``.
    fee_wagers: ClassVar[frozenset[str]] = frozenset()

    @abstractmethod
    def shoe(self, options: OptionsT) -> tuple[int, ...]:
        """The shoe composition the options call for (shuffled afresh every round by the RNG shoe)."""

    def roll_dice(self, rng: RandomSource) -> tuple[int, ...]:
        """The round's dice from the certified RNG (each 1..``dice_sides``, unbiased)."""
        return tuple(rng.randbelow(self.dice_sides) + 1 for _ in range(self.dice))

    def check_dice(self, dice: tuple[int, ...]) -> None:
        """Refuse dice of the wrong count or face values (``--dice``, a corrupt record)."""
        if len(dice) != self.dice or any(not 1 <= d <= self.dice_sides for d in dice):
            raise GameError(
                f"{self.id} rolls {self.dice} dice of 1..{self.dice_sides}, not {list(dice)}"
            )

    # --- betting -------------------------------------------------------------------------------
    @abstractmethod
    def validate_wagers(self, options: OptionsT, wagers: Wagers) -> None:
        """Game rules on wagers (required pairs, allowed names); raise WagerError. Limits are the kernel's."""

    def reserved_stake(self, options: OptionsT, wagers: Wagers) -> int:
        """Credits the round may still stake after the deal (PLAY on a decision, a fee taken at
        settlement) for validated ``wagers``: the kernel's credit check reserves them before any
        card is dealt, so a round can always complete. Most games stake nothing later."""
        return 0

    @abstractmethod
    def automatic_wagers(self, options: OptionsT, seats: int, unit: int) -> dict[int, dict[str, int]]:
        """The documented automatic wagers of ``egm simulate`` / autoplay for ``seats`` seats."""

    # --- round steps ---------------------------------------------------------------------------
    @abstractmethod
    def new_round(self, options: OptionsT, wagers: Wagers, dice: tuple[int, ...] | None = None) -> StateT:
        """A fresh round state for validated wagers."""

    @abstractmethod
    def deal(self, state: StateT, source: CardSource) -> None:
        """Deal the initial cards in the documented order."""

    def pending_decisions(self, state: StateT) -> list[DecisionRequest]:
        """Decisions still awaited; games without decisions have none."""
        return []

    def decide(self, state: StateT, seat: int, action: str) -> None:
        """Apply one player's decision; raise DecisionError if it is not allowed."""
        raise DecisionError(f"{self.id} takes no decisions")

    def decision_time_limit(self, options: OptionsT) -> float | None:
        """The game's own time limit for decisions, in seconds, if its options set one; None lets
        the terminal's ``games.decision_timeout_s`` apply."""
        return None

    def automatic_decision(self, state: StateT, request: DecisionRequest) -> str:
        """The documented automatic strategy (simulate, autoplay)."""
        return request.default

    @abstractmethod
    def showdown(self, state: StateT, source: CardSource) -> None:
        """Wars, pool contest or showdown; may draw more cards."""

    @abstractmethod
    def settle(self, state: StateT) -> Settlement:
        """Every wager's outcome and net, and the house's result; credits are conserved."""

    def decision_view(self, state: StateT, seat: int) -> dict[str, Any]:
        """What the player at ``seat`` may see while deciding (the screens draw it): their own cards
        as card strings, never a card the rules keep face down. Games with decisions override it."""
        return {}

    @abstractmethod
    def record(self, state: StateT) -> dict[str, Any]:
        """The game's part of the round record (``seats``, ``dealer`` and the game's own keys)."""
