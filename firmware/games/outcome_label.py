"""What a wager's result gives the player, in words: the label shown to people.

The kernel settles every wager with one of the contract's outcome values (``win``, ``lose``,
``push``, ``fold``, ``void``; CONTRACTS.md), which the JSON keeps as they are. That value says how
the wager was settled, not what the player got back: a war pool or Split 21 Stud jackpot won by a
lone seat pays the pot less the commission, less than the ante (``win``, net -1 on a stake of 10).
Tables read by people (the PAR report's outcome rows, ``egm round``'s text) name each result by
what the player gets, from its net and the stake it risked:

=========================  ============================
net, against the stake      what the player gets
=========================  ============================
net > 0                     ``win``
net = 0                     ``stake returned``
-stake < net < 0            ``pays less than the stake``
net = -stake                ``stake lost``
=========================  ============================

A kernel value that says the same stays as it is (``win`` +10, ``lose`` -10, ``push`` 0); one
that does not gives way to what the player gets (``win`` -1 is ``pays less than the stake``).
``fold`` and ``void`` keep their word and add the result (``void, stake returned``). A PAR sheet's
own description of a result comes first: ``seat wins the pot: pays less than the stake``.
"""

from __future__ import annotations

from fractions import Fraction

Number = int | float | Fraction

WIN = "win"
STAKE_RETURNED = "stake returned"
PAYS_LESS = "pays less than the stake"
STAKE_LOST = "stake lost"


def player_gets(net: Number, stake: Number = 1) -> str:
    """What a result of ``net`` on ``stake`` risked gives the player (the table above)."""
    if net > 0:
        return WIN
    if net == 0:
        return STAKE_RETURNED
    return PAYS_LESS if net + stake > 0 else STAKE_LOST


def outcome_label(outcome: str, net: Number, stake: Number = 1) -> str:
    """The label of a result for people: ``outcome`` (a kernel value or a sheet's description)
    with what the player gets, where the outcome alone does not say it."""
    gets = player_gets(net, stake)
    if outcome == "win":
        return outcome if gets == WIN else gets
    if outcome == "lose":
        return outcome if gets == STAKE_LOST else gets
    if outcome == "push":
        return outcome if gets == STAKE_RETURNED else gets
    if outcome in ("fold", "void"):
        return f"{outcome}, {gets}"
    return f"{outcome}: {gets}"
