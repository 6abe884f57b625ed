"""The host's end of a simulated product-link device (shoe, I/O board), sans-I/O: a fake clock,
a host that encodes frames and decodes what the simulator writes, and an independent CRC."""

from __future__ import annotations

from drivers.link.codec import LinkCodec, LinkFrame, LinkType, encode, seq_bytes


def kermit(data: bytes) -> int:
    """CRC-16/KERMIT written out bit by bit: an independent check of the golden frames."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return crc


class Clock:
    """A clock the test moves by hand (``clock.now = ...``)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Host:
    """The terminal's end: encodes frames, decodes what the simulator writes."""

    def __init__(self, sim) -> None:
        self.sim = sim
        self.codec = LinkCodec()
        self.writes: list[bytes] = []

    def _read(self, writes: list[bytes]) -> list:
        self.writes = writes
        self.codec.receive_data(b"".join(writes))
        return self.codec.events()

    def send(self, frame: LinkFrame) -> list:
        return self._read(self.sim.feed(encode(frame)))

    def tick(self) -> list:
        return self._read(self.sim.tick())

    def ack(self, seq: int) -> list:
        return self.send(LinkFrame(0, LinkType.ACK, seq_bytes(seq)))

    def reset(self) -> list:
        return self.send(LinkFrame(0, LinkType.RESET))
