"""``egm run`` takes SIGTERM as a power-down from the moment its control socket exists: a script
that waits for ``control.sock`` and then stops the terminal must get a clean power-down, not a kill."""

from __future__ import annotations

import signal

from firmware.cabinet.control import ControlServer
from firmware.cli import main


def test_the_signal_handlers_are_in_place_before_the_control_socket_opens(tmp_path, monkeypatch):
    seen = []
    start = ControlServer.start

    def recording_start(self: ControlServer) -> ControlServer:
        seen.append(signal.getsignal(signal.SIGTERM))
        return start(self)

    monkeypatch.setattr(ControlServer, "start", recording_start)
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        assert main(["run", "--sim", "--headless", "--autoplay", "1", "--state-dir", str(tmp_path)]) == 0
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    assert seen and seen[0] not in (signal.SIG_DFL, before[signal.SIGTERM])
