"""TITO vouchers: validation numbers (``validation``) and the voucher book over critical memory
(``vouchers``). docs/cashless.md describes the states, the records and the offline numbers."""

from firmware.cashless.errors import REASON_CODES, VoucherError, VoucherRefused, VoucherStateError
from firmware.cashless.validation import offline_validation, parse_validation
from firmware.cashless.vouchers import (
    POWER_LOST,
    POWER_LOST_ASKING,
    IssuedVoucher,
    Redemption,
    VoucherBook,
    VoucherState,
)

__all__ = ["POWER_LOST", "POWER_LOST_ASKING", "REASON_CODES", "IssuedVoucher", "Redemption", "VoucherBook", "VoucherError",
           "VoucherRefused", "VoucherState", "VoucherStateError", "offline_validation",
           "parse_validation"]
