"""The SAS meters: one table from each meter the SAS meter polls read to the terminal's
critical-memory meters (:mod:`firmware.ledger.meters`, all in cents or counts).

A row serves a long poll field (``drivers.sas.messages.METER_LAYOUTS``), a meter code of the
selected and extended meter polls 0x2F / 0x6F / 0xAF (``METER_CODE_WIDTHS``), or both. Money
meters are sent in credits of the accounting denomination (whole credits: a remainder below one
credit is not sent), in cents or in whole dollars as SAS gives each one; the codec rolls every
value over at its BCD width. A meter the terminal does not keep has no ledger meters and reads 0;
docs/protocols/sas.md lists the table (a test keeps the page equal to it).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass


class Unit(enum.Enum):
    CREDITS = "credits"       #: credits of the accounting denomination
    CENTS = "cents"
    DOLLARS = "dollars"       #: whole dollars
    COUNT = "count"


@dataclass(frozen=True, slots=True)
class SasMeter:
    """One SAS meter and where its value comes from."""

    code: int | None          #: its meter code in 0x2F / 0x6F / 0xAF, None if it has none here
    field: str | None         #: its field in the meter long polls 0x0F-0x20, None if in none
    name: str
    unit: Unit
    sources: tuple[str, ...]  #: the ledger meters it sums; () = not kept by the terminal, reads 0
    note: str = ""

    def read(self, meters: Mapping[str, int], accounting_denom_cents: int) -> int:
        total = sum(meters.get(name, 0) for name in self.sources)
        if self.unit is Unit.CREDITS:
            return total // accounting_denom_cents
        if self.unit is Unit.DOLLARS:
            return total // 100
        return total


def _bills(dollars: int) -> SasMeter:
    return SasMeter(None, f"bills_{dollars}", f"${dollars} bills accepted", Unit.COUNT,
                    (f"bills_in_by_denom.{dollars * 100}",))


_C, _P, _D, _N = Unit.CREDITS, Unit.CENTS, Unit.DOLLARS, Unit.COUNT

#: The table. Codes and their meaning are SAS 6.02 as recalled in docs/protocols/sas.md ("recall").
SAS_METERS: tuple[SasMeter, ...] = (
    SasMeter(0x00, "total_coin_in", "total coin in (credits wagered)", _C, ("coin_in",)),
    SasMeter(0x01, "total_coin_out", "total coin out (credits won)", _C, ("coin_out",)),
    SasMeter(0x02, "total_jackpot", "total jackpot", _C, ("jackpot",)),
    SasMeter(0x03, None, "total hand paid cancelled credits", _C, ("handpay_cancelled_credits",)),
    SasMeter(0x04, "total_cancelled_credits", "total cancelled credits (every cash-out)", _C,
             ("handpay_cancelled_credits", "ticket_out", "transfers_out")),
    SasMeter(0x05, "games_played", "games played", _N, ("games_played",)),
    SasMeter(0x06, "games_won", "games won", _N, ("games_won",)),
    SasMeter(0x07, "games_lost", "games lost", _N, ("games_lost",)),
    SasMeter(0x08, None, "credits from the coin acceptor", _C, (), "no coin acceptor"),
    SasMeter(0x09, None, "credits paid from the hopper", _C, (), "no hopper"),
    SasMeter(0x0A, None, "credits from coins to drop", _C, (), "no coin acceptor"),
    SasMeter(0x0B, None, "credits from bills accepted", _C, ("bills_in",)),
    SasMeter(0x0C, "current_credits", "current credits", _C, ("credits",)),
    SasMeter(0x0D, None, "cashable ticket in", _P, ("ticket_in_cashable",)),
    SasMeter(0x0E, None, "cashable ticket out", _P, ("ticket_out_cashable",)),
    SasMeter(0x0F, None, "restricted ticket in", _P, ("ticket_in_noncashable",)),
    SasMeter(0x10, None, "restricted ticket out", _P, ("ticket_out_noncashable",)),
    SasMeter(0x11, None, "cashable tickets in (count)", _N, (), "tickets are not counted"),
    SasMeter(0x12, None, "cashable tickets out (count)", _N, (), "tickets are not counted"),
    SasMeter(0xA0, None, "in-house cashable transfers to the machine", _P, ("transfers_in",)),
    SasMeter(0xB8, None, "in-house cashable transfers to the host", _P, ("transfers_out",)),
    SasMeter(None, "total_drop", "total drop (what the cash box holds)", _C, ("bills_in", "ticket_in")),
    SasMeter(None, "games_since_power_up", "games since power up", _N, ("games_since_power_up",)),
    SasMeter(None, "games_since_door_closed", "games since the slot door closed", _N,
             ("games_since_door_close",)),
    SasMeter(None, "slot_door_opened", "slot (main) door opened", _N, ("door_open.main",)),
    SasMeter(None, "power_reset", "power resets", _N, ("power_reset",)),
    SasMeter(None, "cumulative_progressive_wins", "cumulative progressive wins", _C, (),
             "no progressives"),
    *(_bills(dollars) for dollars in (1, 5, 10, 20, 50, 100)),
    SasMeter(None, "total_bills_dollars", "total value of bills accepted", _D, ("bills_in",)),
)

#: The rows by meter code and by long poll field.
BY_CODE: dict[int, SasMeter] = {m.code: m for m in SAS_METERS if m.code is not None}
BY_FIELD: dict[str, SasMeter] = {m.field: m for m in SAS_METERS if m.field is not None}


def markdown_table() -> str:
    """The table as docs/protocols/sas.md shows it."""
    lines = ["| code | long poll field | meter | unit | ledger meters |", "| --- | --- | --- | --- | --- |"]
    for m in SAS_METERS:
        code = "" if m.code is None else f"{m.code:02X}"
        sources = " + ".join(f"`{s}`" for s in m.sources) or f"not kept, reads 0 ({m.note})"
        lines.append(f"| {code} | {'' if m.field is None else f'`{m.field}`'} | {m.name} | "
                     f"{m.unit.value} | {sources} |")
    return "\n".join(lines)
