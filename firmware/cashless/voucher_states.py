"""A voucher's states and the one table of the moves between them (``egm diagram vouchers``).

The voucher book (:mod:`firmware.cashless.vouchers`) asks :data:`VOUCHER_TABLE` before it writes
any record that changes a voucher's state: a move the table does not hold raises
:class:`~firmware.cashless.errors.VoucherStateError` and nothing is written. A voucher is not a
``transitions`` machine of its own (the book holds thousands): the table's lookup is the check.

``None`` is a voucher the book does not hold: one not issued yet, another machine's voucher before
the host validated it, or after its redemption was returned to the player.
"""

from __future__ import annotations

import enum

from firmware.cashless.errors import VoucherStateError
from firmware.kernel.table import Row, StateTable


class VoucherState(enum.StrEnum):
    ISSUED = "issued"                    #: number recorded, the printer has not confirmed it
    PRINTED = "printed"                  #: the printer confirmed it: the credits left the meter
    VOID = "void"                        #: never printed (or not confirmed): credits stayed
    REDEEM_PENDING = "redeem_pending"    #: in the validator's escrow, awaiting stacking
    REDEEMED = "redeemed"                #: stacked: its amount went to the credit meter


S = VoucherState

#: Every move of a voucher, named by the book's method that makes it. A returned redemption goes
#: back to where it came from: PRINTED for this terminal's own voucher, out of the book for another
#: machine's. VOID and REDEEMED are final: such a number never prints or redeems again.
VOUCHER_TABLE = StateTable("vouchers", VoucherState, None, (
    Row("issue", (None,), S.ISSUED),
    Row("printed", (S.ISSUED,), S.PRINTED),
    Row("void", (S.ISSUED,), S.VOID),
    Row("begin_redeem", (S.PRINTED, None), S.REDEEM_PENDING),
    Row("commit_redeem", (S.REDEEM_PENDING,), S.REDEEMED),
    Row("cancel_redeem", (S.REDEEM_PENDING,), S.PRINTED, "own"),
    Row("cancel_redeem", (S.REDEEM_PENDING,), None, "another machine's"),
), final=(S.VOID, S.REDEEMED), error=VoucherStateError)
