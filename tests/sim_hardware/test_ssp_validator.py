"""The simulated SSP validator, driven through the host role of the codec and eSSP (no pty)."""

from __future__ import annotations

import random

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from drivers.codec import Role
from drivers.ssp.barcode import BarcodeData, TicketStatus, barcode_inhibit, parse_barcode_data
from drivers.ssp.codec import Command, Packet, PollEvent, Response, SspCodec, parse_events
from drivers.ssp.essp import EsspSession, KeyExchange, pack64, u64
from drivers.ssp.setup import USD_SETUP, inhibit_mask, parse_setup
from sim_hardware.ssp_validator import Note, SspSimulator, State, Ticket
from tests.drivers.ssp_frames import crc_8005

TEST_FIXED_KEY = 0x0F1E2D3C4B5A6978          # a test key only
OK = bytes((Response.OK,))


class Host:
    """The terminal's end, sans-I/O."""

    def __init__(self, sim: SspSimulator) -> None:
        self.sim = sim
        self.codec = SspCodec(Role.HOST)
        self.essp: EsspSession | None = None
        self.last: bytes = b""

    def raw(self, frame: bytes) -> list[Packet]:
        self.codec.receive_data(b"".join(self.sim.feed(frame)))
        return self.codec.events()

    def send(self, code: int, args: bytes = b"", *, plain: bool = False) -> bytes | None:
        data = bytes((code,)) + args
        if self.essp is not None and self.essp.keyed and not plain:
            data = self.essp.wrap(data)
        self.last = self.codec.command(data)
        replies = self.raw(self.last)
        if not replies:
            return None
        assert len(replies) == 1 and replies[0].seq == self.codec.expected_seq, replies
        reply = replies[0].data
        if reply[:1] == b"\x7e":
            return self.essp.unwrap(reply)
        return reply

    def repeat(self) -> bytes | None:
        """The last command again, same flag and bytes (its reply was lost)."""
        replies = self.raw(self.last)
        if not replies:
            return None
        reply = replies[0].data
        return self.essp.unwrap(reply) if reply[:1] == b"\x7e" else reply

    def poll(self) -> list:
        reply = self.send(Command.POLL)
        assert reply[:1] == OK, reply
        return parse_events(reply[1:])

    def exchange_keys(self) -> None:
        self.essp = EsspSession(Role.HOST, TEST_FIXED_KEY, rng=random.Random(5))
        kx = KeyExchange.for_host(random.Random(9))
        assert self.send(Command.SET_GENERATOR, pack64(kx.generator)) == OK
        assert self.send(Command.SET_MODULUS, pack64(kx.modulus)) == OK
        reply = self.send(Command.REQUEST_KEY_EXCHANGE, pack64(kx.intermediate))
        assert reply[:1] == OK and len(reply) == 9
        self.essp.set_key(kx.key(u64(reply[1:])))

    def ready(self, channels=(1, 2, 3, 4, 5, 6, 7)) -> None:
        assert self.send(Command.SYNC) == OK
        if self.sim.encryption:
            self.exchange_keys()
        assert self.send(Command.SET_CHANNEL_INHIBITS, inhibit_mask(channels)) == OK
        assert self.send(Command.ENABLE) == OK
        assert self.poll() == [(PollEvent.SLAVE_RESET, None)]
        assert self.poll() == []


@pytest.fixture(params=[False, True], ids=["ssp", "essp"])
def sim(request) -> SspSimulator:
    return SspSimulator(encryption=request.param, fixed_key=TEST_FIXED_KEY,
                        rng=random.Random(11))


@pytest.fixture
def host(sim) -> Host:
    h = Host(sim)
    h.ready()
    return h


def test_golden_sync_and_ok():
    sim = SspSimulator()
    assert sim.feed(bytes.fromhex("7F 80 01 11 65 82")) == [bytes.fromhex("7F 80 01 F0 23 80")]


def test_setup_request_and_serial():
    h = Host(SspSimulator())
    assert h.send(Command.HOST_PROTOCOL_VERSION, b"\x06") == OK
    assert parse_setup(h.send(Command.SETUP_REQUEST)[1:]) == USD_SETUP
    assert h.send(Command.GET_SERIAL_NUMBER) == OK + (1_234_567).to_bytes(4, "big")
    assert h.send(0x99) == bytes((Response.UNKNOWN_COMMAND,))
    assert h.send(Command.HOST_PROTOCOL_VERSION) == bytes((Response.WRONG_PARAMETERS,))


def test_the_setup_answer_reports_the_protocol_its_layout_follows():
    """Protocol 6 adds currency codes and expanded values; a host reads the protocol byte to know
    (the npm host does, and read past the end when the simulator said 6 before being asked)."""
    h = Host(SspSimulator())
    n = len(USD_SETUP.channel_values)
    before = h.send(Command.SETUP_REQUEST)[1:]
    assert len(before) == 16 + 2 * n and parse_setup(before).protocol == 4
    assert h.send(Command.HOST_PROTOCOL_VERSION, b"\x06") == OK
    after = h.send(Command.SETUP_REQUEST)[1:]
    assert len(after) == 16 + 2 * n + 7 * n and parse_setup(after) == USD_SETUP


def test_a_note_is_read_held_accepted_and_credited_once(host, sim):
    assert sim.insert_note(20)
    assert host.poll() == [(PollEvent.READ, 0)]
    assert host.poll() == [(PollEvent.READ, 5)]           # in escrow
    for _ in range(3):                                    # the host holds it
        assert host.send(Command.HOLD) == OK
    assert sim.state is State.ESCROW and sim.cashbox == []
    assert host.poll() == [(PollEvent.STACKING, None)]    # a plain POLL accepts it
    assert host.poll() == [(PollEvent.CREDIT, 5), (PollEvent.STACKING, None)]
    assert host.poll() == [(PollEvent.STACKED, None)]
    assert host.poll() == []
    assert sim.cashbox == [Note(5, 20)] and sim.state is State.IDLE
    assert host.send(Command.HOLD) == bytes((Response.CANNOT_PROCESS,))


def test_a_repeated_sequence_flag_gets_the_last_reply_and_acts_once(host, sim):
    assert sim.insert_note(20)
    host.poll()
    host.poll()
    host.poll()                                            # accepted: STACKING
    credit = host.send(Command.POLL)
    first = host.last
    assert PollEvent.CREDIT in credit
    again = host.raw(first)                               # the reply was "lost": same flag again
    assert len(again) == 1 and sim.resent == 1 and sim.received[Command.POLL] == 6
    assert sim.cashbox == [Note(5, 20)]
    if sim.encryption:                                    # the same bytes, same counter
        assert again[0].data[0] == 0x7E
    assert host.poll() == [(PollEvent.STACKED, None)]


def test_return_on_reject(host, sim):
    assert sim.insert_note(10)
    host.poll()
    assert host.poll() == [(PollEvent.READ, 4)]
    assert host.send(Command.REJECT_BANKNOTE) == OK
    assert host.poll() == [(PollEvent.REJECTING, None)]
    assert host.poll() == [(PollEvent.REJECTED, None)]
    assert sim.returned == [Note(4, 10)] and sim.cashbox == []
    assert host.send(Command.LAST_REJECT_CODE) == OK + b"\x08"
    assert host.send(Command.REJECT_BANKNOTE) == bytes((Response.CANNOT_PROCESS,))


def test_an_inhibited_channel_is_rejected_and_a_disabled_unit_takes_nothing(host, sim):
    assert host.send(Command.SET_CHANNEL_INHIBITS, inhibit_mask([3])) == OK
    assert sim.insert_note(20)
    assert host.poll() == [(PollEvent.READ, 0)]
    assert host.poll() == [(PollEvent.REJECTING, None)]
    assert host.poll() == [(PollEvent.REJECTED, None)]
    assert host.send(Command.LAST_REJECT_CODE) == OK + b"\x06"
    assert host.send(Command.DISABLE) == OK
    assert host.poll() == [(PollEvent.DISABLED, None)]
    assert not sim.insert_note(5)


@pytest.mark.parametrize(("inject", "event"), [
    (lambda s: s.jam(), PollEvent.SAFE_JAM),
    (lambda s: s.jam(safe=False), PollEvent.UNSAFE_JAM),
    (lambda s: s.stacker_full(), PollEvent.STACKER_FULL),
    (lambda s: s.fraud(), PollEvent.FRAUD_ATTEMPT),
    (lambda s: s.remove_cashbox(), PollEvent.CASHBOX_REMOVED),
])
def test_faults_are_reported_until_cleared(host, sim, inject, event):
    assert sim.insert_note(20)
    host.poll()
    inject(sim)
    for _ in range(2):
        assert [code for code, _ in host.poll()] == [event]
    assert not sim.insert_note(20)
    sim.clear_fault()
    after = host.poll()
    assert after == ([(PollEvent.CASHBOX_REPLACED, None)] if event == PollEvent.CASHBOX_REMOVED
                     else [])
    assert sim.cashbox == [] and sim.returned == []      # the caught note is gone


def test_reset_restarts_the_unit_and_returns_a_note_in_the_front(host, sim):
    assert sim.insert_note(50)
    host.poll()
    assert host.send(Command.RESET) == OK
    host.codec.restart()
    assert host.send(Command.SYNC, plain=True) == OK
    if sim.encryption:
        assert host.send(Command.POLL, plain=True) == bytes((Response.KEY_NOT_SET,))
        host.exchange_keys()
    assert host.poll() == [(PollEvent.SLAVE_RESET, None), (PollEvent.NOTE_CLEARED_FROM_FRONT, 6),
                           (PollEvent.DISABLED, None)]
    assert sim.returned == [Note(6, 50)] and not sim.enabled


def test_power_off_in_the_stacker_clears_the_note_into_the_cash_box(host, sim):
    assert sim.insert_note(20)
    host.poll()
    host.poll()
    host.poll()                                           # STACKING, not yet credited
    sim.power_off()
    assert host.send(Command.POLL) is None                # silent
    sim.power_on()
    host.codec.restart()
    assert host.send(Command.SYNC, plain=True) == OK
    if sim.encryption:
        host.exchange_keys()
    assert host.poll()[:2] == [(PollEvent.SLAVE_RESET, None),
                               (PollEvent.NOTE_CLEARED_INTO_CASHBOX, 5)]


def test_essp_key_rules():
    sim = SspSimulator(encryption=True, fixed_key=TEST_FIXED_KEY, rng=random.Random(1))
    h = Host(sim)
    assert h.send(Command.SYNC) == OK
    assert h.send(Command.POLL) == bytes((Response.KEY_NOT_SET,))
    assert h.send(Command.REQUEST_KEY_EXCHANGE, bytes(8)) == bytes((Response.FAIL,))
    assert h.send(Command.SET_GENERATOR, pack64(15)) == bytes((Response.PARAMETER_OUT_OF_RANGE,))
    assert h.send(Command.SET_GENERATOR, b"\x05") == bytes((Response.WRONG_PARAMETERS,))
    h.exchange_keys()
    assert sim.keyed
    # A general command may come in plain; a POLL reply that carries a credit is encrypted.
    assert h.send(Command.ENABLE, plain=True) == OK
    assert h.send(Command.SET_CHANNEL_INHIBITS, inhibit_mask([5]), plain=True) == OK
    assert sim.insert_note(20)
    for _ in range(3):
        h.poll()
    reply = h.codec.command(bytes((Command.POLL,)))
    packets = h.raw(reply)
    assert packets[0].data[0] == 0x7E
    assert PollEvent.CREDIT in h.essp.unwrap(packets[0].data)


def test_a_replayed_encrypted_command_is_refused_and_does_not_confuse_the_sequence():
    sim = SspSimulator(encryption=True, fixed_key=TEST_FIXED_KEY, rng=random.Random(2))
    h = Host(sim)
    h.ready()
    h.send(Command.DISABLE)
    recorded = h.last                                      # an encrypted DISABLE, seq s
    assert h.send(Command.ENABLE) == OK                    # seq not s
    # The recorded packet again, now with the flag the host's next command will carry:
    tap = SspCodec(Role.DEVICE)
    tap.receive_data(recorded)
    (packet,) = tap.events()
    replay = SspCodec(Role.HOST)
    replay._seq = h.codec.expected_seq                     # its command() toggles the flag
    assert h.raw(replay.command(packet.data)) == []
    assert sim.refused == 1 and sim.enabled                # not acted on
    assert h.poll() == []                                   # a new command, not a "repeat"
    # Last (a damaged frame may leave the device's decoder waiting inside a stuffed 0x7F pair):
    assert h.raw(recorded[:1] + bytes((recorded[1] ^ 0x80,)) + recorded[2:]) == []  # bad CRC
    assert sim.enabled and sim.received[Command.DISABLE] == 1


def test_lost_dropped_and_corrupted_wire_faults(host, sim):
    sim.lose_next_command(Command.POLL)
    assert host.send(Command.POLL) is None and sim.received[Command.POLL] == 2
    assert host.repeat() == OK                           # the host repeats it: now it arrives
    assert sim.received[Command.POLL] == 3 and sim.resent == 0
    sim.drop_next_reply()
    assert host.send(Command.DISABLE) is None and not sim.enabled    # acted, reply lost
    assert host.repeat() == OK and sim.resent == 1                   # resent on repeat
    assert sim.received[Command.DISABLE] == 1
    sim.corrupt_next_crc()
    host.codec.receive_data(b"".join(sim.feed(host.codec.command(bytes((Command.SYNC,))))))
    assert host.codec.events()[0].reason == "bad CRC"
    sim.repeat_replies()
    assert len(sim.feed(host.codec.command(bytes((Command.SYNC,))))) == 2


# --- bar-code tickets ---------------------------------------------------------------------------
TICKET = "000111222333444555"


def _barcode_data(host: Host) -> BarcodeData:
    reply = host.send(Command.GET_BARCODE_DATA)
    assert reply[:1] == OK, reply
    return parse_barcode_data(reply[1:])


def _tickets_on(host: Host) -> None:
    assert host.send(Command.SET_BARCODE_INHIBIT, barcode_inhibit(notes=True, tickets=True)) == OK


def test_a_ticket_is_read_held_read_out_accepted_and_acknowledged_once(host, sim):
    assert host.send(Command.GET_BARCODE_INHIBIT) == OK + b"\xfe"     # power-up: no tickets
    assert _barcode_data(host) == BarcodeData(TicketStatus.NO_VALID_DATA)
    _tickets_on(host)
    assert host.send(Command.GET_BARCODE_INHIBIT) == OK + b"\xfc"
    assert sim.insert_ticket(TICKET)
    assert host.poll() == [(PollEvent.READ, 0)]
    assert host.poll() == [(PollEvent.BARCODE_TICKET_VALIDATED, None)]   # in escrow
    assert _barcode_data(host) == BarcodeData(TicketStatus.IN_ESCROW, TICKET.encode())
    for _ in range(3):
        assert host.send(Command.HOLD) == OK
    assert sim.state is State.ESCROW and sim.cashbox == []
    assert host.poll() == [(PollEvent.STACKING, None)]                  # a plain POLL accepts it
    assert host.poll() == [(PollEvent.BARCODE_TICKET_ACK, None), (PollEvent.STACKING, None)]
    assert host.poll() == [(PollEvent.STACKED, None)]
    assert host.poll() == []
    assert sim.cashbox == [Ticket(TICKET)]
    assert _barcode_data(host) == BarcodeData(TicketStatus.STACKED, TICKET.encode())


def test_a_ticket_is_returned_on_reject(host, sim):
    _tickets_on(host)
    assert sim.insert_ticket(TICKET)
    host.poll()
    assert host.poll() == [(PollEvent.BARCODE_TICKET_VALIDATED, None)]
    assert host.send(Command.REJECT_BANKNOTE) == OK
    assert host.poll() == [(PollEvent.REJECTING, None)]
    assert host.poll() == [(PollEvent.REJECTED, None)]
    assert sim.returned == [Ticket(TICKET)] and sim.cashbox == []
    assert _barcode_data(host) == BarcodeData(TicketStatus.REJECTED, TICKET.encode())


@pytest.mark.parametrize(("register", "barcode", "code"), [
    (barcode_inhibit(notes=True, tickets=False), TICKET, 0x06),        # tickets inhibited
    (barcode_inhibit(notes=True, tickets=True), TICKET[:12], 0x14),     # short: BAR_CODE_SCAN_FAIL
    (barcode_inhibit(notes=True, tickets=True), TICKET[:17] + "X", 0x14),
], ids=["inhibited", "short", "not-digits"])
def test_an_inhibited_or_unreadable_ticket_is_rejected(host, sim, register, barcode, code):
    assert host.send(Command.SET_BARCODE_INHIBIT, register) == OK
    assert sim.insert_ticket(barcode)
    assert host.poll() == [(PollEvent.READ, 0)]
    assert host.poll() == [(PollEvent.REJECTING, None)]
    assert host.poll() == [(PollEvent.REJECTED, None)]
    assert host.send(Command.LAST_REJECT_CODE) == OK + bytes((code,))
    assert sim.returned == [Ticket(barcode)] and sim.cashbox == []
    assert _barcode_data(host).status == TicketStatus.NO_VALID_DATA     # never read


def test_currency_inhibited_by_the_barcode_register_rejects_notes_only(host, sim):
    assert host.send(Command.SET_BARCODE_INHIBIT, barcode_inhibit(notes=False, tickets=True)) == OK
    assert sim.insert_note(20)
    assert [host.poll() for _ in range(3)][1:] == [[(PollEvent.REJECTING, None)],
                                                   [(PollEvent.REJECTED, None)]]
    assert sim.insert_ticket(TICKET)
    host.poll()
    assert host.poll() == [(PollEvent.BARCODE_TICKET_VALIDATED, None)]


def test_a_disabled_unit_takes_no_ticket_and_a_reset_inhibits_tickets_again(host, sim):
    _tickets_on(host)
    assert host.send(Command.DISABLE) == OK
    assert not sim.insert_ticket(TICKET)
    assert host.send(Command.RESET) == OK
    assert sim.barcode_inhibit == b"\xfe"
    with pytest.raises(TypeError):
        sim.insert_ticket(123)


def test_a_unit_without_a_reader_knows_no_barcode_command_and_rejects_tickets():
    sim = SspSimulator(barcode_reader=False)
    h = Host(sim)
    h.ready()
    unknown = bytes((Response.UNKNOWN_COMMAND,))
    assert h.send(Command.SET_BARCODE_INHIBIT, b"\xfc") == unknown
    assert h.send(Command.GET_BARCODE_DATA) == unknown
    assert h.send(Command.GET_BARCODE_INHIBIT) == unknown
    assert sim.insert_ticket(TICKET)
    assert [h.poll() for _ in range(3)][1:] == [[(PollEvent.REJECTING, None)],
                                                [(PollEvent.REJECTED, None)]]
    assert h.send(Command.LAST_REJECT_CODE) == OK + b"\x02"


def test_the_ticket_ack_is_encrypted_even_to_a_plain_poll_and_resent_on_repeat():
    sim = SspSimulator(encryption=True, fixed_key=TEST_FIXED_KEY, rng=random.Random(3))
    h = Host(sim)
    h.ready()
    _tickets_on(h)
    assert sim.insert_ticket(TICKET)
    for _ in range(3):
        h.poll()                                        # READ 0, VALIDATED, STACKING
    h.last = h.codec.command(bytes((Command.POLL,)))
    (packet,) = h.raw(h.last)
    assert packet.data[0] == 0x7E
    assert parse_events(h.essp.unwrap(packet.data)[1:])[0] == (PollEvent.BARCODE_TICKET_ACK, None)
    (again,) = h.raw(h.last)                            # the reply was "lost": same flag again
    assert again.data == packet.data and sim.resent == 1 and sim.cashbox == [Ticket(TICKET)]


def test_power_off_with_a_ticket_in_escrow_clears_it_from_the_front(host, sim):
    _tickets_on(host)
    assert sim.insert_ticket(TICKET)
    host.poll()
    host.poll()
    sim.power_off()
    sim.power_on()
    host.codec.restart()
    assert host.send(Command.SYNC, plain=True) == OK
    if sim.encryption:
        host.exchange_keys()
    assert host.poll()[:2] == [(PollEvent.SLAVE_RESET, None),
                               (PollEvent.NOTE_CLEARED_FROM_FRONT, 0)]
    assert sim.returned == [Ticket(TICKET)]


class ItlStyleHost:
    """An eSSP host written from the public rule, not from this product's codec or session (frames,
    CRC, AES with ``cryptography`` directly), counting as ITL's C library does: a command carries
    ``n`` and the host counts to ``n + 1``; the reply must carry ``n + 1``; decrypting does not
    count."""

    def __init__(self, sim: SspSimulator) -> None:
        self.sim = sim
        self.flag = 0x00                 # the first command after a SYNC sent with 0x80
        self.count = 0
        self.cipher: Cipher | None = None

    def frame(self, seq: int, data: bytes) -> bytes:
        body = bytes((seq, len(data))) + data
        crc = crc_8005(body)
        return b"\x7f" + (body + bytes((crc & 0xFF, crc >> 8))).replace(b"\x7f", b"\x7f\x7f")

    def send(self, data: bytes) -> bytes:
        if data == bytes((Command.SYNC,)):
            seq, self.flag = 0x80, 0x00
        else:
            seq, self.flag = self.flag, self.flag ^ 0x80
        if self.cipher is not None:
            block = bytes((len(data),)) + self.count.to_bytes(4, "little") + data
            block += bytes(-(len(block) + 2) % 16)
            crc = crc_8005(block)
            encryptor = self.cipher.encryptor()
            data = b"\x7e" + encryptor.update(block + bytes((crc & 0xFF, crc >> 8)))
            self.count += 1
        (wire,) = self.sim.feed(self.frame(seq, data))
        body = wire[1:].replace(b"\x7f\x7f", b"\x7f")
        assert body[0] == seq and crc_8005(body[:-2]) == body[-2] | body[-1] << 8
        reply = body[2:-2]
        if reply[:1] != b"\x7e":
            return reply
        block = self.cipher.decryptor().update(reply[1:])
        assert crc_8005(block[:-2]) == block[-2] | block[-1] << 8
        assert int.from_bytes(block[1:5], "little") == self.count, "the reply's eCOUNT"
        return block[5:5 + block[0]]

    def exchange_keys(self, fixed_key: int) -> None:
        generator, modulus, secret = 65537, 4294967291, 65521
        assert self.send(bytes((Command.SET_GENERATOR,)) + pack64(generator)) == OK
        assert self.send(bytes((Command.SET_MODULUS,)) + pack64(modulus)) == OK
        reply = self.send(bytes((Command.REQUEST_KEY_EXCHANGE,))
                          + pack64(pow(generator, secret, modulus)))
        assert reply[:1] == OK
        key = pow(u64(reply[1:]), secret, modulus)
        self.cipher = Cipher(algorithms.AES(pack64(fixed_key) + pack64(key)), modes.ECB())
        self.count = 0


def test_a_host_counting_as_itl_does_runs_encrypted_commands_in_a_row():
    sim = SspSimulator(encryption=True, fixed_key=TEST_FIXED_KEY, rng=random.Random(4))
    host = ItlStyleHost(sim)
    assert host.send(bytes((Command.SYNC,))) == OK
    host.exchange_keys(TEST_FIXED_KEY)
    assert host.send(bytes((Command.HOST_PROTOCOL_VERSION, 6))) == OK            # eCOUNT 0
    assert host.send(bytes((Command.GET_SERIAL_NUMBER,))) == OK + (1_234_567).to_bytes(4, "big")
    assert parse_setup(host.send(bytes((Command.SETUP_REQUEST,)))[1:]) == USD_SETUP
    assert host.send(bytes((Command.SET_CHANNEL_INHIBITS,)) + inhibit_mask([5])) == OK
    assert host.send(bytes((Command.ENABLE,))) == OK
    assert host.send(bytes((Command.POLL,))) == OK + bytes((PollEvent.SLAVE_RESET,))
    assert sim.insert_note(20)
    events = [parse_events(host.send(bytes((Command.POLL,)))[1:]) for _ in range(5)]
    assert (PollEvent.CREDIT, 5) in [e for step in events for e in step]
    assert host.count == 11 and sim.refused == 0 and sim.cashbox == [Note(5, 20)]
