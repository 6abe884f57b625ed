"""The table's codec refuses hostile input with a clear reason and takes nothing from it."""

from __future__ import annotations

import struct
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, x25519

from egmproto.table_messages import TO_CONTROLLER, TO_STATION
from firmware.table.errors import TableProtocolError
from firmware.table.protocol import MAX_FRAME, snapshot_from_wire, snapshot_to_wire
from firmware.table.session import SeqBook, SeqCounter, Session

BET = {"bet_id": "b1", "round_id": None, "seat": 0, "game": "baccarat-war", "wagers": {"bac": 5}, "cover": 0}


class Pair:
    """A station's session and the controller's, each with its own keys."""

    def __init__(self) -> None:
        self.station_key = ec.generate_private_key(ec.SECP256R1())
        self.controller_key = ec.generate_private_key(ec.SECP256R1())
        self.station_kem = x25519.X25519PrivateKey.generate()
        self.controller_kem = x25519.X25519PrivateKey.generate()
        self.seqs = SeqBook()
        self.keys: dict[str, Any] = {"station-1": self.station_key.public_key()}
        self.station = self.station_session()
        self.controller = Session(own_id="egm-table", signing_key=self.controller_key, own_kem=self.controller_kem,
                                  peer_id="station-1", verify_key_for=self.keys.get, incoming=TO_CONTROLLER,
                                  seqs=self.seqs, counter=SeqCounter(), peer_kem=self.station_kem.public_key())

    def station_session(self, **kw: Any) -> Session:
        values: dict[str, Any] = dict(own_id="station-1", signing_key=self.station_key, own_kem=self.station_kem,
                                      peer_id="egm-table", verify_key_for=lambda s: self.controller_key.public_key(),
                                      incoming=TO_STATION, seqs=SeqBook(), counter=SeqCounter(),
                                      peer_kem=self.controller_kem.public_key())
        values.update(kw)
        return Session(**values)


def test_a_bet_goes_through_whole_and_in_pieces() -> None:
    pair = Pair()
    frame = pair.station.frame("bet", BET)
    assert pair.controller.feed(frame[:3]) == []
    assert pair.controller.feed(frame[3:50]) == []
    (message,) = pair.controller.feed(frame[50:])
    assert (message.sender_id, message.type, message.body) == ("station-1", "bet", BET)


def test_a_truncated_frame_is_refused_when_the_connection_ends() -> None:
    pair = Pair()
    pair.controller.feed(pair.station.frame("bet", BET)[:-1])
    with pytest.raises(TableProtocolError, match="truncated"):
        pair.controller.end()


def test_an_oversize_frame_is_refused_from_its_header() -> None:
    pair = Pair()
    with pytest.raises(TableProtocolError, match="oversize"):
        pair.controller.feed(struct.pack(">I", MAX_FRAME + 1))
    with pytest.raises(TableProtocolError, match="oversize"):
        Pair().controller.feed(struct.pack(">I", 0))


def test_a_wrong_signature_is_refused() -> None:
    pair = Pair()
    forger = pair.station_session(signing_key=ec.generate_private_key(ec.SECP256R1()))
    with pytest.raises(TableProtocolError) as caught:
        pair.controller.feed(forger.frame("bet", BET))
    assert caught.value.reason == "bad_signature"
    assert pair.seqs.last("station-1") is None          # nothing taken from it


def test_an_unknown_station_and_another_station_on_this_connection_are_refused() -> None:
    pair = Pair()
    stranger = pair.station_session(own_id="station-9")
    with pytest.raises(TableProtocolError) as caught:
        pair.controller.feed(stranger.frame("bet", BET))
    assert caught.value.reason == "sender_mismatch"
    pair.controller.peer_id = None                       # not bound: the key lookup decides
    with pytest.raises(TableProtocolError) as caught:
        pair.controller.feed(stranger.frame("bet", BET))
    assert caught.value.reason == "unknown_sender"


def test_a_replayed_or_old_frame_is_refused_also_on_a_new_connection() -> None:
    pair = Pair()
    old = pair.station.frame("bet", BET)
    new = pair.station.frame("bet", {**BET, "bet_id": "b2"})
    pair.controller.feed(new)
    with pytest.raises(TableProtocolError) as caught:
        pair.controller.feed(old)
    assert caught.value.reason == "replay"
    again = Session(own_id="egm-table", signing_key=pair.controller_key, own_kem=pair.controller_kem,
                    peer_id="station-1", verify_key_for=pair.keys.get, incoming=TO_CONTROLLER, seqs=pair.seqs,
                    counter=SeqCounter())
    with pytest.raises(TableProtocolError, match="replay"):
        again.feed(new)


def test_a_stale_frame_is_refused() -> None:
    pair = Pair()
    late = pair.station_session(clock=lambda: datetime.now(UTC) - timedelta(hours=1))
    with pytest.raises(TableProtocolError, match="stale"):
        pair.controller.feed(late.frame("bet", BET))


@pytest.mark.parametrize("body, why", [
    ({k: v for k, v in BET.items() if k != "wagers"}, "missing field"),
    ({**BET, "extra": 1}, "unexpected field"),
    ({**BET, "cover": 1.5}, "floats are not allowed|expected an integer"),
    ({**BET, "seat": True}, "expected an integer"),
])
def test_a_body_against_the_schema_is_refused_before_it_is_sent(body: dict[str, Any], why: str) -> None:
    with pytest.raises(TableProtocolError, match=why):
        Pair().station.frame("bet", body)


def test_a_message_of_the_wrong_direction_is_refused() -> None:
    pair = Pair()
    impostor = pair.station_session()
    frame = impostor.frame("bet_answer", {"bet_id": "b1", "accepted": True, "round_id": None, "reason": "x"})
    with pytest.raises(TableProtocolError, match="not sent to controller"):
        pair.controller.feed(frame)


def test_garbage_after_a_valid_header_is_refused() -> None:
    pair = Pair()
    with pytest.raises(TableProtocolError) as caught:
        pair.controller.feed(struct.pack(">I", 40) + b"\x00" * 40)
    assert caught.value.reason == "malformed"


def test_the_snapshot_travels_in_milliseconds_and_comes_back_in_seconds() -> None:
    snap = {"phase": "betting", "betting_left_s": 3.2, "decision_left_s": None}
    wire = snapshot_to_wire(snap)
    assert wire == {"phase": "betting", "betting_left_ms": 3200, "decision_left_ms": None}
    assert snapshot_from_wire(wire) == snap
