"""TITO validation numbers: the 18-digit SAS format, and the numbers this terminal makes offline.

A validation number is 18 ASCII digits: a 2-digit validation system id, then 16 digits. It is
printed ``SS-NNNN-NNNN-NNNN-NNNN`` (:func:`format_validation`) and barcoded as
the bare digits. :func:`parse_validation` accepts either form (or groups separated by spaces) and
refuses everything else.

Offline (terminal-generated) numbers have system id ``00``. Their 16 digits are this product's own
algorithm (the SAS "secure enhanced" algorithm is not reproduced; docs/cashless.md):

* a 32-byte key, random at first use and kept in critical memory (the ledger setting
  :data:`KEY_SETTING`), never printed or reported;
* for the voucher sequence number ``s`` of terminal ``t``, candidate blocks
  ``HMAC-SHA256(key, DOMAIN || 0x00 || len(t) as 2 bytes || t (UTF-8) || s as 8 bytes || c as 4 bytes)``
  for the counter ``c = 0, 1, 2, ...`` (all integers big-endian);
* each block's first 8 bytes, a 64-bit integer ``x``, are accepted only if ``x`` is below
  :data:`ACCEPT_BELOW`, the largest multiple of 10^16 that fits in 64 bits; the number is then
  ``x mod 10^16``. Every 16-digit value has exactly ``ACCEPT_BELOW / 10^16 = 1844`` accepted
  preimages, so the reduction is exactly uniform (rejection sampling; a block is rejected with
  probability about 3.6 in 10,000 and the next counter is tried).

So numbers are reproducible from (key, terminal, sequence) and, without the key, unguessable from
each other. Uniqueness against the ledger is the voucher book's job (``vouchers.VoucherBook``).
"""

from __future__ import annotations

import hmac
import itertools
import os
import re
from typing import TYPE_CHECKING, Any

from firmware.cashless.errors import VoucherError

if TYPE_CHECKING:
    from firmware.ledger.ledger import Ledger


def format_validation(validation: str) -> str:
    """``123456789012345678`` -> ``12-3456-7890-1234-5678`` (how a voucher prints it)."""
    v = validation
    return f"{v[:2]}-{v[2:6]}-{v[6:10]}-{v[10:14]}-{v[14:]}"


SYSTEM_ID_OFFLINE = "00"               #: the validation system id of terminal-generated numbers
MODULUS = 10**16                       #: the 16 digits after the system id
CANDIDATE_BITS = 64
#: Candidates at or above this are rejected: the largest multiple of MODULUS below 2**64.
ACCEPT_BELOW = ((1 << CANDIDATE_BITS) // MODULUS) * MODULUS
DOMAIN = b"egm-tito-offline-validation-v1"
KEY_BYTES = 32
#: The ledger setting that keeps the key: ``{"key": "<64 hex digits>"}``.
KEY_SETTING = "cashless.validation_key"
MAX_COUNTER = (1 << 32) - 1

_PLAIN = re.compile(r"[0-9]{18}")
_GROUPED = re.compile(r"([0-9]{2})[- ]([0-9]{4})[- ]([0-9]{4})[- ]([0-9]{4})[- ]([0-9]{4})")
_LONGEST_INPUT = 64


def _show(text: str) -> str:
    """``text`` for an error message: one line, at most 60 characters whatever it holds."""
    shown = repr(text[:60])
    return shown if len(shown) <= 60 and len(text) <= 60 else shown[:56] + "..." + shown[0]


def parse_validation(text: Any) -> str:
    """The 18 digits of a validation number typed, scanned or printed.

    Accepted: exactly 18 ASCII digits, or the printed grouping ``SS-NNNN-NNNN-NNNN-NNNN`` with a
    dash or a space between groups; surrounding ASCII spaces are ignored. Anything else (other
    characters, other lengths or groupings, non-ASCII digits, non-text) is a :class:`VoucherError`.
    """
    if not isinstance(text, str):
        raise VoucherError(f"a validation number is text, not {type(text).__name__}")
    if len(text) > _LONGEST_INPUT:
        raise VoucherError(f"not a validation number ({len(text)} characters): {_show(text)}")
    stripped = text.strip(" ")
    if _PLAIN.fullmatch(stripped):
        return stripped
    grouped = _GROUPED.fullmatch(stripped)
    if grouped:
        return "".join(grouped.groups())
    raise VoucherError(
        f"not a validation number: {_show(text)} (18 digits, or SS-NNNN-NNNN-NNNN-NNNN)")


def reduce_candidate(candidate: int, *, bits: int = CANDIDATE_BITS, modulus: int = MODULUS) -> int | None:
    """The rejection step: a uniform ``bits``-bit ``candidate`` -> a uniform value below ``modulus``,
    or None when the candidate falls in the biased top slice and the next block must be tried.

    ``%`` is only ever applied below the largest multiple of ``modulus`` (so every residue has the
    same number of preimages).
    """
    if not 0 < modulus <= (1 << bits):
        raise ValueError(f"modulus {modulus} does not fit in {bits} bits")
    if not 0 <= candidate < (1 << bits):
        raise ValueError(f"candidate {candidate} is not a {bits}-bit value")
    limit = ((1 << bits) // modulus) * modulus
    return candidate % modulus if candidate < limit else None


def _message(terminal_id: str, sequence: int, counter: int) -> bytes:
    tid = terminal_id.encode("utf-8")
    return (DOMAIN + b"\x00" + len(tid).to_bytes(2, "big") + tid + sequence.to_bytes(8, "big")
            + counter.to_bytes(4, "big"))


def offline_validation(key: bytes, terminal_id: str, sequence: int) -> str:
    """The offline validation number (system id ``00``) of voucher ``sequence`` of ``terminal_id``."""
    if not isinstance(key, bytes) or len(key) != KEY_BYTES:
        raise VoucherError(f"the validation key is {KEY_BYTES} bytes")
    if not isinstance(terminal_id, str) or not terminal_id or len(terminal_id.encode("utf-8")) > 0xFFFF:
        raise VoucherError(f"a terminal id is non-empty text, not {terminal_id!r}")
    if isinstance(sequence, bool) or not isinstance(sequence, int) or not 0 <= sequence < (1 << 64):
        raise VoucherError(f"a voucher sequence number is 0..2**64-1, not {sequence!r}")
    for counter in itertools.count():
        if counter > MAX_COUNTER:                          # pragma: no cover - probability ~ 0
            raise VoucherError("no validation number: the counter space is exhausted")
        block = hmac.digest(key, _message(terminal_id, sequence, counter), "sha256")
        value = reduce_candidate(int.from_bytes(block[:8], "big"))
        if value is not None:
            return f"{SYSTEM_ID_OFFLINE}{value:016d}"
    raise AssertionError("unreachable")                    # pragma: no cover


def validation_key(ledger: Ledger, *, create: bool = True) -> bytes | None:
    """The terminal's offline validation key from critical memory; made (32 random bytes) and
    committed at first use when ``create``. A damaged stored key is a :class:`VoucherError`."""
    stored = ledger.setting(KEY_SETTING)
    if stored is None:
        if not create:
            return None
        key = os.urandom(KEY_BYTES)
        ledger.store_setting(KEY_SETTING, {"key": key.hex()})
        return key
    text = stored.get("key")
    try:
        key = bytes.fromhex(text) if isinstance(text, str) else b""
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise VoucherError(f"the stored validation key ({KEY_SETTING}) is damaged")
    return key
