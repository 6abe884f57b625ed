"""A host that dies between storing a report and anything after it: what the report implies for a
voucher (a request authorises it, an abandonment or a return releases it) was stored with it, so
the terminal's resend, a duplicate, finds it done (docs/protocols/host-session.md, section 2)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from egmproto.identity import HostIdentity
from host.server import HostServer
from host.store import HostStore

from .conftest import Floor


class HostDied(Exception):
    """The host process ended here (nothing after this point of :meth:`HostServer.handle` ran)."""


def _die_after_storing(floor: Floor, monkeypatch: pytest.MonkeyPatch,
                       match: Callable[[str, dict], bool]) -> list[int]:
    """The host dies right after the store's transaction for the first report ``match`` accepts:
    no answer, no acknowledgement, and it hears nothing more until :func:`_restart`."""
    died: list[int] = []
    real = floor.store.record_batch

    def record_batch(reports):
        recorded = real(reports)
        for report, rec in zip(reports, recorded, strict=True):
            if not died and match(report.type, report.body):
                died.append(rec.seq)
                raise HostDied
        return recorded

    monkeypatch.setattr(floor.store, "record_batch", record_batch)
    host = floor.host

    def handle(topic: str, payload: bytes) -> None:
        try:
            host.handle(topic, payload)
        except HostDied:
            host.client.stop()

    host.client.on_message = handle
    return died


def _restart(floor: Floor) -> None:
    """A new host process on the same database."""
    floor.store.close()
    floor.store = HostStore.open(str(floor.tmp / "host.db"))
    floor.host = HostServer(floor.store, HostIdentity(floor.pki), floor.bus.factory)
    floor.host.client.on_message = floor.host.handle
    floor.host.client.start()
    for link in floor.links.values():                 # the terminals reconnect and send again
        link._on_connection(True)


def _voucher(floor: Floor, validation: str) -> dict:
    return next(v for v in floor.store.vouchers() if v["validation"] == validation)


def _voucher_event(state: str, validation: str) -> Callable[[str, dict], bool]:
    return lambda type_, body: (type_ == "event" and body["name"] == "voucher"
                                and body["data"].get("state") == state
                                and body["data"].get("validation") == validation)


@pytest.mark.parametrize("state", ["redeem_abandoned", "redeem_returned"])
def test_a_release_stored_just_before_the_host_died_is_not_lost(floor: Floor, monkeypatch, state) -> None:
    floor.terminal("T1")
    floor.terminal("T2")
    t3 = floor.terminal("T3")
    voucher = floor.cash_out("T1", 1000)
    floor.settle()
    floor.ledgers["T2"].voucher_record(voucher, "host_request")
    floor.settle()
    assert _voucher(floor, voucher)["held_by"] == "T2"
    died = _die_after_storing(floor, monkeypatch, _voucher_event(state, voucher))
    floor.ledgers["T2"].voucher_record(voucher, state)
    floor.settle()
    assert died, "the host did not die where the test put it"
    _restart(floor)
    floor.settle()
    assert len(floor.links["T2"].outbox) == 0                  # the resend was stored already
    assert floor.host.stats["duplicate"] >= 1
    row = _voucher(floor, voucher)
    assert (row["state"], row["held_by"]) == ("issued", None)
    floor.ledgers["T3"].voucher_record(voucher, "host_request")
    floor.settle()
    assert t3.redemptions[voucher]["approved"] is True


def test_a_request_stored_just_before_the_host_died_holds_the_voucher_for_it(floor: Floor, monkeypatch) -> None:
    floor.terminal("T1")
    t2 = floor.terminal("T2")
    t3 = floor.terminal("T3")
    voucher = floor.cash_out("T1", 1000)
    floor.settle()
    died = _die_after_storing(floor, monkeypatch, lambda type_, body: type_ == "voucher_redeem_request")
    floor.ledgers["T2"].voucher_record(voucher, "host_request")
    floor.settle()
    assert died
    # stored and authorised together: never a stored request the voucher does not know of
    assert [m["type"] for m in floor.store.messages("T2", after=died[0] - 1, limit=1)] == \
        ["voucher_redeem_request"]
    row = _voucher(floor, voucher)
    assert (row["state"], row["held_by"]) == ("authorised", "T2")
    _restart(floor)
    floor.settle()
    assert voucher not in t2.redemptions                      # a duplicate gets its ack, no answer
    floor.ledgers["T2"].voucher_record(voucher, "redeem_abandoned")  # it stopped waiting: released
    floor.settle()
    floor.ledgers["T3"].voucher_record(voucher, "host_request")
    floor.settle()
    assert t3.redemptions[voucher]["approved"] is True
    assert _voucher(floor, voucher)["held_by"] == "T3"
