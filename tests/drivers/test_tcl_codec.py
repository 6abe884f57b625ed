"""TCL codec: golden frames in both roles, fed whole, split, byte by byte, among garbage."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codec import NEED_DATA, Garbage, LocalProtocolError, Role
from drivers.tcl.codec import (
    RECORD_LENGTH,
    ClearErrors,
    DefineRegion,
    DefineTemplate,
    Flag,
    FormFeed,
    Justify,
    Print,
    Region,
    RegionKind,
    Rotation,
    StatusRecord,
    StatusRequest,
    TclCodec,
    Template,
    encode,
    parse_command,
    parse_record,
)

# docs/protocols/frames.md, TCL (commands), and docs/protocols/tcl.md (this product's
# reading of the region, template and status record layouts).
GOLDEN = [
    (Role.HOST, ClearErrors(), b"^C|^"),
    (Role.HOST, FormFeed(), b"^f|I|^"),
    (Role.HOST, StatusRequest(), b"\x05"),
    (Role.HOST, Print("0", 1, ("GOLDEN STAR", "$20.50", "123456789012345678")),
     b"^P|0|1|GOLDEN STAR|$20.50|123456789012345678|^"),
    (Role.HOST, DefineRegion(Region("5", 16, 320, 400, 160, Rotation.NONE, Justify.CENTRE, 2,
                                    RegionKind.BARCODE_I2OF5, 18)),
     b"^R|5|16|320|400|160|0|C|2|B|18|^"),
    (Role.HOST, DefineTemplate(Template("0", 1320, 432, ("0", "1", "5"))), b"^T|0|1320|432|0|1|5|^"),
    (Role.DEVICE, StatusRecord(), b"*S|0|EGMTCL01|@|@|@|@|@|*"),
    (Role.DEVICE, StatusRecord(Flag.TOP_OF_FORM | Flag.VALIDATION_DONE),
     b"*S|0|EGMTCL01|@|@|@|@|L|*"),
    (Role.DEVICE, StatusRecord(Flag.BUSY | Flag.PAPER_LOW, "GURT2.01", 3),
     b"*S|3|GURT2.01|A|@|@|@|P|*"),
    (Role.DEVICE, StatusRecord(Flag.PAPER_OUT | Flag.CHASSIS_OPEN | Flag.JAM | Flag.RESET),
     b"*S|0|EGMTCL01|L|@|@|X|@|*"),
]
HOST_SENT = [(m, w) for r, m, w in GOLDEN if r is Role.HOST]
DEVICE_SENT = [(m, w) for r, m, w in GOLDEN if r is Role.DEVICE]
RECORD = b"*S|0|EGMTCL01|@|@|@|@|L|*"


def _events(codec: TclCodec, chunks) -> list:
    out = []
    for chunk in chunks:
        codec.receive_data(chunk)
        out += codec.events()
    return out


@pytest.mark.parametrize(("sender", "message", "wire"), GOLDEN)
def test_golden_frames_encode_in_the_senders_role_and_decode_in_the_other(sender, message, wire):
    assert TclCodec(sender).send(message) == wire
    receiver = TclCodec(sender.peer)
    receiver.receive_data(wire)
    assert receiver.next_event() == message
    assert receiver.next_event() is NEED_DATA


@pytest.mark.parametrize("sent", [HOST_SENT, DEVICE_SENT], ids=["to-printer", "to-host"])
def test_all_golden_frames_whole_split_and_byte_by_byte(sent):
    role = Role.DEVICE if sent is HOST_SENT else Role.HOST
    stream = b"".join(w for _, w in sent)
    messages = [m for m, _ in sent]
    assert _events(TclCodec(role), [stream]) == messages
    assert _events(TclCodec(role), [stream[i:i + 1] for i in range(len(stream))]) == messages
    for cut in range(len(stream)):
        assert _events(TclCodec(role), [stream[:cut], stream[cut:]]) == messages


def test_record_flags_are_five_bits_per_byte_from_f1():
    record = parse_record(b"*S|0|EGMTCL01|A|B|D|H|P|*")
    assert record is not None
    assert record.flags == Flag.BUSY | Flag.TEMPERATURE_ERROR | Flag.COMMAND_ERROR | Flag.JAM \
        | Flag.PAPER_LOW
    assert len(encode(StatusRecord(Flag((1 << 25) - 1)))) == RECORD_LENGTH
    assert encode(StatusRecord(Flag((1 << 25) - 1))) == b"*S|0|EGMTCL01|_|_|_|_|_|*"


def test_garbage_before_and_after_is_reported_and_skipped_by_the_host():
    codec = TclCodec(Role.HOST)
    codec.receive_data(b"\x00junk" + RECORD + b"\xff!")
    events = codec.events()
    assert events == [Garbage(b"\x00junk", "bytes before '*'"),
                      StatusRecord(Flag.TOP_OF_FORM | Flag.VALIDATION_DONE),
                      Garbage(b"\xff!", "bytes before '*'")]
    assert codec.buffered == 0


def test_garbage_before_and_after_is_reported_and_skipped_by_the_printer():
    codec = TclCodec(Role.DEVICE)
    codec.receive_data(b"\x00xx^C|^\x13\x11\x05zz")
    assert codec.events() == [Garbage(b"\x00xx", "bytes before '^' or ENQ"), ClearErrors(),
                              Garbage(b"\x13\x11", "bytes before '^' or ENQ"), StatusRequest(),
                              Garbage(b"zz", "bytes before '^' or ENQ")]


@pytest.mark.parametrize("at", [3, 5, 13, 14, 22, 24])
def test_a_damaged_record_is_garbage_and_the_next_record_survives(at):
    bad = bytearray(RECORD)
    bad[at] = 0x7F if at != 5 else 0x2A        # 0x2A is '*' inside the version
    events = _events(TclCodec(Role.HOST), [bytes(bad) + RECORD])
    assert isinstance(events[0], Garbage)
    assert events[-1] == parse_record(RECORD)
    assert all(isinstance(e, Garbage) for e in events[:-1])


def test_a_record_cut_short_does_not_swallow_the_following_one():
    for cut in range(1, RECORD_LENGTH - 1):
        events = _events(TclCodec(Role.HOST), [RECORD[:cut], RECORD + RECORD])
        assert [e for e in events if not isinstance(e, Garbage)] == [parse_record(RECORD)] * 2, cut
        assert isinstance(events[0], Garbage)


def test_a_command_cut_short_by_enq_or_a_new_command_resynchronises():
    codec = TclCodec(Role.DEVICE)
    events = _events(codec, [b"^P|0|1|half", b"\x05^C|^"])
    assert events == [Garbage(b"^P|0|1|half", "command cut short"), StatusRequest(), ClearErrors()]
    # no trailing '|': the '^' may open the next command
    assert _events(TclCodec(Role.DEVICE), [b"^P|0|1|half^C|^"]) == [
        Garbage(b"^P|0|1|half", "command without closing '|'"), ClearErrors()]


@pytest.mark.parametrize("bad", [
    b"^Z|^", b"^C|x|^", b"^f|X|^", b"^P|0|^", b"^P|0|x|a|^", b"^P|0|0|^", b"^P|a|1|^",
    b"^R|0|1|2|3|^", b"^R|0|16|40|400|56|7|C|4|T|40|^", b"^R|0|16|40|400|56|0|Q|4|T|40|^",
    b"^T|0|1|^", b"^T|0|10|10||^", b"^|^", b"^^",
], ids=lambda b: b.decode())
def test_malformed_commands_are_garbage_and_the_next_command_survives(bad):
    events = _events(TclCodec(Role.DEVICE), [bad + b"^C|^\x05"])
    assert isinstance(events[0], Garbage), events
    assert events[-2:] == [ClearErrors(), StatusRequest()]


def test_an_overlong_command_is_discarded():
    codec = TclCodec(Role.DEVICE)
    codec.receive_data(b"^P|0|1|" + b"x" * 3000)
    events = codec.events()
    assert events and all(isinstance(e, Garbage) for e in events)
    assert codec.buffered < codec.max_buffer
    codec.receive_data(b"^C|^")
    assert codec.events()[-1] == ClearErrors()


def test_a_role_sends_only_its_own_messages_and_fields_are_checked():
    with pytest.raises(LocalProtocolError, match="device does not send ClearErrors"):
        TclCodec(Role.DEVICE).send(ClearErrors())
    with pytest.raises(LocalProtocolError, match="host does not send StatusRecord"):
        TclCodec(Role.HOST).send(StatusRecord())
    with pytest.raises(LocalProtocolError, match="at most 1024 bytes"):
        TclCodec(Role.HOST).send(Print("0", 1, ("x" * 99,) * 11))
    for bad in ("a|b", "a^b", "caf\u00e9", "tab\t"):
        with pytest.raises(ValueError, match="printable ASCII"):
            Print("0", 1, (bad,))
    with pytest.raises(ValueError):
        Print("00")
    with pytest.raises(ValueError):
        Print("0", 10)
    with pytest.raises(ValueError):
        Region("a", 0, 0, 1, 1)
    with pytest.raises(ValueError):
        Region("0", 0, 0, 1, 1, length=100)
    with pytest.raises(ValueError):
        Template("0", 10, 10, ())
    with pytest.raises(ValueError):
        StatusRecord(version="too long!")
    with pytest.raises(ValueError):
        StatusRecord(address=10)
    with pytest.raises(ValueError, match="ends with"):
        parse_command("C")


# --- properties and fuzzing ---------------------------------------------------------------------
_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E,
                              blacklist_characters="^|"), max_size=30)
_id = st.sampled_from("0123456789ABCDEFZ")
commands = st.one_of(
    st.builds(Print, _id, st.integers(1, 9), st.lists(_text, max_size=8).map(tuple)),
    st.builds(ClearErrors), st.builds(FormFeed), st.builds(StatusRequest),
    st.builds(lambda rid, n, kind: DefineRegion(Region(rid, n, n, n, n, kind=kind, length=1 + n % 99)),
              _id, st.integers(0, 9999), st.sampled_from(RegionKind)),
    st.builds(lambda tid, n, regions: DefineTemplate(Template(tid, n, n, tuple(regions))),
              _id, st.integers(1, 9999), st.lists(_id, min_size=1, max_size=14)),
)
records = st.builds(StatusRecord, st.integers(0, (1 << 25) - 1).map(Flag),
                    st.text(st.sampled_from("ABZ09.- "), min_size=8, max_size=8),
                    st.integers(0, 9))
cmd_noise = st.binary(max_size=30).map(lambda b: b.translate(None, b"^\x05"))
rec_noise = st.binary(max_size=30).map(lambda b: b.replace(b"*", b""))


def _cut(stream: bytes, cuts: list[int]) -> list[bytes]:
    chunks, last = [], 0
    for cut in sorted(c % (len(stream) + 1) for c in cuts):
        chunks.append(stream[last:cut])
        last = cut
    chunks.append(stream[last:])
    return chunks


def _roundtrip(role: Role, pieces, cuts) -> None:
    stream = b"".join(noise + encode(message) for noise, message in pieces)
    got = [e for e in _events(TclCodec(role), _cut(stream, cuts)) if not isinstance(e, Garbage)]
    assert got == [message for _, message in pieces]


@given(st.lists(st.tuples(cmd_noise, commands), max_size=8), st.lists(st.integers(0, 10_000), max_size=6))
def test_commands_among_noise_decode_in_order_however_the_stream_is_cut(pieces, cuts):
    _roundtrip(Role.DEVICE, pieces, cuts)


@given(st.lists(st.tuples(rec_noise, records), max_size=8), st.lists(st.integers(0, 10_000), max_size=6))
def test_records_among_noise_decode_in_order_however_the_stream_is_cut(pieces, cuts):
    _roundtrip(Role.HOST, pieces, cuts)


@given(st.binary(max_size=600), st.sampled_from(Role))
def test_arbitrary_bytes_never_raise(data, role):
    codec = TclCodec(role)
    codec.receive_data(data)
    codec.events()
    assert codec.buffered <= codec.max_buffer


@pytest.mark.fuzz
@settings(max_examples=20_000, deadline=None)
@given(st.binary(max_size=2000), st.sampled_from(Role),
       st.lists(st.tuples(cmd_noise, commands), max_size=6),
       st.lists(st.tuples(rec_noise, records), max_size=6),
       st.lists(st.integers(0, 10_000), max_size=6))
def test_fuzz_tcl_codec(data, role, command_pieces, record_pieces, cuts):
    codec = TclCodec(role)
    codec.receive_data(data)
    codec.events()
    assert codec.buffered <= codec.max_buffer
    _roundtrip(Role.DEVICE, command_pieces, cuts)
    _roundtrip(Role.HOST, record_pieces, cuts)
