"""TITO against the running terminal over its pty (secure-enhanced validation, the default): a
ticket printed at cash-out is reported (0x3D), read back (0x4D) with the printed number, inserted
in the simulated validator, redeemed by the host (0x67, 0x70, 0x71, 0x68) once, and refused the
second time."""

from __future__ import annotations

import time

from drivers.sas.codec import LongPoll, Reply
from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.host import SasHost
from drivers.sas.host_tito import redeem_ticket
from drivers.sas.messages import (
    EnhancedValidation,
    EnhancedValidationRequest,
    ValidationId,
    parse_reply,
)
from drivers.sas.validation import RedemptionStatus, TicketStatus
from tests.sas.helpers import wait_for
from tests.sas.live import exceptions_until, exceptions_until_quiet, host_on, meters, running

VALIDATION_ID = 0x654321           #: the site's validation ID for this machine (0x4C)


def redeem(host: SasHost, cents: int) -> tuple[object, list[int]]:
    """The host redeems the ticket in escrow for ``cents``: the final 0x71 reply, and the
    exceptions its general polls read meanwhile and after, until the machine is quiet."""
    seen: list[int] = []

    def transact(poll: LongPoll) -> object:
        reply = host.ask(poll)
        return parse_reply(poll.command, reply.data) if isinstance(reply, Reply) else None

    def between() -> None:
        seen.extend(exceptions_until_quiet(host))
        time.sleep(0.2)                                    # the validator stacks meanwhile

    final = redeem_ticket(transact, host.address, cents, between=between, tries=100)
    return final, seen + exceptions_until(host, X.TICKET_TRANSFER_COMPLETE, timeout=20)


def test_a_printed_ticket_is_validated_redeemed_once_and_refused_the_second_time(tmp_path):
    with running(tmp_path) as terminal, host_on(terminal) as host:
        assert exceptions_until_quiet(host) == [X.AC_POWER_APPLIED]
        assert host.read(0x4C, ValidationId(VALIDATION_ID, 0).encode()) == ValidationId(VALIDATION_ID, 0)
        terminal.sim_until("note", "20")
        wait_for(lambda: terminal.control("status")["credits_cents"] == 2000, timeout=20)
        terminal.control("cashout")
        status = terminal.control("wait", {"state": "IDLE", "timeout": 30})
        paper = terminal.sim("printer", "last")                 # read from the simulated printer's paper
        printed = paper["validation"]
        assert status["credits_cents"] == 0 and paper["amount_cents"] == 2000
        assert status["last_ticket"] == printed

        # The ticket printed: exception 0x3D, and 0x4D reads back the number the printer printed.
        assert X.CASHOUT_TICKET_PRINTED in exceptions_until(host, X.CASHOUT_TICKET_PRINTED)
        record = host.read(0x4D, EnhancedValidationRequest(0x00).encode())
        assert isinstance(record, EnhancedValidation)
        assert (record.validation_type, record.amount) == (0x00, 2000)
        assert f"{record.validation_number:018d}" == printed

        # Inserted: 0x67, the host reads it (0x70) and redeems it (0x71); 0x68; the credits are back.
        terminal.sim_until("ticket", printed)
        assert X.TICKET_INSERTED in exceptions_until(host, X.TICKET_INSERTED)
        final, seen = redeem(host, 2000)
        assert (final.status, final.amount) == (RedemptionStatus.CASHABLE_REDEEMED, 2000)
        assert seen.count(X.TICKET_TRANSFER_COMPLETE) == 1
        wait_for(lambda: terminal.control("status")["credits_cents"] == 2000, timeout=20)

        # The same ticket again: the host authorises it again, the machine refuses it (redeemed).
        terminal.sim_until("ticket", printed)
        assert X.TICKET_INSERTED in exceptions_until(host, X.TICKET_INSERTED)
        final, seen = redeem(host, 2000)
        assert final.status == RedemptionStatus.REJECTED_BY_HOST
        assert seen.count(X.TICKET_TRANSFER_COMPLETE) == 1
        assert host.read(0x70).status == TicketStatus.NO_TICKET          # returned to the player
        assert terminal.control("status")["credits_cents"] == 2000
        terminal.stop()
    shown = meters(tmp_path / "state")
    assert shown["meters"]["ticket_in"] == 2000 and shown["meters"]["ticket_out"] == 2000
    assert shown["credits"] == 2000

