"""3M MicroTouch serial touch controllers: a sans-I/O codec of Format Tablet, for both ends.

Host -> controller: a command is ASCII between a start-of-header and a carriage return::

    SOH (0x01)  <command: printable ASCII>  CR (0x0D)          e.g. 01 46 54 0D  "<SOH>FT<CR>"

Controller -> host: the answer to each command, framed the same way (``<SOH>0<CR>`` positive,
``<SOH>1<CR>`` negative, or a command's text such as the Output Identity), and, once the sensor is
touched, Format Tablet reports of 5 bytes ``S X x Y y``::

    bit       7   6    5    4    3    2    1    0
    S         1   P    reserved (0)                  P = proximity: 1 touching, 0 lift-off
    X         0   X6   X5   X4   X3   X2   X1   X0
    x         0   X13  X12  X11  X10  X9   X8   X7
    Y         0   Y6   Y5   Y4   Y3   Y2   Y1   Y0
    y         0   Y13  Y12  Y11  Y10  Y9   Y8   Y7     X and Y: 14 bits, 0..16383

The last report of a touch has P = 0 at the last touch point (3M's controller reference guides:
SX112, EX112, EX712; ``docs/protocols/touch.md``).

Resynchronisation (no checksum exists, so the sync bit and the frame structure are all there is):

* host role: a byte with bit 7 set starts a report, an SOH outside a report starts a response;
  anything else is garbage up to the next of those. A byte with bit 7 set where a report's data
  byte is due means the report was torn: the partial report is garbage and the new byte starts the
  next one. A response that meets a byte with bit 7 set, another SOH or a control byte before its
  CR is garbage up to that byte (decoded afresh); one longer than :data:`MAX_TEXT` is garbage.
* device role: bytes before an SOH are garbage; a command is cut the same way as a response.

:class:`MicroTouchCodec` frames and unframes; :class:`ContactTracker` turns the host's reports into
raw :class:`~drivers.touch.contact.Contact` changes (slot 0: the controller reports one touch), and
:class:`TouchDecoder` does both (bytes in, contacts and responses out).
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from drivers.codec import NEED_DATA, Garbage, LocalProtocolError, Role, StreamDecoder
from drivers.touch.contact import Contact, Phase

SOH: Final = 0x01
CR: Final = 0x0D
#: Bit 7 of a report's first byte (and of no other byte of a report).
SYNC: Final = 0x80
#: Bit 6 of a report's first byte: the sensor is being touched.
PROXIMITY: Final = 0x40
REPORT_LENGTH: Final = 5
#: The largest coordinate of Format Tablet (14 bits).
RAW_MAX: Final = 16383
#: The longest command or response text accepted (the Output Identity answer is 6 characters).
MAX_TEXT: Final = 32
#: pyserial settings of the line: 9600 8N1, the controllers' factory default (3M's EX/SX guides).
SERIAL: Final = {"baudrate": 9600, "bytesize": 8, "parity": "N", "stopbits": 1}

# The commands this product uses (3M's names). Each is answered <SOH>0<CR> when it succeeds,
# except OUTPUT_IDENTITY, answered <SOH>CcXxxx<CR>.
FORMAT_TABLET: Final = "FT"          #: 5-byte binary reports (needs 8 data bits)
MODE_STREAM: Final = "MS"            #: a report continuously while touched, and one at lift-off
NULL: Final = "Z"                    #: "are you there"; changes nothing
RESET: Final = "R"                   #: soft reset (stops the data; 225 ms..2 s)
OUTPUT_IDENTITY: Final = "OI"        #: controller type (2 chars) and a build identifier (4)
POSITIVE: Final = "0"
NEGATIVE: Final = "1"


def _check_text(text: str, what: str) -> bytes:
    if not (0 < len(text) <= MAX_TEXT and all(0x20 <= ord(c) <= 0x7E for c in text)):
        raise LocalProtocolError(
            f"a MicroTouch {what} is 1..{MAX_TEXT} printable ASCII characters, not {text!r}")
    return text.encode("ascii")


@dataclass(frozen=True, slots=True)
class Command:
    """A host command, e.g. ``Command("FT")``: ``<SOH>FT<CR>``."""

    text: str


@dataclass(frozen=True, slots=True)
class Response:
    """A controller's answer: ``"0"`` positive, ``"1"`` negative, or a command's text."""

    text: str

    @property
    def ok(self) -> bool:
        return self.text == POSITIVE


@dataclass(frozen=True, slots=True)
class Report:
    """One Format Tablet report: raw ``x``, ``y`` (0..16383) and whether the sensor is touched."""

    x: int
    y: int
    touching: bool

    def __post_init__(self) -> None:
        if not (0 <= self.x <= RAW_MAX and 0 <= self.y <= RAW_MAX):
            raise ValueError(f"a Format Tablet point is 0..{RAW_MAX} on both axes, "
                             f"not ({self.x}, {self.y})")


def encode_report(report: Report) -> bytes:
    status = SYNC | (PROXIMITY if report.touching else 0)
    return bytes((status, report.x & 0x7F, report.x >> 7, report.y & 0x7F, report.y >> 7))


def parse_report(data: bytes | bytearray) -> Report:
    """The report in exactly 5 bytes whose data bytes have bit 7 clear (the decoder checked)."""
    return Report(data[1] | data[2] << 7, data[3] | data[4] << 7, bool(data[0] & PROXIMITY))


def encode(message: Command | Response | Report) -> bytes:
    if isinstance(message, Report):
        return encode_report(message)
    what = "command" if isinstance(message, Command) else "response"
    return bytes((SOH,)) + _check_text(message.text, what) + bytes((CR,))


#: What each role may send.
SENDS: dict[Role, tuple[type, ...]] = {Role.HOST: (Command,), Role.DEVICE: (Response, Report)}


def _skip(buffer: bytearray, start: int, stops: Iterable[int] | None, reason: str) -> tuple[int, Garbage]:
    """Garbage from the start up to the first byte at or after ``start`` that is an SOH or (if
    ``stops`` is None) has bit 7 set, or is in ``stops``."""
    for i in range(start, len(buffer)):
        byte = buffer[i]
        if byte == SOH or (byte & SYNC if stops is None else byte in stops):
            return i, Garbage(bytes(buffer[:i]), reason)
    return len(buffer), Garbage(bytes(buffer), reason)


def _text(buffer: bytearray, kind: type[Command] | type[Response], what: str) -> tuple[int, Any]:
    """A ``<SOH>text<CR>`` at the start of ``buffer`` (which starts with SOH)."""
    for i in range(1, min(len(buffer), MAX_TEXT + 2)):
        byte = buffer[i]
        if byte == CR:
            if i == 1:
                return 2, Garbage(bytes(buffer[:2]), f"empty {what}")
            return i + 1, kind(bytes(buffer[1:i]).decode("ascii"))
        if not 0x20 <= byte <= 0x7E:          # SOH, a sync byte, another control byte
            return i, Garbage(bytes(buffer[:i]), f"{what} cut short")
    if len(buffer) >= MAX_TEXT + 2:
        return _skip(buffer, 1, None, f"{what} longer than {MAX_TEXT} characters")
    return 0, None


class MicroTouchCodec(StreamDecoder):
    """Both ends of a MicroTouch serial link. ``send`` checks the role; ``next_event`` yields
    :class:`Report`, :class:`Response` (host role), :class:`Command` (device role) or
    :class:`~drivers.codec.Garbage`."""

    max_buffer = 4 * MAX_TEXT

    def __init__(self, role: Role) -> None:
        super().__init__()
        self.role = role

    def send(self, message: Command | Response | Report) -> bytes:
        if not isinstance(message, SENDS[self.role]):
            raise LocalProtocolError(
                f"the {self.role.value} does not send {type(message).__name__} in MicroTouch")
        return encode(message)

    def _decode(self, buffer: bytearray) -> tuple[int, Any]:
        if self.role is Role.HOST:
            return self._decode_from_device(buffer)
        if buffer[0] != SOH:
            return _skip(buffer, 1, (), "bytes before <SOH>")
        return _text(buffer, Command, "command")

    @staticmethod
    def _decode_from_device(buffer: bytearray) -> tuple[int, Any]:
        first = buffer[0]
        if first & SYNC:
            for i in range(1, min(len(buffer), REPORT_LENGTH)):
                if buffer[i] & SYNC:
                    return i, Garbage(bytes(buffer[:i]), "report torn by a new sync byte")
            if len(buffer) < REPORT_LENGTH:
                return 0, None
            return REPORT_LENGTH, parse_report(buffer)
        if first == SOH:
            return _text(buffer, Response, "response")
        return _skip(buffer, 1, None, "bytes outside a report or a response")


class ContactTracker:
    """Format Tablet reports -> raw contact changes of the one touch a controller reports.

    Touching and not down: ``DOWN``; touching at a new point: ``MOVE``; touching at the same point
    (Mode Stream repeats a still finger): nothing; not touching while down: ``UP`` at the report's
    point (the last touch point). A lift-off report while up (its touch-down report was lost) is
    counted and ignored. A lift-off report that never comes (line noise) is :meth:`expire`: the
    driver calls it when a finger that is down has sent nothing for longer than Mode Stream's
    repeats allow, so the next touch is a touch-down again, not a move of a finger long gone.
    """

    def __init__(self) -> None:
        self.down = False
        self.x = self.y = 0
        self.counters = {"reports": 0, "repeats": 0, "stray_lift": 0, "lost_lift": 0}

    def expire(self) -> Contact | None:
        """The finger down has gone silent: its lift-off report was lost. ``UP`` at its last point."""
        if not self.down:
            return None
        self.counters["lost_lift"] += 1
        self.down = False
        return Contact(0, self.x, self.y, Phase.UP)

    def feed(self, report: Report) -> Contact | None:
        self.counters["reports"] += 1
        if report.touching:
            if self.down and (report.x, report.y) == (self.x, self.y):
                self.counters["repeats"] += 1
                return None
            phase = Phase.MOVE if self.down else Phase.DOWN
            self.down, self.x, self.y = True, report.x, report.y
            return Contact(0, report.x, report.y, phase)
        if not self.down:
            self.counters["stray_lift"] += 1
            return None
        self.down, self.x, self.y = False, report.x, report.y
        return Contact(0, report.x, report.y, Phase.UP)


class TouchDecoder:
    """The host's side in one: bytes in (``receive_data``), :class:`Contact` changes and the
    controller's :class:`Response`\\ s out (``next_event``); garbage is counted, never raised."""

    def __init__(self) -> None:
        self._codec = MicroTouchCodec(Role.HOST)
        self._tracker = ContactTracker()
        self._counts = {"garbage": 0, "garbage_bytes": 0, "responses": 0}
        self.last_garbage: Garbage | None = None

    def receive_data(self, data: bytes) -> None:
        self._codec.receive_data(data)

    @property
    def buffered(self) -> int:
        """Bytes of a partial report or response waiting for the rest."""
        return self._codec.buffered

    @property
    def touching(self) -> bool:
        return self._tracker.down

    @property
    def reports(self) -> int:
        """Reports decoded so far (repeats included): the driver's sign that a finger still streams."""
        return self._tracker.counters["reports"]

    def expire(self) -> Contact | None:
        """:meth:`ContactTracker.expire`: the finger down went silent, its lift-off was lost."""
        return self._tracker.expire()

    def next_event(self) -> Contact | Response | Any:
        """The next :class:`Contact` or :class:`Response`, or :data:`~drivers.codec.NEED_DATA`."""
        while True:
            event = self._codec.next_event()
            if event is NEED_DATA:
                return event
            if isinstance(event, Report):
                contact = self._tracker.feed(event)
                if contact is not None:
                    return contact
            elif isinstance(event, Response):
                self._counts["responses"] += 1
                return event
            else:
                self._counts["garbage"] += 1
                self._counts["garbage_bytes"] += len(event.data)
                self.last_garbage = event

    def events(self) -> list[Contact | Response]:
        out = []
        while (event := self.next_event()) is not NEED_DATA:
            out.append(event)
        return out

    @property
    def counters(self) -> ChainMap[str, int]:
        """Reports, repeats, stray lift-offs, garbage (chunks and bytes) and responses seen: a
        live view (the driver hands it on as its own counters once, at open)."""
        return ChainMap(self._tracker.counters, self._counts)
