"""The SAS port driver over a pty pair: bytes both ways, the host reopening, the line's parity."""

from __future__ import annotations

import queue
import termios

import pytest

from drivers.sas.port import CMSPAR, PTY, SasPort, SasPortError, stick_parity
from tests.sas.helpers import wait_for


def _ports():
    machine_in: queue.Queue[bytes] = queue.Queue()
    host_in: queue.Queue[bytes] = queue.Queue()
    machine = SasPort(PTY, machine_in.put)
    host = SasPort(machine.path, host_in.put)
    return machine, machine_in, host, host_in


def _read(inbox: queue.Queue[bytes], n: int) -> bytes:
    data = b""
    while len(data) < n:
        data += inbox.get(timeout=2)
    return data


def test_a_pty_carries_polls_in_and_replies_out_and_the_host_may_reopen_it():
    machine, machine_in, host, host_in = _ports()
    try:
        assert machine.is_pty and machine.path.startswith("/dev/pts/")
        assert not machine.wakeup_bit and not host.wakeup_bit          # a pty keeps no parity
        host.write(b"\x01\x1f", wakeup=True)                           # the wakeup bit is lost, not the bytes
        assert _read(machine_in, 2) == b"\x01\x1f"
        machine.write(bytes(range(24)))
        assert _read(host_in, 24) == bytes(range(24))
        host.close()
        host = SasPort(machine.path, host_in.put)                      # a host reopens the port
        host.write(b"\x81")
        assert _read(machine_in, 1) == b"\x81"
    finally:
        host.close()
        machine.close()
    machine.close()                                                    # idempotent
    assert machine.closed
    with pytest.raises(OSError, match="closed"):
        machine.write(b"\x01")


def test_a_receiver_that_fails_does_not_stop_the_port():
    calls: list[bytes] = []

    def failing(data: bytes) -> None:
        calls.append(data)
        if len(calls) == 1:
            raise RuntimeError("a bug in the receiver")

    machine = SasPort(PTY, failing)
    host = SasPort(machine.path, lambda data: None)
    try:
        host.write(b"\x81")
        wait_for(lambda: len(calls) == 1)
        host.write(b"\x82")
        wait_for(lambda: len(calls) == 2)
        assert calls == [b"\x81", b"\x82"]
    finally:
        host.close()
        machine.close()


def test_stick_parity_sets_mark_for_the_wakeup_bit_and_space_for_the_rest():
    attrs = [0, 0, termios.CS7 | termios.CSTOPB | termios.CREAD, 0, 0, 0, []]
    stick_parity(attrs, mark=True)
    cflag = attrs[2]
    assert cflag & termios.CSIZE == termios.CS8 and not cflag & termios.CSTOPB      # 8 data bits, 1 stop bit
    assert cflag & (termios.PARENB | CMSPAR | termios.PARODD) == termios.PARENB | CMSPAR | termios.PARODD
    assert cflag & termios.CREAD
    stick_parity(attrs, mark=False)
    assert attrs[2] & (termios.PARENB | CMSPAR | termios.PARODD) == termios.PARENB | CMSPAR


def test_a_port_that_does_not_exist_or_is_no_tty_is_a_clear_error(tmp_path):
    with pytest.raises(SasPortError, match="cannot open the SAS port /nonexistent/ttyS9"):
        SasPort("/nonexistent/ttyS9", lambda data: None)
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    with pytest.raises(SasPortError, match="is not a serial port SAS can use"):
        SasPort(str(plain), lambda data: None)


def test_on_a_line_with_parity_the_wakeup_byte_alone_goes_with_mark_and_the_rest_with_space(monkeypatch):
    """A real port cannot be had here: the port's termios calls are recorded on a pty instead."""
    import drivers.sas.port as port_module

    machine_in: queue.Queue[bytes] = queue.Queue()
    port = SasPort(PTY, machine_in.put)
    host = SasPort(port.path, machine_in.put)
    calls: list[object] = []
    attrs = [0, 0, termios.CS8, 0, 0, 0, []]
    monkeypatch.setattr(port_module.termios, "tcdrain", lambda fd: calls.append("drain"))
    monkeypatch.setattr(port_module.termios, "tcgetattr", lambda fd: list(attrs))
    monkeypatch.setattr(port_module.termios, "tcsetattr",
                        lambda fd, when, new: calls.append("mark" if new[2] & termios.PARODD else "space"))
    written = port._write_all
    monkeypatch.setattr(port, "_write_all", lambda data, timeout: (calls.append(bytes(data)), written(data, timeout)))
    monkeypatch.setattr(port, "_parity", True)
    try:
        port.write(b"\x01\x72\x02", wakeup=True)
        port.write(b"\x00\x11")                                   # a reply: space only, no switching
        assert calls == ["drain", "mark", b"\x01", "drain", "space", b"\x72\x02", b"\x00\x11"]
    finally:
        host.close()
        port.close()
