"""A player station's side of a live table: what the terminal and the table link say to each other.

At a live table (``[table]`` in the configuration, issue 24) the round is decided by the table
controller (``egm table serve``); the terminal is one *station* of it. The station keeps the player's
credits, wagers and meters in its own critical memory; the controller journals the round and is the
only party that decides outcomes. The link to the controller (``firmware.table``, a layer above this
one, like the host link) implements :class:`TablePort`; the terminal's table rounds implement
:class:`TableEvents` and are handed to the link by the composition root.

Exactly-once money across the two parties (docs/protocols/table.md):

1. The station commits ``table.bet`` (the stake leaves the credit meter, held for the table) to its
   critical memory, then calls :meth:`TablePort.send_bet`.
2. The controller journals its answer once per ``bet_id`` (accepted into a round, or refused: the
   window had closed, the seat is taken, limits) and sends it; the station commits it
   (:meth:`TableEvents.bet_answered`). The same ``bet_id`` sent again gets the same answer.
3. When the round is settled the controller sends each seat's result; the station commits it
   (:meth:`TableEvents.round_result`) and the link acknowledges it afterwards.
4. On every (re)connection the link asks :meth:`TableEvents.open_bets` and sends them all again, so a
   bet or a result lost with a link or a power cut is answered exactly once.

Every dict here is JSON (str keys, int amounts in credits); the controller's messages are checked
against the protocol's schema by the link before they reach these methods.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class TablePort(ABC):
    """The table link, as the station's rounds use it (implemented by ``firmware.table``)."""

    @abstractmethod
    def send_bet(self, bet: dict[str, Any]) -> None:
        """Send a bet already committed to critical memory: ``{"bet_id", "round_id", "seat",
        "game", "wagers": {name: credits}, "cover": credits}`` (``cover``: the credits the station
        holds for a player-banker's coverage, 0 otherwise). Never blocks; idempotent (the same
        ``bet_id`` may be sent again, and is answered once)."""

    @abstractmethod
    def send_decision(self, decision: dict[str, Any]) -> None:
        """Send a player's decision: ``{"round_id", "seat", "action", "decision_id"}``. Never
        blocks; idempotent by ``decision_id``."""

    @abstractmethod
    def connected(self) -> bool:
        """Whether the station is joined to the table now."""


class TableEvents(ABC):
    """What the link tells the station's rounds (implemented by the cabinet's table rounds).

    Called from the link's thread: implementations hand the call to the terminal's own thread (its
    command queue) and return quickly; a method that commits to critical memory returns only after
    the commit, so the link may acknowledge afterwards.
    """

    @abstractmethod
    def table_snapshot(self, snapshot: dict[str, Any]) -> None:
        """The table as it stands (docs/protocols/table.md, "snapshot"): phase, round, seats with
        their wagers and cards, the dealer's cards, the betting and decision time left, the pool;
        the screens draw it."""

    @abstractmethod
    def bet_answered(self, answer: dict[str, Any]) -> None:
        """``{"bet_id", "accepted": bool, "round_id", "reason"}``: commit ``table.accepted`` or
        ``table.refused`` (the stake comes back) once per ``bet_id``; a repeat is ignored."""

    @abstractmethod
    def decision_requested(self, request: dict[str, Any]) -> None:
        """``{"round_id", "seat", "kind", "actions", "default", "view", "time_left_s"}``: the
        controller waits for this seat's decision (the player's, or autoplay's)."""

    @abstractmethod
    def round_result(self, result: dict[str, Any]) -> None:
        """``{"round_id", "bet_id", "seat", "stakes": {name: credits}, "results": {name: {"outcome",
        "net"}}, "record": {...}}``: commit ``table.result`` (the returns to the credit meter, the
        meters, the round's record for recall) once per ``bet_id``; a repeat is ignored."""

    @abstractmethod
    def open_bets(self) -> list[dict[str, Any]]:
        """Every bet committed and not yet settled or refused, as :meth:`TablePort.send_bet` takes
        them (sent again on every connection)."""

    @abstractmethod
    def link_state(self, up: bool, detail: str) -> None:
        """The link to the controller came up or went down (shown to the player; a bet is not
        offered while it is down)."""
