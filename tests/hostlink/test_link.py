"""The host link end to end in one process: terminal outbox -> envelope -> host store -> ack/commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from egmproto import envelope
from egmproto.envelope import seal
from egmproto.mqtt import down_topic, up_topic
from egmproto.pki import ensure_development_pki, revoke
from firmware.cashless.errors import VoucherRefused

from .conftest import Floor, switchable, utc


def _meters_match(floor: Floor, terminal: str) -> None:
    stored = floor.store.meters(terminal)[terminal]
    report = floor.ledgers[terminal].meters_report()
    assert stored["meters"] == report["meters"]
    assert stored["credits"] == report["credits"]


def test_every_report_is_stored_once_and_acknowledged(floor: Floor) -> None:
    link = floor.terminal("T1")
    ledger = floor.ledgers["T1"]
    ledger.bill_in(2000)
    ledger.event("door_open", door="main")
    ledger.event("door_close", door="main")
    ledger.ticket_out(1500, "000000000000000042")
    floor.settle()
    assert len(link.outbox) == 0
    seq = floor.store.sequence("T1")
    assert seq["gaps"] == [] and seq["first"] == 1 and seq["last"] == link.outbox.last_number
    assert seq["count"] == link.outbox.last_number
    _meters_match(floor, "T1")
    names = [e["name"] for e in floor.store.events("T1", last=100)]
    assert {"bill_in", "door_open", "door_close", "ticket_out"} <= set(names)
    assert floor.store.latest("T1", "hello")["kem_public"]
    assert [v["state"] for v in floor.store.vouchers("T1")] == ["issued"]


def test_lost_acks_mean_resending_and_the_host_stores_once(floor: Floor) -> None:
    link = floor.terminal("T1", ack_timeout_s=1.0)
    floor.settle()                                                       # the session is open
    opened = floor.store.sequence("T1")["count"]
    floor.bus.drop = lambda topic, payload: topic == down_topic("T1")     # every ack lost
    floor.ledgers["T1"].bill_in(500)
    floor.settle()
    stored = floor.store.sequence("T1")["count"]
    assert len(link.outbox) == stored - opened > 0
    floor.bus.drop = lambda topic, payload: False
    floor.now[0] += 2.0                                                  # past the ack timeout
    floor.settle()
    assert len(link.outbox) == 0
    assert link.stats["resent"] >= stored - opened
    assert floor.store.sequence("T1")["count"] == stored                   # nothing stored twice
    assert any(r["reason"] == "replay" for r in floor.store.rejections())
    _meters_match(floor, "T1")


def test_broker_outage_loses_nothing(floor: Floor) -> None:
    link = floor.terminal("T1")
    floor.settle()
    floor.bus.set_up(False)
    for _ in range(20):
        floor.ledgers["T1"].bill_in(100)
        link.poll()
    assert len(link.outbox) >= 20
    floor.bus.set_up(True)
    floor.settle()
    assert len(link.outbox) == 0
    seq = floor.store.sequence("T1")
    assert seq["gaps"] == [] and seq["count"] == link.outbox.last_number
    _meters_match(floor, "T1")


def test_a_restarted_terminal_sends_what_was_not_acknowledged(floor: Floor, tmp_path: Path) -> None:
    link = floor.terminal("T1")
    floor.bus.set_up(False)
    floor.ledgers["T1"].bill_in(100)
    link.poll()
    pending = link.outbox.numbers()
    link.client.stop()
    link.outbox.close()
    floor.ledgers["T1"].close()
    floor.bus.set_up(True)
    again = floor.terminal("T1")                                         # power-up: same memory
    assert again.outbox.numbers()[: len(pending)] == pending
    floor.settle()
    assert len(again.outbox) == 0
    assert floor.store.sequence("T1")["gaps"] == []


def _hostile(floor: Floor) -> dict[str, bytes]:
    """One envelope for each way a message can be wrong."""
    link = floor.links["T1"]
    ident = link.identity
    body = {"name": "door_open", "data": {"door": "main"}, "epoch": link.ledger.epoch}

    def make(seq: int, **kw) -> bytes:
        args = dict(sender_id="T1", seq=seq, time=utc(), type="event", body=body,
                    signing_key=ident.signing_key, recipient_public_key=ident.host_kem_key)
        args.update(kw)
        return seal(**args)

    honest = make(10_000)
    tampered = bytearray(make(10_001))
    tampered[-5] ^= 0x01
    foreign = ensure_development_pki(floor.tmp / "foreign", "T1")
    from cryptography.hazmat.primitives import serialization

    foreign_key = serialization.load_pem_private_key(foreign["terminal_key"].read_bytes(), None)
    flipped_sig = make(10_002, signing_key=foreign_key)        # a signature that is not T1's
    stale = make(10_003, time=utc(3600))
    future = make(10_004, time=utc(-3600))
    return {"tampered": bytes(tampered), "bad_signature": flipped_sig, "stale": stale,
            "future": future, "garbage": b"not an envelope at all, not even close", "honest": honest}


def test_hostile_messages_are_refused_logged_and_the_honest_terminal_goes_on(floor: Floor, monkeypatch) -> None:
    floor.terminal("T1")
    floor.settle()
    before = floor.store.sequence("T1")["count"]
    envelopes = _hostile(floor)
    outcomes = {name: floor.host.handle(up_topic("T1"), data) for name, data in envelopes.items()}
    assert outcomes["tampered"] == "decrypt_failed"
    assert outcomes["bad_signature"] == "bad_signature"
    assert outcomes["stale"] == "stale"
    assert outcomes["future"] == "future"
    assert outcomes["garbage"] == "malformed"
    assert outcomes["honest"] == "stored"
    assert floor.host.handle(up_topic("T1"), envelopes["honest"]) == "duplicate"     # replayed
    # a message published on another terminal's topic
    assert floor.host.handle(up_topic("T2"), _hostile(floor)["honest"]) in ("sender_mismatch", "duplicate")
    # a malformed body, signed and sealed properly
    monkeypatch.setattr(envelope, "check_body", lambda *a, **k: None)
    ident = floor.links["T1"].identity
    bad_body = seal(sender_id="T1", seq=10_010, time=utc(), type="event", body={"name": 7},
                    signing_key=ident.signing_key, recipient_public_key=ident.host_kem_key)
    monkeypatch.undo()
    assert floor.host.handle(up_topic("T1"), bad_body) == "bad_body"
    reasons = {r["reason"] for r in floor.store.rejections()}
    assert {"decrypt_failed", "bad_signature", "stale", "future", "malformed", "replay", "bad_body"} <= reasons
    assert floor.store.sequence("T1")["count"] == before + 1
    floor.ledgers["T1"].bill_in(100)                                     # the honest terminal goes on
    floor.settle()
    assert len(floor.links["T1"].outbox) == 0
    _meters_match(floor, "T1")


def test_a_revoked_terminal_is_refused(floor: Floor) -> None:
    floor.terminal("T1")
    floor.settle()
    revoke(floor.pki, "T1", reason="key-compromise")
    floor.ledgers["T1"].bill_in(100)
    floor.settle()
    assert len(floor.links["T1"].outbox) > 0
    assert any(r["reason"] == "unknown_sender" and "revoked" in r["detail"] for r in floor.store.rejections())


def test_host_commands_disable_enable_and_meters(floor: Floor) -> None:
    cabinet = floor.terminal("T1", terminal=switchable()).terminal.cabinet
    floor.settle()
    assert floor.host.command("T1", "disable", {"reason": "audit"}) == 1
    floor.settle()
    assert cabinet.disabled
    assert floor.ledgers["T1"].setting("hostlink.disabled") == {"disabled": True, "reason": "audit"}
    assert floor.store.terminals()[0]["disabled"] is True
    before = floor.store.meter_history("T1", last=100)
    floor.host.command("T1", "send_meters", {})
    floor.settle()
    assert len(floor.store.meter_history("T1", last=100)) == len(before) + 1
    floor.host.command("T1", "enable", {})
    floor.settle()
    assert not cabinet.disabled
    assert floor.store.pending_commands() == [] and floor.store.confirmed_command("T1") == 3


def test_an_operators_queued_command_waits_out_a_broker_outage(floor: Floor) -> None:
    # egm host disable (or offer-package) while the broker is away: nobody will ask for it again,
    # so it must not be taken from the queue and lost.
    cabinet = floor.terminal("T1", terminal=switchable()).terminal.cabinet
    floor.settle()
    floor.bus.set_up(False)
    floor.store.queue_command("T1", "disable", {"reason": "audit"})
    assert floor.host.poll_commands() == 0                       # left queued
    floor.bus.set_up(True)
    floor.settle()
    assert floor.host.poll_commands() == 1
    floor.settle()
    assert cabinet.disabled and floor.host.stats["sent_disable"] == 1
    # Taken, then the publish fails (the broker went in between): pending still, sent next time.
    floor.store.queue_command("T1", "enable", {})
    real = floor.host.client.publish
    floor.host.client.publish = lambda *a, **k: False
    assert floor.host.poll_commands() == 1 and floor.host.stats["send_failed"] == 1
    assert [c["type"] for c in floor.store.pending_commands("T1")] == ["enable"]
    floor.host.client.publish = real
    floor.host.send_commands("T1", force=True)
    floor.settle()
    assert not cabinet.disabled and floor.store.pending_commands() == []


def test_a_forged_or_replayed_host_command_is_ignored(floor: Floor) -> None:
    link = floor.terminal("T1", terminal=switchable())
    cabinet = link.terminal.cabinet
    floor.settle()
    from cryptography.hazmat.primitives.asymmetric import ec

    forger = ec.generate_private_key(ec.SECP256R1())
    forged = seal(sender_id="egm-host", seq=10**9, time=utc(), type="disable", body={"cmd": 1, "confirmed": 0},
                  signing_key=forger, recipient_public_key=link.kem_key.public_key())
    floor.bus.queue.append((down_topic("T1"), forged))
    floor.settle()
    assert not cabinet.disabled
    events = [e for e in floor.ledgers["T1"].events(50) if e["event"] == "host.rejected"]
    assert events and events[0]["reason"] == "bad_signature"
    # a genuine command, captured and played again
    floor.host.command("T1", "disable", {})
    captured = floor.bus.queue[-1]
    floor.settle()
    floor.host.command("T1", "enable", {})
    floor.settle()
    assert not cabinet.disabled
    floor.bus.queue.append(captured)
    floor.settle()
    assert not cabinet.disabled
    assert [e for e in floor.ledgers["T1"].events(50) if e["event"] == "host.rejected"][0]["reason"] == "replay"


def test_a_voucher_redeemed_at_two_terminals_pays_once(floor: Floor) -> None:
    t1, t2 = floor.terminal("T1", redeem_timeout_s=0), floor.terminal("T2", redeem_timeout_s=0)
    validation = floor.cash_out("T1", 2500)
    floor.settle()
    # both ask before either hears back
    for link in (t1, t2):
        floor.ledgers[link.terminal_id].voucher_record(validation, "host_request")
    floor.settle()
    answers = {link.terminal_id: link.redemptions.get(validation) for link in (t1, t2)}
    approved = [t for t, a in answers.items() if a and a["approved"]]
    assert len(approved) == 1
    refused = [t for t, a in answers.items() if a and not a["approved"]]
    assert len(refused) == 1


def test_validate_waits_for_the_host(floor: Floor) -> None:
    floor.terminal("T1")
    validation = floor.cash_out("T1", 1000)
    floor.settle()
    t2, t3 = floor.terminal("T2", redeem_timeout_s=1.0), floor.terminal("T3", redeem_timeout_s=1.0)
    floor.settle()
    for link in (t2, t3):                  # the bus delivers when pumped: pump from inside the wait
        link.poll = _pumping(link.poll, floor)
    assert t2.validate(validation) == 1000
    assert t3.validate(validation) is None           # held by T2
    floor.bus.drop = lambda topic, payload: topic == down_topic("T3")
    t3._clock = _ticking()
    with pytest.raises(VoucherRefused) as refused:
        t3.validate(validation)
    assert refused.value.reason_code == "offline"


def test_an_approval_that_comes_after_the_terminal_gave_up_is_released_again(floor: Floor) -> None:
    # The request reached the host after the terminal's abandonment (or the abandonment overtook
    # it): the host holds the voucher for a terminal that no longer redeems it. The terminal sees
    # the late approval and releases it again, so another terminal can redeem it.
    floor.terminal("T1")
    validation = floor.cash_out("T1", 1000)
    floor.settle()
    t2, t3 = floor.terminal("T2", redeem_timeout_s=1.0), floor.terminal("T3", redeem_timeout_s=1.0)
    floor.settle()
    for link in (t2, t3):
        link.poll = _pumping(link.poll, floor)
    floor.bus.drop = lambda topic, payload: topic == down_topic("T2")      # no answer reaches T2
    t2._clock = _ticking()
    with pytest.raises(VoucherRefused):
        t2.validate(validation)
    floor.bus.drop = lambda topic, payload: False
    floor.settle()
    assert _voucher(floor, validation)["state"] == "issued"             # the abandonment released it
    # Now the reordering: the host authorises T2's request after the abandonment and answers.
    answer = floor.store.authorize_redemption(validation, "T2")
    assert answer.approved and _voucher(floor, validation)["held_by"] == "T2"
    floor.host.send("T2", "voucher_redeem_reply", {"validation": validation, "approved": True,
                                                   "amount_cents": answer.amount_cents})
    floor.settle()
    assert _voucher(floor, validation)["state"] == "issued"             # released again by T2
    states = [r["body"]["state"] for r in floor.ledgers["T2"].records_for(validation) if r["kind"] == "voucher"]
    assert states == ["host_request", "redeem_abandoned", "redeem_abandoned"]
    assert t3.validate(validation) == 1000                              # redeemable elsewhere


def _voucher(floor: Floor, validation: str) -> dict:
    return next(v for v in floor.store.vouchers() if v["validation"] == validation)


def _pumping(poll, floor: Floor):
    def poll_and_pump() -> None:
        poll()
        floor.bus.pump()
        floor.host.client.connected = True
    return poll_and_pump


def _ticking():
    t = [0.0]

    def clock() -> float:
        t[0] += 0.1
        return t[0]
    return clock


def test_the_ack_timeout_stays_backed_off_after_an_ack_of_a_resent_report(floor: Floor) -> None:
    """A slow host (acks later than the timeout) must not get every report twice: an ack of a report
    that was sent again says nothing about the round trip (Karn's rule), so the doubled timeout
    stays; the ack of a report sent once brings it back to the round trip's pace."""
    link = floor.terminal("T1", ack_timeout_s=1.0)
    floor.settle()
    slow = True
    floor.bus.drop = lambda topic, payload: slow and topic == down_topic("T1")   # the host is late
    floor.ledgers["T1"].bill_in(500)
    floor.settle()
    floor.now[0] += 1.5                                                  # past 1 s: sent again, 2 s now
    floor.settle()
    resent = link.stats["resent"]
    assert resent > 0
    slow = False
    floor.now[0] += 10.0                                                 # sent again (backed off), acked at last
    floor.settle()
    assert len(link.outbox) == 0
    resent = link.stats["resent"]
    slow = True
    floor.ledgers["T1"].bill_in(500)                                     # new reports, the host still late
    floor.settle()
    floor.now[0] += 1.5                                                  # past 1 s, not past the backed-off timeout
    floor.settle()
    assert link.stats["resent"] == resent                                # not sent twice
    slow = False
    floor.now[0] += 61.0
    floor.settle()
    assert len(link.outbox) == 0
    resent = link.stats["resent"]
    floor.ledgers["T1"].bill_in(500)                                     # sent once, acked at once
    floor.settle()
    assert len(link.outbox) == 0
    slow = True
    floor.ledgers["T1"].bill_in(500)
    floor.settle()
    floor.now[0] += 1.5                                                  # back to the 1 s pace
    floor.settle()
    assert link.stats["resent"] > resent
