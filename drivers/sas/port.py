"""The SAS serial port: a real port with the wakeup bit emulated by parity, or a pseudo-terminal.

SAS runs at 19200 baud, 8 data bits, one stop bit and a ninth "wakeup" bit (docs/protocols/sas.md).
A Linux port emulates the ninth bit with *stick* parity (``CMSPAR``): with ``PARENB | CMSPAR`` the
parity bit is always ``PARODD`` (set: mark, the wakeup bit set; clear: space, the bit clear). The
host sets it on the first byte of a message; the gaming machine sends its replies with it clear
(space) and its chirp with it set (mark). Input parity is not checked (``INPCK`` off): the machine
frames what it receives by content (``EgmDecoder``), so it reads the same whatever the parity.

``path == "pty"`` opens a pseudo-terminal instead, in raw mode: the host opens :attr:`SasPort.path`
(the slave, e.g. ``/dev/pts/5``) and this side keeps the master. A pty has no parity: the kernel
drops the parity bits, so the wakeup bit is lost both ways and nothing is switched. The port keeps
a descriptor on the slave open for its whole life (a master whose slave nobody holds reads as an
I/O error while the host reopens it) and parks the slave's nominal speed whenever bytes arrive, so
a host that reopens the pty with only its parity changed is not refused (recent kernels answer
EINVAL to a ``tcsetattr`` none of whose changes took effect; ``sim_hardware/pty_link.py`` explains
it for the simulators' ptys).

A reader thread hands every chunk received to ``on_data`` (on the reader's thread: the callback
must not touch critical memory itself, see ``firmware/cabinet/sas_port.py``); :meth:`SasPort.write`
may be called from any thread. :meth:`SasPort.close` stops the thread and closes the descriptors.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import termios
import threading
import tty
from collections.abc import Callable
from typing import Final

log = logging.getLogger(__name__)

#: ``CMSPAR`` (stick parity) from <asm-generic/termbits.h>; Python's termios does not name it.
CMSPAR: Final = getattr(termios, "CMSPAR", 0o10000000000)
#: The line's speed.
BAUD: Final = termios.B19200
#: A pty slave's nominal speed between the host's opens (it means nothing on a pty).
PARKED_SPEED: Final = termios.B38400
#: How long one wait of the reader thread lasts before it looks at its stop flag again.
READ_SLICE_S: Final = 0.05
#: How long a write waits for room before it is given up.
WRITE_TIMEOUT_S: Final = 1.0
#: The path that asks for a pseudo-terminal.
PTY: Final = "pty"

_CC, _ISPEED, _OSPEED, _CFLAG = 6, 5, 4, 2


class SasPortError(OSError):
    """The port could not be opened or configured (the message names it)."""


def stick_parity(attrs: list[int | list[bytes | int]], *, mark: bool) -> None:
    """Set ``attrs`` (from ``tcgetattr``) to 8 data bits with stick parity: mark (the wakeup bit
    set) or space (clear); input parity is not checked."""
    cflag = attrs[_CFLAG]
    assert isinstance(cflag, int)
    cflag = (cflag & ~(termios.CSIZE | termios.CSTOPB | termios.PARODD)) | termios.CS8 | termios.PARENB | CMSPAR
    attrs[_CFLAG] = cflag | termios.PARODD if mark else cflag


class SasPort:
    """One end of a SAS line (the gaming machine's, or a host tool's): bytes in through
    ``on_data`` on a reader thread, :meth:`write` out."""

    def __init__(self, path: str, on_data: Callable[[bytes], None], *, name: str = "sas-port") -> None:
        self._on_data = on_data
        self._slave = -1
        self._pty = path == PTY
        self._parity = False           #: the line keeps a parity bit (a real port): the wakeup bit exists
        self._write_lock = threading.Lock()
        if self._pty:
            master, slave = os.openpty()
            tty.setraw(master)
            tty.setraw(slave)
            self._fd, self._slave = master, slave
            self.path = os.ttyname(slave)
        else:
            self.path = path
            self._fd = self._open_serial(path)
        os.set_blocking(self._fd, False)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read_loop, name=name, daemon=True)
        self._thread.start()

    @property
    def is_pty(self) -> bool:
        """This side made the pseudo-terminal (``path == "pty"``)."""
        return self._pty

    @property
    def wakeup_bit(self) -> bool:
        """The line carries the wakeup bit (a real port's stick parity; not a pty)."""
        return self._parity

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def _open_serial(self, path: str) -> int:
        try:
            fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError as exc:
            raise SasPortError(exc.errno, f"cannot open the SAS port {path}: {exc.strerror}") from None
        try:
            tty.setraw(fd)
            attrs = termios.tcgetattr(fd)
            attrs[_ISPEED] = attrs[_OSPEED] = BAUD
            attrs[_CFLAG] |= termios.CREAD | termios.CLOCAL
            attrs[0] &= ~(termios.INPCK | termios.PARMRK | termios.ISTRIP | termios.IGNPAR)
            stick_parity(attrs, mark=False)
            try:
                termios.tcsetattr(fd, termios.TCSANOW, attrs)
            except termios.error:
                # A pty that already runs raw at 19200: only the parity was asked, which a pty
                # cannot keep, and the kernel refuses a change of nothing (see the module).
                if not self._raw_at_speed(fd):
                    raise
            self._parity = bool(termios.tcgetattr(fd)[_CFLAG] & termios.PARENB)
        except (termios.error, OSError) as exc:
            os.close(fd)
            raise SasPortError(errno.EINVAL, f"{path} is not a serial port SAS can use: {exc}") from None
        return fd

    @staticmethod
    def _raw_at_speed(fd: int) -> bool:
        attrs = termios.tcgetattr(fd)
        cflag = attrs[_CFLAG]
        return attrs[_ISPEED] == BAUD and isinstance(cflag, int) and cflag & termios.CSIZE == termios.CS8

    # -- writing ----------------------------------------------------------------------------------
    def write(self, data: bytes, *, wakeup: bool = False, timeout: float = WRITE_TIMEOUT_S) -> None:
        """Send ``data``; ``wakeup``: its first byte with the wakeup bit set (mark parity), the rest
        clear (a host's poll, or the machine's chirp when ``data`` is one byte). Where the wakeup
        bit does not exist (a pty) the bytes are sent as they are. ``TimeoutError`` when there is
        no room for them within ``timeout`` seconds (a pty nobody reads fills up)."""
        if not data:
            return
        with self._write_lock:
            if wakeup and self._parity:
                self._set_mark(True)
                self._write_all(data[:1], timeout)
                self._set_mark(False)
                data = data[1:]
            self._write_all(data, timeout)

    def _set_mark(self, mark: bool) -> None:
        """Switch the parity once what was written before has gone out with the old one."""
        fd = self._require()
        termios.tcdrain(fd)
        attrs = termios.tcgetattr(fd)
        stick_parity(attrs, mark=mark)
        termios.tcsetattr(fd, termios.TCSANOW, attrs)

    def _write_all(self, data: bytes, timeout: float = WRITE_TIMEOUT_S) -> None:
        view = memoryview(data)
        while view:
            fd = self._require()
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                _, ready, _ = select.select([], [fd], [], timeout)
                if not ready:
                    raise TimeoutError(f"{self.path}: no room for {len(view)} bytes (is the host reading?)") from None

    def discard_unread(self) -> None:
        """A pty: drop what the host side has not read (a pty nobody reads fills up with chirps;
        a host that opens it later should not read them first). A serial port: nothing (its line
        drains whether anyone listens or not)."""
        if self._pty and self._slave >= 0:
            termios.tcflush(self._slave, termios.TCIFLUSH)

    def _require(self) -> int:
        if self._fd < 0:
            raise OSError(errno.EBADF, f"the SAS port {self.path} is closed")
        return self._fd

    # -- reading ----------------------------------------------------------------------------------
    def _read_loop(self) -> None:
        while not self._stop.is_set():
            fd = self._fd
            if fd < 0:
                return
            try:
                ready, _, _ = select.select([fd], [], [], READ_SLICE_S)
                data = os.read(fd, 4096) if ready else b""
            except BlockingIOError:
                continue
            except (OSError, ValueError) as exc:
                if not self._stop.is_set():
                    log.warning("%s: the port failed, no more reading: %s", self.path, exc)
                return
            if not data:
                continue
            if self._pty:
                self._park()
            try:
                self._on_data(data)
            except Exception:                          # the line goes on; the callback's bug is logged
                log.exception("%s: the receiver failed on %s", self.path, data.hex(" "))

    def _park(self) -> None:
        try:
            attrs = termios.tcgetattr(self._slave)
            if attrs[_ISPEED] != PARKED_SPEED or attrs[_OSPEED] != PARKED_SPEED:
                attrs[_ISPEED] = attrs[_OSPEED] = PARKED_SPEED
                termios.tcsetattr(self._slave, termios.TCSANOW, attrs)
        except (termios.error, OSError) as exc:        # closing under us: nothing to park
            log.debug("%s: cannot park the slave's speed: %s", self.path, exc)

    # -- closing ----------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the reader and close the port; idempotent."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=2 * READ_SLICE_S + 1.0)
        for attr in ("_fd", "_slave"):
            fd = getattr(self, attr)
            setattr(self, attr, -1)
            if fd >= 0:
                os.close(fd)

    def __enter__(self) -> SasPort:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<SasPort {self.path} {'closed' if self.closed else 'open'}>"


__all__ = ["CMSPAR", "PTY", "SasPort", "SasPortError", "stick_parity"]
