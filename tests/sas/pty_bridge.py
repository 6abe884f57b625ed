"""A SAS machine behind a pseudo-terminal, for host software that opens a serial port by path.

A thread reads what the host writes to the pty's slave side (from the master), feeds it to
:meth:`SasMachine.receive` and writes the reply back. Every chunk both ways is kept in
:attr:`PtyBridge.wire`, so a test can say exactly what the host sent. Only for tests: the
terminal's own SAS port driver lives in the product.
"""

from __future__ import annotations

import os
import select
import threading
import tty
from types import TracebackType

from firmware.sas.responder import SasMachine

#: How long the thread waits for the host between checks of whether to stop (seconds).
_TICK = 0.02


class PtyBridge:
    """``with PtyBridge(machine) as bridge:`` the host opens ``bridge.path``."""

    def __init__(self, machine: SasMachine) -> None:
        self.machine = machine
        self._master, self._slave = os.openpty()
        # Raw, so the line discipline neither echoes nor translates a byte before the host
        # configures the port. The speed stays at the pty's default: a host that opens it with
        # parity must change something else too, or the kernel refuses (sim_hardware/pty_link.py).
        tty.setraw(self._slave)
        self.path = os.ttyname(self._slave)
        #: ("host", bytes) for what the host wrote, ("machine", bytes) for the replies, in order.
        self.wire: list[tuple[str, bytes]] = []
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="sas-pty-bridge", daemon=True)

    def __enter__(self) -> PtyBridge:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        os.close(self._master)
        os.close(self._slave)
        if self._error is not None and kind is None:
            raise AssertionError("the SAS machine failed behind the pty") from self._error

    def sent_by_host(self) -> list[bytes]:
        return [data for who, data in self.wire if who == "host"]

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([self._master], [], [], _TICK)
                if not ready:
                    continue
                data = os.read(self._master, 1024)
                self.wire.append(("host", data))
                reply = self.machine.receive(data)
                if reply:
                    os.write(self._master, reply)
                    self.wire.append(("machine", reply))
        except BaseException as error:      # reported by __exit__ in the test's thread
            self._error = error
