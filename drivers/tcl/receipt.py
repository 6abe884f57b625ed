"""The TCL layout of a text receipt (``hal.devices.ticket.Receipt``): template 1, one text region
per line, left-justified under each other, after the voucher's regions (ids D onwards, so both
templates are defined at once and neither redefines the other's regions).

A receipt has no barcode, so the printer never reports "validation done" for it: the driver counts
it printed at the top of form that ends the job (``drivers.tcl.driver``).
"""

from __future__ import annotations

from collections.abc import Mapping

from drivers.tcl.codec import Justify, Region, RegionKind, Template
from hal.devices.ticket import MAX_RECEIPT_LINE, MAX_RECEIPT_LINES, Receipt

#: The region ids of the lines, in order (D, E, ... : 20 of them).
LINE_IDS = tuple("DEFGHIJKLMNOPQRSTUVW")[:MAX_RECEIPT_LINES]
#: Dots from one line to the next, and the first line's position.
PITCH, TOP = 44, 40
#: The regions of the receipt's lines (positions in dots on a 432 x 1000 receipt).
RECEIPT_REGIONS: tuple[Region, ...] = tuple(
    Region(rid, 16, TOP + PITCH * n, 400, 40, justify=Justify.LEFT, font=2, kind=RegionKind.TEXT,
           length=MAX_RECEIPT_LINE)
    for n, rid in enumerate(LINE_IDS))
#: Template 1: the receipt.
RECEIPT_TEMPLATE = Template("1", TOP + PITCH * MAX_RECEIPT_LINES + 40, 432, LINE_IDS)


def receipt_fields(receipt: Receipt) -> tuple[str, ...]:
    """The print command's fields: each line, blank ones as one space (the missing ones too)."""
    lines = (*receipt.lines, *("",) * (len(LINE_IDS) - len(receipt.lines)))
    return tuple(line or " " for line in lines)


def lines_from_regions(printed: Mapping[str, str]) -> tuple[str, ...]:
    """The lines a printed receipt shows (trailing blank lines dropped); ValueError if a line
    region is missing."""
    missing = [rid for rid in LINE_IDS if rid not in printed]
    if missing:
        raise ValueError(f"a receipt without its line regions {missing}")
    lines = [printed[rid].strip() for rid in LINE_IDS]
    while lines and not lines[-1]:
        lines.pop()
    return tuple(lines)
