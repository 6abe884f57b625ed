"""ITL SSP (bill validator, second protocol): framing, byte stuffing and the sequence flag.

Frame (``docs/protocols/frames.md``)::

    +------+--------+-----+-----------+-------+-------+
    | STX  | SEQ/ID | LEN | DATA ...  | CRC_L | CRC_H |
    | 0x7F | b7 seq |     | LEN bytes |       |       |
    +------+--------+-----+-----------+-------+-------+

SEQ/ID: bit 7 is the sequence flag, bits 0-6 the slave address. LEN counts DATA only. The CRC is
CRC-16 poly 0x8005, init 0xFFFF, MSB first, no reflection (over SEQ/ID..DATA), sent low byte
first. Every 0x7F after the STX, CRC included, is sent twice (byte stuffing). Serial: 9600 8N2.

Sequence rule: the host toggles the flag for every new command and repeats a command with the
same flag when its reply was lost; the device answers with the command's flag and, seeing a
command whose flag equals the last accepted command's, resends its last reply instead of acting
twice. SYNC (0x11) restarts the sequence: ITL's SSP manual, "A SYNC command resets the seq bit of
the packet so that the slave device expects the next seq bit to be 0. The host then sets its next
seq bit to 0." So, whatever flag the SYNC carried, the device takes the next command with the flag
clear as new (and one with the flag set as a repeat of the SYNC); a SYNC is never a repeat (it is
acted on again, it changes nothing but the sequence). The host sends SYNC with the flag set (as
ITL's own C library does) and its next command with the flag clear.
:class:`SspCodec` keeps that state for either role: the host's ``command`` toggles (or sets the
flag for SYNC), ``repeat`` resends; the device's received packets say ``repeated`` and ``reply``
echoes the flag of the command it answers.

Resynchronisation: a lone 0x7F inside a frame can only be a new STX, so the frame before it is
reported as :class:`~drivers.codec.Garbage` and decoding restarts there; a bad CRC drops the STX
and searches for the next one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from drivers.codec import Garbage, LocalProtocolError, Role, StreamDecoder, skip_to
from drivers.crc import crc16_ssp

STX = 0x7F
SEQ_FLAG = 0x80
MAX_DATA = 255
SERIAL = {"baudrate": 9600, "bytesize": 8, "parity": "N", "stopbits": 2}


class Command(enum.IntEnum):
    RESET = 0x01
    SET_CHANNEL_INHIBITS = 0x02
    SETUP_REQUEST = 0x05
    HOST_PROTOCOL_VERSION = 0x06
    POLL = 0x07
    REJECT_BANKNOTE = 0x08
    DISABLE = 0x09
    ENABLE = 0x0A
    GET_SERIAL_NUMBER = 0x0C
    SYNC = 0x11
    LAST_REJECT_CODE = 0x17
    HOLD = 0x18
    GET_BARCODE_INHIBIT = 0x25
    SET_BARCODE_INHIBIT = 0x26
    GET_BARCODE_DATA = 0x27
    SET_GENERATOR = 0x4A
    SET_MODULUS = 0x4B
    REQUEST_KEY_EXCHANGE = 0x4C


class Response(enum.IntEnum):
    OK = 0xF0
    UNKNOWN_COMMAND = 0xF2
    WRONG_PARAMETERS = 0xF3
    PARAMETER_OUT_OF_RANGE = 0xF4
    CANNOT_PROCESS = 0xF5
    SOFTWARE_ERROR = 0xF6
    FAIL = 0xF8
    KEY_NOT_SET = 0xFA


class PollEvent(enum.IntEnum):
    """Events in a POLL reply's data after OK (those in :data:`WITH_CHANNEL` carry a channel byte)."""

    SLAVE_RESET = 0xF1
    READ = 0xEF
    CREDIT = 0xEE
    REJECTING = 0xED
    REJECTED = 0xEC
    STACKING = 0xCC
    STACKED = 0xEB
    SAFE_JAM = 0xEA
    UNSAFE_JAM = 0xE9
    DISABLED = 0xE8
    STACKER_FULL = 0xE7
    FRAUD_ATTEMPT = 0xE6
    BARCODE_TICKET_VALIDATED = 0xE5    #: a bar-code ticket waits in escrow (no data byte)
    CASHBOX_REPLACED = 0xE4
    CASHBOX_REMOVED = 0xE3
    NOTE_CLEARED_INTO_CASHBOX = 0xE2
    NOTE_CLEARED_FROM_FRONT = 0xE1
    NOTE_PATH_OPEN = 0xE0
    BARCODE_TICKET_ACK = 0xD1          #: the ticket passed a safe point in the stacker (no data)
    CHANNEL_DISABLE = 0xB5
    INITIALISING = 0xB6


#: Poll events followed by one channel byte (0: no channel known yet, e.g. READ while reading).
WITH_CHANNEL = frozenset({PollEvent.READ, PollEvent.CREDIT, PollEvent.FRAUD_ATTEMPT,
                          PollEvent.NOTE_CLEARED_INTO_CASHBOX, PollEvent.NOTE_CLEARED_FROM_FRONT})


def encode_events(events: list[tuple[PollEvent, int | None]]) -> bytes:
    """The data after OK of a POLL reply: each event code, then its channel if it has one."""
    out = bytearray()
    for code, channel in events:
        out.append(code)
        if code in WITH_CHANNEL:
            out.append(channel or 0)
    return bytes(out)


def parse_events(data: bytes) -> list[tuple[int, int | None]]:
    """The events of a POLL reply's data after OK; ``ValueError`` if a channel byte is missing.

    An unknown code is kept (with no channel): the caller logs it. Because an unknown code could
    carry data this table does not know of, parsing stops after it.
    """
    out: list[tuple[int, int | None]] = []
    i = 0
    while i < len(data):
        code = data[i]
        i += 1
        if code in WITH_CHANNEL:
            if i >= len(data):
                raise ValueError(f"poll event 0x{code:02X} without its channel byte")
            out.append((code, data[i]))
            i += 1
        else:
            out.append((code, None))
            if code not in _KNOWN_EVENTS:
                break
    return out


_KNOWN_EVENTS = frozenset(PollEvent)


#: The first DATA byte of an eSSP-encrypted packet.
ENCRYPTED = 0x7E
#: A SYNC command's DATA (sent plain: an encrypted SYNC is an ordinary command to this codec).
SYNC_DATA = bytes((Command.SYNC,))
#: Device: the flag that marks a repeat right after SYNC (the next new command has it clear).
_REPEAT_AFTER_SYNC = True


@dataclass(frozen=True, slots=True)
class Packet:
    """One SSP packet: address, sequence flag and data; ``repeated`` on the device side when the
    host repeated its previous command's flag (resend the last reply, do not act again)."""

    address: int
    seq: bool
    data: bytes
    repeated: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.address <= 0x7F:
            raise ValueError(f"an SSP address is 0..127, not {self.address}")
        if len(self.data) > MAX_DATA:
            raise ValueError(f"SSP data holds at most {MAX_DATA} bytes")


def stuff(body: bytes) -> bytes:
    return body.replace(b"\x7f", b"\x7f\x7f")


def encode(address: int, seq: bool, data: bytes) -> bytes:
    Packet(address, seq, data)                       # validates
    body = bytes(((SEQ_FLAG if seq else 0) | address, len(data))) + data
    crc = crc16_ssp(body)
    return bytes((STX,)) + stuff(body + bytes((crc & 0xFF, crc >> 8)))


class SspCodec(StreamDecoder):
    """One end of an SSP link with its sequence state."""

    max_buffer = 2 * (3 + MAX_DATA + 2) + 1

    def __init__(self, role: Role, address: int = 0) -> None:
        super().__init__()
        if not 0 <= address <= 0x7F:
            raise LocalProtocolError(f"an SSP address is 0..127, not {address}")
        self.role = role
        self.address = address
        #: Host: the flag of the last command sent (the first command is sent with the flag set).
        self._seq = False
        #: Device: the flag a repeat of the last accepted command carries (None: nothing accepted
        #: yet, no command is a repeat), the flag of the command being answered, the two before
        #: the last packet (for :meth:`forget_last`), and the last reply sent.
        self._last_seen: bool | None = None
        self._reply_seq = False
        self._seen_before: tuple[bool | None, bool] = (None, False)
        self.last_reply: bytes | None = None

    # --- sending ------------------------------------------------------------------------------
    def command(self, data: bytes) -> bytes:
        """Host: a new command (the sequence flag toggles; SYNC goes with it set, so that the
        command after it goes with it clear)."""
        self._require(Role.HOST)
        self._seq = True if data == SYNC_DATA else not self._seq
        return encode(self.address, self._seq, data)

    def repeat(self, data: bytes) -> bytes:
        """Host: the last command again, same flag (its reply was lost)."""
        self._require(Role.HOST)
        return encode(self.address, self._seq, data)

    def reply(self, data: bytes) -> bytes:
        """Device: the answer to the last command received, with its flag; kept for resending."""
        self._require(Role.DEVICE)
        if self._last_seen is None:
            raise LocalProtocolError("the device replies only to a command")
        self.last_reply = encode(self.address, self._reply_seq, data)
        return self.last_reply

    def forget_last(self) -> None:
        """Device: the last packet was refused unread (it failed to decrypt, a replay): it does
        not count as the host's last command, so the host's next command is not taken for a
        repeat of it."""
        self._require(Role.DEVICE)
        self._last_seen, self._reply_seq = self._seen_before

    def discard(self) -> int:
        """Drop whatever is buffered (a late or repeated reply); how many bytes."""
        dropped = len(self._buffer)
        self._buffer.clear()
        return dropped

    def restart(self) -> None:
        """Both roles: forget the sequence state, as at power-up (the host's next command goes
        with the flag set; the device takes any next command as new)."""
        self._seq = False
        self._last_seen, self._reply_seq = None, False
        self._seen_before = (None, False)
        self.last_reply = None

    @property
    def expected_seq(self) -> bool:
        """Host: the flag a reply to the last command must carry."""
        return self._seq

    def _require(self, role: Role) -> None:
        if self.role is not role:
            raise LocalProtocolError(f"only the {role.value} does that in SSP")

    # --- receiving ----------------------------------------------------------------------------
    def _decode(self, buffer: bytearray) -> tuple[int, Packet | Garbage | None]:
        if buffer[0] != STX:
            return skip_to(buffer, STX, "bytes before STX")
        body = bytearray()
        i, n = 1, len(buffer)
        while True:
            if len(body) >= 2 and len(body) == 2 + body[1] + 2:
                break
            if i >= n:
                return 0, None
            b = buffer[i]
            if b == STX:
                if i + 1 >= n:
                    return 0, None
                if buffer[i + 1] != STX:               # a lone 0x7F: a new frame starts here
                    return i, Garbage(bytes(buffer[:i]), "frame cut short by a new STX")
                i += 2
            else:
                i += 1
            body.append(b)
        crc = body[-2] | body[-1] << 8
        if crc16_ssp(bytes(body[:-2])) != crc:
            return skip_to(buffer, STX, "bad CRC")
        seq = bool(body[0] & SEQ_FLAG)
        address = body[0] & 0x7F
        data = bytes(body[2:-2])
        repeated = False
        if self.role is Role.DEVICE:
            sync = data == SYNC_DATA
            repeated = not sync and self._last_seen is not None and seq == self._last_seen
            self._seen_before = (self._last_seen, self._reply_seq)
            self._last_seen = _REPEAT_AFTER_SYNC if sync else seq
            self._reply_seq = seq
        return i, Packet(address, seq, data, repeated)
