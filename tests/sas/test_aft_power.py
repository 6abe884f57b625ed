"""AFT exactly once across power cuts: critical memory closed and reopened at every step of a
transfer, and the host's interrogation tells it the truth each time (hypothesis: any sequence)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.host_aft import aft_transfer
from drivers.sas.messages import AftInterrogate, AftShortReply
from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.ledger import Ledger, accounting_difference
from tests.sas.aft_helpers import ASSET, aft_machine
from tests.sas.test_aft import request

ADDRESS = 1


class PowerCut(Exception):
    pass


class Terminal:
    """A ledger in ``path`` and the AFT machine over it; :meth:`power_cut` closes and reopens both
    (a fresh machine: nothing of the last power-up is kept but critical memory)."""

    def __init__(self, path) -> None:
        self.path = path
        self.boot()

    def boot(self) -> None:
        self.ledger = Ledger.open(self.path, denomination=5)
        self.machine, self.polls = aft_machine(self.ledger)

    def power_cut(self) -> None:
        self.ledger.close()
        self.boot()

    def exchange(self, cut_at: str | None = None):
        """The host's exchange; ``cut_at``: "before" the poll reaches the machine, "after_record"
        (answered, reply lost) or "after_reply" (answered, reply delivered, then the cut) on the
        first transfer request."""
        state = {"armed": cut_at}

        def exchange(wire: bytes) -> bytes:
            is_transfer = wire[1] == 0x72 and wire[2] > 2
            if state["armed"] and is_transfer:
                cut, state["armed"] = state["armed"], None
                if cut == "before":
                    self.power_cut()
                    return b""
                reply = self.machine.receive(wire)
                self.power_cut()
                return b"" if cut == "after_record" else reply
            reply = self.machine.receive(wire)
            self.machine.receive(bytes([0x80 | (ADDRESS + 1)]))
            return reply
        return exchange


@pytest.mark.parametrize("cut_at", ["before", "after_record", "after_reply"])
@pytest.mark.parametrize("out", [False, True])
def test_a_power_cut_at_every_step_applies_the_transfer_once(tmp_path, cut_at, out):
    terminal = Terminal(tmp_path / "state")
    terminal.ledger.bill_in(5000)
    reply = aft_transfer(terminal.exchange(cut_at), ADDRESS, cents=2000, transaction_id="TX-1",
                         asset_number=ASSET, to_machine=not out)
    assert reply.transfer_status == 0x00 and reply.transaction_id == "TX-1"
    terminal.power_cut()                                     # and once more after the host is done
    expected = 3000 if out else 7000
    assert terminal.ledger.credits_cents == expected
    assert terminal.ledger.meters["transfers_out" if out else "transfers_in"] == 2000
    assert accounting_difference(terminal.ledger.meters) == 0
    assert X.AFT_TRANSFER_COMPLETE in terminal.machine.terminal.exceptions.pending()   # kept across the cuts
    # the host's interrogation after the power cut still reports this transfer
    again = aft_transfer(terminal.exchange(), ADDRESS, cents=2000, transaction_id="TX-1",
                         asset_number=ASSET, to_machine=not out)
    assert again == reply and terminal.ledger.credits_cents == expected
    terminal.ledger.close()


def test_a_commit_that_fails_leaves_nothing_and_the_interrogation_says_so(tmp_path, monkeypatch):
    terminal = Terminal(tmp_path / "state")

    def failing_append(*args, **kwargs):
        raise CriticalMemoryError("disk gone")

    monkeypatch.setattr(terminal.ledger._store, "append", failing_append)
    with pytest.raises(CriticalMemoryError):
        terminal.polls.transfer_poll(request("TX-1", 2000))
    monkeypatch.undo()
    terminal.power_cut()
    assert terminal.ledger.credits_cents == 0 and terminal.ledger.records_for("TX-1") == []
    status = terminal.polls.interrogate(AftInterrogate(0xFF, 0))
    assert status == AftShortReply(0, 0xFF, 0xFF)             # no transfer: the host may send it again
    terminal.ledger.close()


ACTIONS = st.lists(st.one_of(
    st.tuples(st.just("transfer"), st.integers(1, 6), st.integers(1, 400), st.booleans(),
              st.sampled_from([None, "before", "after_record", "after_reply"])),
    st.tuples(st.just("cut")),
    st.tuples(st.just("interrogate"), st.integers(0, 0xFF)),
), max_size=12)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=ACTIONS)
def test_any_sequence_of_transfers_interrogations_and_power_cuts_keeps_credits_equal_to_the_transfers(
        tmp_path_factory, actions):
    terminal = Terminal(tmp_path_factory.mktemp("aft") / "state")
    applied: dict[str, int] = {}                 #: transaction ID -> signed cents the machine applied
    try:
        for action in actions:
            if action[0] == "cut":
                terminal.power_cut()
            elif action[0] == "interrogate":
                terminal.polls.interrogate(AftInterrogate(0xFF, action[1]))
            else:
                _, n, credits, out, cut = action
                tid, cents = f"TX-{n}", credits * 5
                reply = aft_transfer(terminal.exchange(cut), ADDRESS, cents=cents, transaction_id=tid,
                                     asset_number=ASSET, to_machine=not out, partial=True)
                if reply.transfer_status in (0x00, 0x01) and tid not in applied:
                    applied[tid] = -reply.cashable if out else reply.cashable
                elif tid in applied:
                    assert reply.transfer_status in (0x00, 0x01, 0x81)   # answered again, never reapplied
        terminal.power_cut()
        meters = terminal.ledger.meters
        assert terminal.ledger.credits_cents == sum(applied.values())
        assert meters.get("transfers_in", 0) == sum(v for v in applied.values() if v > 0)
        assert meters.get("transfers_out", 0) == -sum(v for v in applied.values() if v < 0)
        assert len(terminal.ledger.records_for("TX-1")) <= 1
        assert accounting_difference(meters) == 0
    finally:
        terminal.ledger.close()
