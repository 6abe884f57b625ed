"""Errors of the cashless (TITO) layer."""

from __future__ import annotations

from firmware.errors import EgmError

#: Why a voucher presented for redemption is refused (:attr:`VoucherRefused.reason_code`).
REASON_CODES: tuple[str, ...] = ("unknown", "already_redeemed", "void", "expired", "pending", "offline")


class VoucherError(EgmError):
    """Base of the cashless layer's errors; also a malformed validation number or amount."""


class VoucherStateError(VoucherError):
    """An operation the voucher book's state does not allow (a voucher still unconfirmed, a round in
    progress, not enough credits, a voucher not in the state the operation needs). Nothing changed."""


class VoucherRefused(VoucherError):
    """A voucher presented for redemption is refused: the validator returns it to the player.

    ``reason_code`` is one of :data:`REASON_CODES`; ``message`` says why in words. Nothing changed.
    """

    def __init__(self, reason_code: str, message: str) -> None:
        if reason_code not in REASON_CODES:
            raise ValueError(f"unknown voucher refusal reason {reason_code!r}")
        super().__init__(message)
        self.reason_code = reason_code
        self.message = message
