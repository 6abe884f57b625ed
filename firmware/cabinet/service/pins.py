"""The service roles and their PINs: salted PBKDF2-HMAC-SHA256 hashes, compared in constant time.

``[service.pins]`` keeps each role's PIN only as ``pbkdf2_sha256$ITER$SALT_HEX$HASH_HEX``
(:func:`hash_pin`); :func:`verify_pin` checks a typed PIN against it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any

from firmware.cabinet.service.errors import ServiceError
from firmware.config.schema import PIN_HASH_PATTERN, SERVICE_ROLES

#: The service roles, as the ledger's ``service_entry`` events name them.
ROLES: tuple[str, ...] = SERVICE_ROLES
#: The documented development PINs (``[service.pins]`` defaults): a login with one is logged.
DEVELOPMENT_PINS: dict[str, str] = {"attendant": "1111", "technician": "2222", "auditor": "3333",
                                    "regulator": "4444"}
PIN_SCHEME = "pbkdf2_sha256"
#: PBKDF2 iterations of a new hash (the configuration refuses fewer than 200,000).
DEFAULT_ITERATIONS = 310_000


def _check_pin_text(pin: Any) -> str:
    if not isinstance(pin, str) or not pin.isdigit() or not 4 <= len(pin) <= 12 or not pin.isascii():
        raise ServiceError("a PIN is 4 to 12 digits")
    return pin


def hash_pin(pin: str, *, iterations: int = DEFAULT_ITERATIONS, salt: bytes | None = None) -> str:
    """``pbkdf2_sha256$ITERATIONS$SALT_HEX$HASH_HEX`` of ``pin`` with a fresh 16-byte salt: what
    ``[service.pins]`` stores (tests pass a small ``iterations``; the configuration needs 200,000)."""
    _check_pin_text(pin)
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ServiceError(f"iterations is a positive whole number, not {iterations!r}")
    salt = os.urandom(16) if salt is None else bytes(salt)
    if len(salt) < 16:
        raise ServiceError("a PIN hash needs at least 16 bytes of salt")
    digest = hashlib.pbkdf2_hmac("sha256", pin.encode("ascii"), salt, iterations)
    return f"{PIN_SCHEME}${iterations}${salt.hex()}${digest.hex()}"


def parse_pin_hash(encoded: str) -> tuple[int, bytes, bytes]:
    """(iterations, salt, hash) of a stored PIN hash; ServiceError if it is not one."""
    match = PIN_HASH_PATTERN.fullmatch(encoded) if isinstance(encoded, str) else None
    if match is None:
        raise ServiceError("not a PIN hash (pbkdf2_sha256$ITERATIONS$SALT_HEX$HASH_HEX)")
    return int(match.group(1)), bytes.fromhex(match.group(2)), bytes.fromhex(match.group(3))


def verify_pin(pin: str, encoded: str) -> bool:
    """Whether ``pin`` is the PIN of ``encoded`` (the comparison takes the same time either way)."""
    iterations, salt, expected = parse_pin_hash(encoded)
    candidate = hashlib.pbkdf2_hmac("sha256", str(pin).encode("utf-8"), salt, iterations)
    return hmac.compare_digest(candidate, expected)


def is_development_pin(role: str, pin: str) -> bool:
    """Whether ``pin`` is ``role``'s documented development PIN (compared in constant time)."""
    return hmac.compare_digest(pin.encode("utf-8"), DEVELOPMENT_PINS[role].encode("utf-8"))
