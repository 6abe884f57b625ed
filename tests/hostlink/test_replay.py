"""Replays: every message, captured on the wire and published again byte for byte, is refused as a
duplicate and acted on by nobody (the host's duplicate check comes before every side effect)."""

from __future__ import annotations

from egmproto.envelope import Opened, open_
from egmproto.messages import TO_HOST
from egmproto.mqtt import terminal_of, up_topic

from .conftest import Floor


def _voucher(floor: Floor, validation: str) -> dict:
    return next(v for v in floor.store.vouchers() if v["validation"] == validation)


def _opened(floor: Floor, payload: bytes) -> Opened:
    host = floor.host
    return open_(payload, recipient_private_key=host.identity.kem_key, verify_key_for=host.identity.terminal_key,
                 last_seq_for=lambda sender: None, now=host._wall(), direction=TO_HOST)


def _issue(floor: Floor) -> str:
    validation = floor.cash_out("T1", 1000)
    floor.settle()
    return validation


def test_a_replayed_redeem_abandoned_releases_nothing(floor: Floor) -> None:
    # The campaign's item 4: T2 gave a voucher back once, asked again and holds it now; its
    # first redeem_abandoned, published again byte for byte, must not release the hold.
    floor.terminal("T1")
    t2, t3 = floor.terminal("T2"), floor.terminal("T3")
    voucher = _issue(floor)
    start = len(floor.bus.seen)
    floor.ledgers["T2"].voucher_record(voucher, "host_request")
    floor.ledgers["T2"].voucher_record(voucher, "redeem_abandoned")
    floor.settle()
    abandoned = [(t, p) for t, p in floor.bus.seen[start:] if t == up_topic("T2")]
    assert _voucher(floor, voucher)["state"] == "issued"
    floor.ledgers["T2"].voucher_record(voucher, "host_request")          # asks again: held by T2
    floor.settle()
    assert t2.redemptions[voucher]["approved"] and _voucher(floor, voucher)["held_by"] == "T2"
    for topic, payload in abandoned:                                       # the replay
        assert floor.host.handle(topic, payload) == "duplicate"
    floor.settle()
    assert _voucher(floor, voucher)["held_by"] == "T2"
    floor.ledgers["T3"].voucher_record(voucher, "host_request")
    floor.settle()
    assert t3.redemptions[voucher]["approved"] is False


def test_every_report_replayed_changes_nothing_on_the_host(floor: Floor) -> None:
    link = floor.terminal("T1")
    floor.terminal("T2")
    voucher = _issue(floor)
    floor.ledgers["T1"].event("door_open", door="main")
    floor.ledgers["T2"].voucher_record(voucher, "host_request")
    floor.ledgers["T2"].voucher_record(voucher, "redeem_abandoned")
    floor.ledgers["T2"].voucher_record(voucher, "host_request")
    floor.settle()
    assert len(link.outbox) == 0
    captured = [(t, p) for t, p in floor.bus.seen if t == up_topic(terminal_of(t) or "-")]
    assert {_opened(floor, p).type for _, p in captured} >= {"hello", "meters", "event", "voucher_redeem_request"}
    before = (floor.store.vouchers(), floor.store.terminals(), floor.store.sequence("T1"),
              floor.store.sequence("T2"), floor.store.commands(last=1000))
    sent_before = dict(floor.host.stats)
    for topic, payload in captured:
        assert floor.host.handle(topic, payload) == "duplicate"
    floor.settle()
    after = (floor.store.vouchers(), floor.store.terminals(), floor.store.sequence("T1"),
             floor.store.sequence("T2"), floor.store.commands(last=1000))
    assert [v["state"] for v in after[0]] == [v["state"] for v in before[0]] == ["authorised"]
    assert after[0] == before[0] and after[2:] == before[2:]
    assert [(t["terminal"], t["last_seq"], t["disabled"]) for t in after[1]] == \
        [(t["terminal"], t["last_seq"], t["disabled"]) for t in before[1]]
    # only acknowledgements went out for the replays: no redemption reply, no command
    sent = {k: floor.host.stats[k] - sent_before.get(k, 0) for k in floor.host.stats if k.startswith("sent_")}
    assert {k: v for k, v in sent.items() if v} == {"sent_ack": len(captured)}
