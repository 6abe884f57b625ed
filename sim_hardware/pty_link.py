"""The wire between a simulated device and the real driver: a pseudo-terminal, or a real port.

A simulator talks to a *byte port*: ``read(timeout)`` (whatever arrived, ``b""`` on time-out),
``write(data)``, ``close()``. :class:`PtyLink` opens a pty pair in raw mode and gives the simulator
the master side as a port (:class:`FdPort`) and the driver the slave's path, which pyserial opens
like any serial device: the driver under test is the production driver, byte for byte.
:class:`SerialPort` adapts a real serial port (pyserial) the same way, so a simulator can also play
a device to a terminal on the other end of a cable.

:class:`ServeThread` runs a simulator's ``serve(port, stop)`` loop in a thread and stops it cleanly;
:func:`run_on_pty` does both and closes everything it opened, in order, on exit. :func:`serve_replies`
is the serve loop of a simulator that only answers the host (validators, printer).

The link keeps its own descriptor on the slave open for its whole life: on Linux a pty master whose
slave is not open by anyone reads as an I/O error, and the driver opens and closes the slave as it
likes. Closing the master is an unplug: the driver's next read or write fails.

A pty has no parity: the kernel drops PARENB from the slave's settings, and recent kernels (seen on
6.18) answer EINVAL to a ``tcsetattr`` none of whose requested changes took effect. A driver that
opens the same pty a second time with the same settings (9600 8E1) would fail, because the only
difference left is the parity the pty cannot keep. So :class:`PtyPort` *parks* the slave's nominal
speed at 38400 whenever bytes arrive from the driver (the speed of a pty means nothing, the open
driver never reads it back), and every later open changes the speed and succeeds.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import termios
import threading
import tty
from collections.abc import Callable, Iterator
from typing import Protocol, Self

log = logging.getLogger(__name__)

#: How long one ``read`` of a serve loop waits before it looks at its stop flag again.
READ_SLICE_S = 0.02
#: How long a write may wait for room in the pty before it is given up.
WRITE_TIMEOUT_S = 1.0


class BytePort(Protocol):
    """What a simulator needs from its end of the wire."""

    def read(self, timeout: float) -> bytes:
        """What arrived within ``timeout`` seconds (``b""`` if nothing); ``OSError`` if gone."""
        ...

    def write(self, data: bytes) -> None:
        ...

    def close(self) -> None:
        ...

    @property
    def closed(self) -> bool:
        ...


class FdPort:
    """A byte port over a file descriptor (a pty master), with ``select`` time-outs."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        os.set_blocking(fd, False)

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def fileno(self) -> int:
        return self._fd

    def read(self, timeout: float) -> bytes:
        fd = self._require()
        ready, _, _ = select.select([fd], [], [], max(0.0, timeout))
        if not ready:
            return b""
        try:
            return os.read(fd, 4096)
        except BlockingIOError:
            return b""

    def write(self, data: bytes) -> None:
        fd = self._require()
        view = memoryview(data)
        while view:
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                _, ready, _ = select.select([], [fd], [], WRITE_TIMEOUT_S)
                if not ready:
                    raise TimeoutError(
                        f"no room in the pty for {len(view)} bytes: is the other end reading?"
                    ) from None
                continue
            view = view[written:]

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def _require(self) -> int:
        if self._fd < 0:
            raise OSError(errno.EBADF, "the port is closed")
        return self._fd


#: The nominal speed a :class:`PtyPort` keeps the slave at between the driver's opens.
PARKED_SPEED = termios.B38400


class PtyPort(FdPort):
    """The master side of a :class:`PtyLink`; parks the slave's nominal speed (see the module)."""

    def __init__(self, master: int, slave: int) -> None:
        super().__init__(master)
        self._slave = slave

    def read(self, timeout: float) -> bytes:
        data = super().read(timeout)
        if data and self._slave >= 0:
            self._park()
        return data

    def _park(self) -> None:
        try:
            attrs = termios.tcgetattr(self._slave)
            if attrs[4] != PARKED_SPEED or attrs[5] != PARKED_SPEED:
                attrs[4] = attrs[5] = PARKED_SPEED
                termios.tcsetattr(self._slave, termios.TCSANOW, attrs)
        except termios.error as exc:      # the link is closing under us: nothing to park
            log.debug("pty: cannot park the slave's speed: %s", exc)

    def forget_slave(self) -> None:
        self._slave = -1


class PtyLink:
    """A pty pair in raw mode: ``port`` (master) for the simulator, ``path`` (slave) for the driver."""

    def __init__(self) -> None:
        master, slave = os.openpty()
        try:
            tty.setraw(slave)
            tty.setraw(master)
            self.path: str = os.ttyname(slave)
            self.port = PtyPort(master, slave)
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        self._slave = slave

    @property
    def closed(self) -> bool:
        return self._slave < 0

    def unplug(self) -> None:
        """Close the master now (only when no thread is using ``port``; simulators do it themselves)."""
        self.port.close()

    def close(self) -> None:
        """Close both ends; idempotent."""
        self.port.close()
        self.port.forget_slave()
        slave, self._slave = self._slave, -1
        if slave >= 0:
            os.close(slave)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<PtyLink {self.path} {'closed' if self.closed else 'open'}>"


class SerialPort:
    """A byte port over a real serial port (pyserial), for a simulator on a cable."""

    def __init__(self, path: str, **settings: object) -> None:
        import serial  # imported here: a pty-only run does not need it

        self._serial = serial.Serial(path, timeout=READ_SLICE_S, **settings)

    @property
    def closed(self) -> bool:
        return not self._serial.is_open

    def read(self, timeout: float) -> bytes:
        if self._serial.timeout != timeout:
            self._serial.timeout = timeout      # reconfigures the port: only when it changes
        data = self._serial.read(1)
        if data and self._serial.in_waiting:
            data += self._serial.read(self._serial.in_waiting)
        return data

    def write(self, data: bytes) -> None:
        self._serial.write(data)

    def close(self) -> None:
        self._serial.close()


#: A simulator's serve loop: answer on ``port`` until ``stop`` is set (or the port is closed).
ServeLoop = Callable[[BytePort, threading.Event], None]


class ServeThread:
    """Runs ``serve(port, stop)`` in a thread; ``stop()`` sets the flag and joins."""

    def __init__(self, serve: ServeLoop, port: BytePort, *, name: str = "sim-serve") -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(serve, port), name=name,
                                        daemon=True)
        self.error: BaseException | None = None

    def _run(self, serve: ServeLoop, port: BytePort) -> None:
        try:
            serve(port, self._stop)
        except BaseException as exc:      # kept for the test that started it
            self.error = exc
            log.exception("%s: the serve loop failed", self._thread.name)

    def start(self) -> Self:
        self._thread.start()
        return self

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the loop; ``RuntimeError`` if it does not end within ``timeout``."""
        self._stop.set()
        if self._thread.ident is None:
            return
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise RuntimeError(f"{self._thread.name} did not stop within {timeout} s")


def serve_replies(port: BytePort, stop: threading.Event, feed: Callable[[bytes], list[bytes]], *,
                  unplug: Callable[[], bool], on_unplug: Callable[[], None], who: str,
                  logger: logging.Logger) -> None:
    """The serve loop of a simulator that only answers: each chunk the host sends goes to
    ``feed``, and the chunks it returns are written back.

    Runs until ``stop`` is set, the port fails, or ``unplug()`` says the cable was pulled: then the
    port is closed and ``on_unplug()`` called. ``who`` names the simulator in ``logger``'s lines.
    """
    while not stop.is_set():
        if unplug():
            on_unplug()               # first: whoever sees the port fail also sees the cable out
            port.close()
            logger.info("%s: unplugged", who)
            return
        try:
            data = port.read(READ_SLICE_S)
            if data:
                for chunk in feed(data):
                    port.write(chunk)
        except OSError as exc:
            logger.warning("%s: port failed, stopping: %s", who, exc)
            return


class Serves(Protocol):
    def serve(self, port: BytePort, stop: threading.Event) -> None:
        ...


@contextlib.contextmanager
def run_on_pty(simulator: Serves, *, name: str = "sim-serve") -> Iterator[PtyLink]:
    """A pty with ``simulator`` serving its master side in a thread; yields the link (``.path``).

    On exit the serve thread is stopped and joined first, then both pty ends are closed; a serve
    loop that died of an exception is raised then (as the cause of a ``RuntimeError``).
    """
    link = PtyLink()
    try:
        runner = ServeThread(simulator.serve, link.port, name=name).start()
        try:
            yield link
        finally:
            runner.stop()
    finally:
        link.close()
    if runner.error is not None:
        raise RuntimeError(f"{name}: the simulator's serve loop failed") from runner.error
