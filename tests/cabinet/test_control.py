"""The control socket answers an op only once the terminal has published a snapshot showing it, so
that ``simctl cashout`` then ``simctl wait IDLE`` waits for the ticket instead of returning the
snapshot taken before the cash-out."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

from firmware.cabinet.control import ControlServer, request, socket_path


class SlowLoop:
    """A terminal whose loop publishes its snapshot a while after a command has returned (a step
    busy with device events, a round's records), as the real loop can."""

    def __init__(self) -> None:
        self.state = "IDLE"
        self.snapshot: dict[str, Any] = {"state": "IDLE"}
        self.published = 0

    def submit(self, op: str, **args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self.state = "CASHOUT"
        future.set_result({"state": self.state})          # the command's own answer
        threading.Timer(0.3, self._publish).start()          # the end of the loop's step
        return future

    def _publish(self) -> None:
        self.snapshot = {"state": self.state}
        self.published += 1


def test_a_status_asked_after_an_ops_answer_shows_what_the_op_did(tmp_path):
    loop = SlowLoop()
    server = ControlServer(loop, socket_path(tmp_path)).start()
    try:
        assert request(tmp_path, "cashout") == {"state": "CASHOUT"}
        assert request(tmp_path, "status") == {"state": "CASHOUT"}
    finally:
        server.close()


def test_an_op_is_answered_even_when_the_loop_publishes_nothing_more(tmp_path, monkeypatch):
    monkeypatch.setattr("firmware.cabinet.control.PUBLISH_WAIT", 0.2)
    loop = SlowLoop()
    loop._publish = lambda: None                              # type: ignore[method-assign]
    server = ControlServer(loop, socket_path(tmp_path)).start()
    try:
        assert request(tmp_path, "cashout", timeout=10) == {"state": "CASHOUT"}
    finally:
        server.close()


def test_a_state_dir_too_deep_for_a_unix_socket_address_is_still_served(tmp_path):
    """A Unix socket's address holds about 107 bytes; a terminal whose state dir is deeper (a lab's
    report folder) is still reached by ``egm simctl`` and the suite."""
    from firmware.cabinet.control import ControlServer, request, socket_path

    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    assert len(str(socket_path(deep))) > 120

    class Idle:
        snapshot = {"state": "IDLE"}

    server = ControlServer(Idle(), socket_path(deep)).start()
    try:
        assert socket_path(deep).exists()
        assert request(deep, "status") == {"state": "IDLE"}
    finally:
        server.close()
    assert not socket_path(deep).exists()
