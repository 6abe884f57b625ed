"""A TITO voucher: its fields, the TCL template and regions it prints through, and its barcode.

Pure functions and frozen data only; the driver sends :data:`REGIONS` and :data:`TEMPLATE` to the
printer and prints :meth:`Voucher.fields` into them, the simulator renders those fields from the
definitions it received and reads them back with :meth:`Voucher.from_regions`.

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
import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass

from drivers.tcl.codec import Justify, Region, RegionKind, Template

# --- amount in words -----------------------------------------------------------------------------
_ONES = ["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "TEN", "ELEVEN", "TWELVE", "THIRTEEN", "FOURTEEN", "FIFTEEN", "SIXTEEN", "SEVENTEEN", "EIGHTEEN", "NINETEEN"]
_TENS = ["_", "_", "TWENTY", "THIRTY", "FORTY", "FIFTY", "SIXTY", "SEVENTY", "EIGHTY", "NINETY"]
#: The largest amount a voucher carries: $999,999.99.
MAX_CENTS = 99_999_999


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
    if isinstance(cents, bool) or not isinstance(cents, int) or not 0 <= cents <= MAX_CENTS:
        raise ValueError(f"an amount is 0..{MAX_CENTS} whole cents, not {cents!r}")
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


# --- the voucher ---------------------------------------------------------------------------------
class VoucherKind(enum.Enum):
    """What the voucher is worth to the player; the value is the line printed on it."""

    CASHABLE = "CASHOUT TICKET"
    RESTRICTED = "PLAYABLE ONLY"               #: restricted promotional credits
    NON_CASHABLE = "NON-CASHABLE PROMO"
    TEST = "TEST TICKET - VOID"                #: the service menu's printer test: worth nothing


VALIDATION_DIGITS = 18
_TEXT = re.compile(r"[ -\]_-{}~]*")     # printable ASCII without '^' and '|'
_VALIDATION_TEXT = re.compile(r"VALIDATION (\d\d)-(\d{4})-(\d{4})-(\d{4})-(\d{4})")


def format_validation(validation: str) -> str:
    """``123456789012345678`` -> ``12-3456-7890-1234-5678``."""
    v = validation
    return f"{v[:2]}-{v[2:6]}-{v[6:10]}-{v[10:14]}-{v[14:]}"


def _text(value: str, what: str, longest: int, *, empty: bool = False) -> None:
    if not isinstance(value, str) or not _TEXT.fullmatch(value):
        raise ValueError(f"a voucher's {what} is printable ASCII without '^' or '|', not {value!r}")
    if len(value) > longest or (not empty and not value.strip()):
        raise ValueError(f"a voucher's {what} is 1..{longest} characters, not {value!r}")


@dataclass(frozen=True, slots=True)
class Voucher:
    """One TITO voucher, validated: everything printed on it."""

    venue: str
    address: tuple[str, ...]
    machine: str
    issued: dt.datetime                   #: local time of the cabinet, whole seconds
    amount_cents: int
    validation: str                       #: 18 digits, printed and barcoded
    sequence: int                         #: ticket number, 0..9999
    expiry_days: int                      #: 0: never expires
    kind: VoucherKind = VoucherKind.CASHABLE

    def __post_init__(self) -> None:
        _text(self.venue, "venue", 40)
        if not isinstance(self.address, tuple) or len(self.address) > 2:
            raise ValueError(f"a voucher has at most 2 address lines, not {self.address!r}")
        for line in self.address:
            _text(line, "address line", 40)
        _text(self.machine, "machine number", 20)
        if not isinstance(self.issued, dt.datetime) or self.issued.microsecond:
            raise ValueError(f"issued is a datetime in whole seconds, not {self.issued!r}")
        if (isinstance(self.amount_cents, bool) or not isinstance(self.amount_cents, int)
                or not 1 <= self.amount_cents <= MAX_CENTS):
            raise ValueError(f"a voucher is worth 1..{MAX_CENTS} cents, not {self.amount_cents!r}")
        if not (isinstance(self.validation, str) and self.validation.isascii()
                and self.validation.isdigit() and len(self.validation) == VALIDATION_DIGITS):
            raise ValueError(f"a validation number is {VALIDATION_DIGITS} digits, "
                             f"not {self.validation!r}")
        for name in ("sequence", "expiry_days"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 9999:
                raise ValueError(f"a voucher's {name} is 0..9999, not {value!r}")
        if not isinstance(self.kind, VoucherKind):
            raise ValueError(f"a voucher kind is a VoucherKind, not {self.kind!r}")

    @property
    def amount_words(self) -> str:
        return amount_in_words(self.amount_cents)

    @property
    def expiry_text(self) -> str:
        if self.expiry_days == 0:
            return "NEVER EXPIRES"
        return f"VOID AFTER {self.expiry_days} DAY{'' if self.expiry_days == 1 else 'S'}"

    def texts(self) -> dict[str, str]:
        """Region id -> what is printed in it."""
        address = (*self.address, "", "")[:2]
        return {
            "0": self.venue,
            "1": address[0],
            "2": address[1],
            "3": self.kind.value,
            "4": f"VALIDATION {format_validation(self.validation)}",
            "5": self.validation,
            "6": f"DATE {self.issued:%m/%d/%Y}",
            "7": f"TIME {self.issued:%H:%M:%S}",
            "8": f"TICKET # {self.sequence:04d}",
            "9": amount_in_figures(self.amount_cents),
            "A": self.amount_words,
            "B": f"MACHINE # {self.machine}",
            "C": self.expiry_text,
        }

    def fields(self) -> tuple[str, ...]:
        """The print command's fields: one per region of :data:`TEMPLATE`, in its order."""
        texts = self.texts()
        return tuple(texts[region] for region in TEMPLATE.regions)

    @classmethod
    def from_regions(cls, texts: Mapping[str, str], barcode: str) -> Voucher:
        """The voucher a printed ticket shows: region id -> text, and its barcode read back.

        ``ValueError`` if any field is missing or unreadable, or if the readable validation
        number, the barcode and the amount in words and in figures do not agree.
        """
        def take(region: str, prefix: str = "") -> str:
            text = texts.get(region)
            if text is None or not text.startswith(prefix):
                raise ValueError(f"region {region}: {text!r} does not start with {prefix!r}")
            return text[len(prefix):]

        match = _VALIDATION_TEXT.fullmatch(take("4"))
        if match is None:
            raise ValueError(f"unreadable validation {texts.get('4')!r}")
        validation = "".join(match.groups())
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
            kind = VoucherKind(take("3"))
        except ValueError:
            raise ValueError(f"unknown voucher type {take('3')!r}") from None
        return cls(take("0"), address, take("B", "MACHINE # "), issued, cents, validation,
                   int(sequence), days, kind)


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
