"""The live table's message schema (docs/protocols/table.md): every message between a table controller
(``egm table serve``) and its player stations, its direction and its body fields.

The table speaks the host link's envelope (``egmproto.envelope``: signed, then HPKE-encrypted) with a
schema of its own, given to :func:`~egmproto.envelope.seal` and :func:`~egmproto.envelope.open_` as
``schema=TABLE_SCHEMA``; the field kinds and the rules shared by every kind are the host link's
(``egmproto.messages``: no floats, no bool for an integer, amounts are integer credits).
"""

from __future__ import annotations

from egmproto.messages import PROTOCOL_VERSION, MessageType, Schema

TO_CONTROLLER = "to_controller"    #: direction: station -> controller
TO_STATION = "to_station"          #: direction: controller -> station
EITHER = "either"                  #: direction: both ways (heartbeat, bye)


def _mt(name: str, direction: str, doc: str, required: dict[str, str],
        optional: dict[str, str] | None = None) -> MessageType:
    return MessageType(name, direction, required, optional or {}, doc)


#: version -> type name -> MessageType (the table shares the host link's envelope version).
TABLE_SCHEMA: Schema = {
    PROTOCOL_VERSION: {m.name: m for m in (
        # station -> controller
        _mt("join", TO_CONTROLLER, "the first message of a connection: this connection's X25519 key (base64) "
            "for the controller's replies, the seat wanted (0: any), every bet not yet settled",
            {"table_id": "name", "kem_public": "str", "seat": "count", "open_bets": "list"},
            {"software": "str"}),
        _mt("bet", TO_CONTROLLER, "a bet committed by the station (TablePort.send_bet); answered once per bet_id",
            {"bet_id": "str", "round_id": "str_or_null", "seat": "count", "game": "name", "wagers": "object",
             "cover": "count"}),
        _mt("decision", TO_CONTROLLER, "a player's decision; applied once per decision_id",
            {"round_id": "str", "seat": "count", "action": "str", "decision_id": "str"}),
        _mt("result_ack", TO_CONTROLLER, "the station committed the result of this bet",
            {"bet_id": "str"}, {"latency_us": "count"}),
        # controller -> station
        _mt("welcome", TO_STATION, "the join is accepted: the station's seat at this table",
            {"table_id": "name", "station": "name", "seat": "count", "game": "name"}),
        _mt("snapshot", TO_STATION, "the table as it stands (times in ms, the close stamp in ns)",
            {"snapshot": "object"}),
        _mt("bet_answer", TO_STATION, "a bet accepted into a round, or refused (its stake comes back)",
            {"bet_id": "str", "accepted": "bool", "round_id": "str_or_null", "reason": "str"}),
        _mt("decision_request", TO_STATION, "the controller waits for this seat's decision (hint: the optimal "
            "action where the game's options allow hints; auto: the game's automatic strategy, for autoplay)",
            {"round_id": "str", "seat": "count", "kind": "str", "actions": "list", "default": "str",
             "view": "object", "time_left_ms": "count_or_null"},
            {"hint": "str", "auto": "str"}),
        _mt("result", TO_STATION, "the settled result of one bet; sent until the station acknowledges it",
            {"round_id": "str", "bet_id": "str", "seat": "count", "stakes": "object", "results": "object",
             "record": "object"}),
        # both ways
        _mt("heartbeat", EITHER, "the link is alive (sent when nothing else was for a while)", {}),
        _mt("bye", EITHER, "the sender closes the connection, and why", {"reason": "str"}),
    )},
}
