"""sas-comm-py's SAS host (PyPI, not written for this product), with only what its 0.1.0 lacks.

``SlotMachine`` opens a serial port (here a pty's path) with pyserial, frames the polls and checks
each reply's CRC itself. This subclass adds the ``get_serial_number`` its constructor calls but
0.1.0 does not define (as the library's own 0x54 read), and a general poll, for which it has no
method: sent the way the library sends everything, its wakeup byte 0x80 first, and read back with
the library's own ``read``. What it sends and does differently: docs/protocols/sas.md, "Checked
against an independent host".
"""

from __future__ import annotations

from sas_comm_py import Response, SlotMachine


class SasCommPyHost(SlotMachine):
    def get_serial_number(self) -> Response:
        return self.write_type_R(0x54, following_length=True)

    def meters(self, command: int, length: int) -> list[int]:
        """The BCD meters of an R poll's reply of ``length`` bytes, read with the library's own
        ``write_type_R``: 4 bytes each, but 0x18's two of 2 bytes."""
        data = self.write_type_R(command, length_to_read=length).data
        widths = [2, 2] if command == 0x18 else [4] * (length // 4)
        starts = [sum(widths[:i]) for i in range(len(widths))]
        return [number(data[s : s + w]) for s, w in zip(starts, widths, strict=True)]

    def general_poll(self) -> int:
        """The machine's exception code."""
        self.port.write(bytes((self.wakeup_bit, 0x80 | self.address)))
        answer: bytes = self.read(b"", response_type="ack_nack").ack_nack
        assert len(answer) == 1, "no answer to the general poll"
        return answer[0]


def number(hex_bytes: list[str]) -> int:
    """A BCD field as the library returns it (a hex string a byte): its digits are the number."""
    return int("".join(hex_bytes))


def text(hex_bytes: list[str]) -> str:
    """An ASCII field as the library returns it."""
    return bytes.fromhex("".join(hex_bytes)).decode("ascii")
