"""A TITO voucher on paper: the TCL template and regions a :class:`~hal.devices.ticket.Ticket`
prints through, its texts, and its barcode.

Pure functions and frozen data only; the driver sends :data:`REGIONS` and :data:`TEMPLATE` to the
printer and prints :func:`fields` into them, the simulator renders those fields from the
definitions it received and reads them back with :func:`ticket_from_regions`.

Layout (template ``0``, a 2.13 x 6.5 inch ticket at 203 dpi, 432 x 1320 dots; ``docs/protocols/tcl.md``
has the drawing)::

    region  what                      example
    0       venue                     GOLDEN STAR CASINO
    1, 2    address lines             1 MAIN STREET / RENO NV 89501
    3       type                      CASHOUT TICKET
    4       validation (readable)     VALIDATION 12-3456-7890-1234-5678
    5       barcode (I 2 of 5)        123456789012345678
    6, 7    date, time                DATE 03/14/2025, TIME 13:45:09
    8       ticket number             TICKET # 0042
    9       amount in figures         $20.50
    A       amount in words           TWENTY DOLLARS AND 50 CENTS
    B       machine number            MACHINE # EGM-0042
    C       expiry                    VOID AFTER 30 DAYS | NEVER EXPIRES
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping

from drivers.tcl.codec import Justify, Region, RegionKind, Template
from hal.devices.ticket import MAX_TICKET_CENTS, VALIDATION_DIGITS, Ticket, TicketKind

# --- amount in words -----------------------------------------------------------------------------
_ONES = ["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "TEN", "ELEVEN", "TWELVE", "THIRTEEN", "FOURTEEN", "FIFTEEN", "SIXTEEN", "SEVENTEEN", "EIGHTEEN", "NINETEEN"]
_TENS = ["_", "_", "TWENTY", "THIRTY", "FORTY", "FIFTY", "SIXTY", "SEVENTY", "EIGHTY", "NINETY"]


def _below_thousand(n: int) -> list[str]:
    words: list[str] = []
    if n >= 100:
        words += [_ONES[n // 100], "HUNDRED"]
        n %= 100
    if n >= 20:
        words.append(_TENS[n // 10])
        n %= 10
        if n:
            words.append(_ONES[n])
    elif n or not words:
        words.append(_ONES[n])
    return words


def dollars_in_words(dollars: int) -> str:
    """``1234`` -> ``ONE THOUSAND TWO HUNDRED THIRTY FOUR`` (0..999,999)."""
    if not 0 <= dollars <= 999_999:
        raise ValueError(f"dollars in words: 0..999999, not {dollars}")
    thousands, rest = divmod(dollars, 1000)
    words = _below_thousand(thousands) + ["THOUSAND"] if thousands else []
    if rest or not words:
        words += _below_thousand(rest)
    return " ".join(words)


def amount_in_words(cents: int) -> str:
    """``2050`` -> ``TWENTY DOLLARS AND 50 CENTS``; the cents always as two digits."""
    if isinstance(cents, bool) or not isinstance(cents, int) or not 0 <= cents <= MAX_TICKET_CENTS:
        raise ValueError(f"an amount is 0..{MAX_TICKET_CENTS} whole cents, not {cents!r}")
    dollars, rest = divmod(cents, 100)
    unit = "DOLLAR" if dollars == 1 else "DOLLARS"
    return f"{dollars_in_words(dollars)} {unit} AND {rest:02d} CENTS"


def amount_in_figures(cents: int) -> str:
    """``123456`` -> ``$1,234.56``."""
    return f"${cents // 100:,}.{cents % 100:02d}"


def parse_figures(text: str) -> int:
    match = re.fullmatch(r"\$(\d{1,3}(?:,\d{3})*)\.(\d\d)", text)
    if match is None:
        raise ValueError(f"not an amount in figures: {text!r}")
    return int(match[1].replace(",", "")) * 100 + int(match[2])


# --- Interleaved 2 of 5 --------------------------------------------------------------------------
#: Each digit as five elements, ``w`` wide and ``n`` narrow (two wide in every digit).
ITF_DIGITS: dict[str, str] = {
    "0": "nnwwn", "1": "wnnnw", "2": "nwnnw", "3": "wwnnn", "4": "nnwnw",
    "5": "wnwnn", "6": "nwwnn", "7": "nnnww", "8": "wnnwn", "9": "nwnwn",
}
_ITF_BY_PATTERN = {pattern: digit for digit, pattern in ITF_DIGITS.items()}
ITF_START = "nnnn"         #: bar, space, bar, space
ITF_STOP = "wnn"           #: bar, space, bar


def itf_check_digit(digits: str) -> int:
    """The mod-10 check digit: weights 3, 1, 3, ... from the rightmost data digit."""
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"Interleaved 2 of 5 encodes digits, not {digits!r}")
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(digits)))
    return (10 - total % 10) % 10


def itf_encode(digits: str, *, check_digit: bool = False, wide: int = 3) -> str:
    """The bar/space pattern of ``digits`` as modules: ``1`` bar, ``0`` space (no quiet zones).

    With ``check_digit`` the mod-10 digit is appended. The symbol holds an even count of digits:
    an odd count gets a leading ``0`` (after the check digit is computed, as GS1 does).
    """
    if not (digits.isascii() and digits.isdigit()) or not digits:
        raise ValueError(f"Interleaved 2 of 5 encodes one or more digits, not {digits!r}")
    if not 2 <= wide <= 4:
        raise ValueError(f"a wide element is 2..4 modules, not {wide}")
    if check_digit:
        digits += str(itf_check_digit(digits))
    if len(digits) % 2:
        digits = "0" + digits
    elements = ITF_START
    for a, b in zip(digits[::2], digits[1::2], strict=True):
        elements += "".join(x + y for x, y in zip(ITF_DIGITS[a], ITF_DIGITS[b], strict=True))
    elements += ITF_STOP
    out = []
    for i, element in enumerate(elements):
        out.append(("1" if i % 2 == 0 else "0") * (wide if element == "w" else 1))
    return "".join(out)


def _runs(pattern: str) -> list[int]:
    runs: list[int] = []
    previous = ""
    for module in pattern:
        if module == previous:
            runs[-1] += 1
        else:
            runs.append(1)
            previous = module
    return runs


def itf_decode(pattern: str, *, check_digit: bool = False) -> str:
    """The digits of a bar/space ``pattern`` (``1`` bar, ``0`` space; quiet zones allowed).

    ``ValueError`` if it is not a well-formed symbol (start, stop, digit patterns, width ratio) or,
    with ``check_digit``, if the last digit does not check; the check digit is then removed.
    """
    if set(pattern) - {"0", "1"}:
        raise ValueError("a bar/space pattern is made of 0 and 1")
    runs = _runs(pattern.strip("0"))
    if len(runs) < 7 or (len(runs) - 7) % 10:
        raise ValueError(f"{len(runs)} bars and spaces do not make an Interleaved 2 of 5 symbol")
    narrow, wide = min(runs), max(runs)
    if wide < 2 * narrow:
        raise ValueError("no wide elements: not Interleaved 2 of 5")
    threshold = (narrow + wide) / 2
    elements = "".join("w" if run > threshold else "n" for run in runs)
    if not elements.startswith(ITF_START) or not elements.endswith(ITF_STOP):
        raise ValueError("no Interleaved 2 of 5 start or stop pattern")
    body = elements[len(ITF_START):-len(ITF_STOP)]
    digits = []
    for i in range(0, len(body), 10):
        pair = body[i:i + 10]
        for part in (pair[0::2], pair[1::2]):
            digit = _ITF_BY_PATTERN.get(part)
            if digit is None:
                raise ValueError(f"{part} is not an Interleaved 2 of 5 digit")
            digits.append(digit)
    text = "".join(digits)
    if check_digit:
        data, check = text[:-1], text[-1]
        if itf_check_digit(data) != int(check):
            raise ValueError(f"check digit {check} does not match {data}")
        return data
    return text


# --- the ticket on the template --------------------------------------------------------------------
_VALIDATION_PREFIX = "VALIDATION "


def expiry_text(days: int) -> str:
    """``0`` -> ``NEVER EXPIRES``; ``30`` -> ``VOID AFTER 30 DAYS``."""
    if days == 0:
        return "NEVER EXPIRES"
    return f"VOID AFTER {days} DAY{'' if days == 1 else 'S'}"


def texts(ticket: Ticket) -> dict[str, str]:
    """Region id -> what is printed in it."""
    address = (*ticket.address, "", "")[:2]
    return {
        "0": ticket.venue,
        "1": address[0],
        "2": address[1],
        "3": ticket.kind.value,
        "4": _VALIDATION_PREFIX + ticket.validation_text,
        "5": ticket.validation,
        "6": f"DATE {ticket.issued:%m/%d/%Y}",
        "7": f"TIME {ticket.issued:%H:%M:%S}",
        "8": f"TICKET # {ticket.sequence:04d}",
        "9": amount_in_figures(ticket.amount_cents),
        "A": amount_in_words(ticket.amount_cents),
        "B": f"MACHINE # {ticket.machine}",
        "C": expiry_text(ticket.expiry_days),
    }


def fields(ticket: Ticket) -> tuple[str, ...]:
    """The print command's fields: one per region of :data:`TEMPLATE`, in its order."""
    printed = texts(ticket)
    return tuple(printed[region] for region in TEMPLATE.regions)


def ticket_from_regions(printed: Mapping[str, str], barcode: str) -> Ticket:
    """The ticket a printed one shows: region id -> text, and its barcode read back.

    ``ValueError`` if any field is missing or unreadable, or if the readable validation
    number, the barcode and the amount in words and in figures do not agree.
    """
    def take(region: str, prefix: str = "") -> str:
        text = printed.get(region)
        if text is None or not text.startswith(prefix):
            raise ValueError(f"region {region}: {text!r} does not start with {prefix!r}")
        return text[len(prefix):]

    validation_text = take("4", _VALIDATION_PREFIX)
    validation = "".join(c for c in validation_text if c.isdigit())
    if len(validation) != VALIDATION_DIGITS:
        raise ValueError(f"unreadable validation {printed.get('4')!r}")
    if barcode != validation:
        raise ValueError(f"the barcode {barcode} is not the validation {validation}")
    cents = parse_figures(take("9"))
    if take("A") != amount_in_words(cents):
        raise ValueError(f"amount in words {take('A')!r} is not {amount_in_figures(cents)}")
    issued = dt.datetime.strptime(take("6", "DATE ") + " " + take("7", "TIME "),
                                  "%m/%d/%Y %H:%M:%S")
    expiry = take("C")
    if expiry == "NEVER EXPIRES":
        days = 0
    else:
        found = re.fullmatch(r"VOID AFTER (\d{1,4}) DAYS?", expiry)
        if found is None:
            raise ValueError(f"unreadable expiry {expiry!r}")
        days = int(found[1])
    sequence = take("8", "TICKET # ")
    if not (len(sequence) == 4 and sequence.isdigit()):
        raise ValueError(f"unreadable ticket number {sequence!r}")
    address = tuple(line for line in (take("1"), take("2")) if line)
    try:
        kind = TicketKind(take("3"))
    except ValueError:
        raise ValueError(f"unknown voucher type {take('3')!r}") from None
    return Ticket(take("0"), address, take("B", "MACHINE # "), issued, cents, validation,
                  validation_text, int(sequence), days, kind)


# --- the template the driver defines -------------------------------------------------------------
def _region(rid: str, y: int, *, length: int = 40, font: int = 2, x: int = 16,
            width: int = 400, height: int = 40, justify: Justify = Justify.CENTRE,
            kind: RegionKind = RegionKind.TEXT) -> Region:
    return Region(rid, x, y, width, height, justify=justify, font=font, kind=kind, length=length)


#: The regions of the voucher (positions in dots on a 432 x 1320 ticket).
REGIONS: tuple[Region, ...] = (
    _region("0", 40, font=4, height=56),
    _region("1", 100),
    _region("2", 140),
    _region("3", 200, font=4, height=56),
    _region("4", 270),
    _region("5", 320, length=VALIDATION_DIGITS, height=160, kind=RegionKind.BARCODE_I2OF5),
    _region("6", 500, width=196, justify=Justify.LEFT),
    _region("7", 500, x=220, width=196, justify=Justify.RIGHT),
    _region("8", 540, width=196, justify=Justify.LEFT),
    _region("9", 600, font=5, height=72),
    _region("A", 690, length=90, height=72),
    _region("B", 780),
    _region("C", 820),
)
#: Template 0: the voucher. The barcode region comes late in the order, so a ticket that stops
#: halfway (paper out, jam, power cut) never carries a validation number.
TEMPLATE = Template("0", 1320, 432, ("0", "1", "2", "3", "6", "7", "8", "9", "A", "B", "C",
                                     "4", "5"))
