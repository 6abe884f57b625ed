"""Golden SSP byte exchanges around SYNC, shared by the sequence tests and the simulator-process
test. The SYNC / OK frames with the flag set are those of protocol-frames.md of the project's
reference vectors; the others are built from the frame layout there (their CRCs are checked in
``test_ssp_sequence.py`` by an independent routine). The simulator's serial number is 1 234 567.
"""

from __future__ import annotations


def crc_8005(data: bytes) -> int:
    """SSP's CRC-16 (poly 0x8005, seed 0xFFFF, MSB first), bit by bit: independent of
    ``drivers.crc``, to check golden frames and eSSP blocks."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005 if crc & 0x8000 else crc << 1) & 0xFFFF
    return crc


SYNC_SET = "7F 80 01 11 65 82"                     # protocol-frames.md
OK_SET = "7F 80 01 F0 23 80"                       # protocol-frames.md
SYNC_CLEAR = "7F 00 01 11 66 08"
OK_CLEAR = "7F 00 01 F0 20 0A"
SERIAL_CLEAR = "7F 00 01 0C 28 08"                 # GET_SERIAL_NUMBER
SERIAL_REPLY = "7F 00 05 F0 00 12 D6 87 F3 1C"     # OK + 1234567 big-endian
SETUP_SET = "7F 80 01 05 1D 82"                    # SETUP_REQUEST
SETUP_REPLY = ("7F 80 1F F0 00 30 31 30 30 55 53 44 00 00 01 07 01 02 05 0A 14 32 64"
               " 02 02 02 02 02 02 02 00 00 64 04 25 D9")   # validator, "0100", USD, $1..$100, protocol 4
POLL_CLEAR = "7F 00 01 07 11 88"
POLL_RESET_REPLY = "7F 00 03 F0 F1 E8 BC 30"       # OK, SLAVE_RESET, DISABLED
POLL_SET = "7F 80 01 07 12 02"
POLL_REPLY = "7F 80 02 F0 E8 4F A2"                # OK, DISABLED


def exchange(sync: str, ok: str) -> list[tuple[str, str, bool]]:
    """(host frame, device reply, a repeat?) after a SYNC sent with either flag: GET_SERIAL_NUMBER
    with the flag clear, SETUP_REQUEST set, POLL clear whose reply is lost, the same POLL again
    (a repeat: the same reply, not acted on twice), then POLL set."""
    return [(sync, ok, False), (SERIAL_CLEAR, SERIAL_REPLY, False), (SETUP_SET, SETUP_REPLY, False),
            (POLL_CLEAR, POLL_RESET_REPLY, False), (POLL_CLEAR, POLL_RESET_REPLY, True),
            (POLL_SET, POLL_REPLY, False)]


EXCHANGES = {"sync-flag-set": exchange(SYNC_SET, OK_SET),
             "sync-flag-clear": exchange(SYNC_CLEAR, OK_CLEAR)}

DISABLE_SET = "7F 80 01 09 35 82"
DISABLE_CLEAR = "7F 00 01 09 36 08"
#: What the host sent before its SYNC (a session in progress): nothing, or DISABLE twice, the
#: last with the flag clear or set (so the SYNC's flag equals the last command's, or not).
BEFORE = {"fresh": [], "clear-last": [DISABLE_SET, DISABLE_CLEAR],
          "set-last": [DISABLE_CLEAR, DISABLE_SET]}
