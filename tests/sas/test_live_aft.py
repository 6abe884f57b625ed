"""AFT exactly once against the running terminal (``egm run --sim --headless --sas pty``), over its
pty, with the terminal SIGKILLed at every step of a transfer and started again on the same state
dir: before the 0x72 reaches it, right after the host wrote it (the terminal may or may not have
committed), and after the host read the reply; then a seeded campaign of kills at random moments.
After each kill the host does what a SAS host does after a lost reply (``aft_transfer``): it
interrogates the restarted machine and, if the machine has no record of the transfer, sends the
same request again with the same transaction ID."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from drivers.sas.codec import LongPoll
from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.host import SasHost
from drivers.sas.host_aft import aft_transfer, ask
from drivers.sas.messages import AftInterrogate, AftShortReply, AftTransferReply
from firmware.commands.sas_host import _wire
from firmware.ledger.ledger import Ledger
from tests.sas.live import Running, start
from tests.sas.test_live import exceptions_until_quiet

ADDRESS = 1
ASSET = 1234
SAS = f"aft = true\nasset_number = {ASSET}\n"
#: How long the host waits for a reply (seconds): a loaded machine, no timing asserted.
TIMEOUT = 3.0
#: How long it waits for one when a kill is due within 50 ms (nothing can come after the kill).
TIMEOUT_WHEN_KILLED = 0.5
COMPLETED = (0x00, 0x01)
KINDS = ("transfer_in", "transfer_out")


class Host:
    """The test's SAS host on the terminal's pty. Each of ``kills_due`` arms a SIGKILL on the next
    0x72 (the transfer request, then the interrogation or the request sent again while the host
    recovers): ``"before"`` it is written, ``"written"`` right after it is, ``"read"`` once its
    reply is read, or a number: that many seconds after it is written (a timer thread). The host
    then starts the terminal again on the same state dir and goes on over its new pty, the poll's
    reply lost unless it was read before the kill."""

    def __init__(self, terminal: Running) -> None:
        self.terminal = terminal
        self.port = SasHost(terminal.sas, ADDRESS, timeout=TIMEOUT)
        self.kills_due: list[str | float] = []
        self.kills = 0
        self.requests = 0                     #: transfer requests sent or killed before (a resend is one more)
        self.replies_before_kill = 0          #: killed requests whose reply was read before the kill

    def restart(self) -> None:
        self.port.close()
        self.terminal = self.terminal.restarted()
        self.port = SasHost(self.terminal.sas, ADDRESS, timeout=TIMEOUT)

    def exchange(self, wire: bytes) -> bytes:
        """``aft_transfer``'s exchange: the poll ``wire`` out, the reply's bytes back (b"": none)."""
        if wire[1] != 0x72:
            return _wire(self.port, wire)
        self.requests += wire[3] in (0x00, 0x01)               # a transfer, not an interrogation
        if not self.kills_due:
            return _wire(self.port, wire)
        kill_at = self.kills_due.pop(0)
        self.kills += 1
        if kill_at == "before":
            reply = b""
        elif kill_at == "written":
            self.port.port.write(wire, wakeup=True)
            self.terminal.proc.kill()
            reply = b""
        elif kill_at == "read":
            reply = _wire(self.port, wire)
        else:
            assert isinstance(kill_at, float)
            reply = self._killed_after(kill_at, wire)
        self.replies_before_kill += bool(reply)
        self.restart()
        return reply

    def _killed_after(self, seconds: float, wire: bytes) -> bytes:
        """Send ``wire`` with a SIGKILL ``seconds`` after it is written; what came back before."""
        timer = threading.Timer(seconds, self.terminal.proc.kill)
        port = self.port.port
        write = port.write

        def written(data: bytes, **kwargs: Any) -> None:
            write(data, **kwargs)
            timer.start()

        port.write = written                                    # type: ignore[method-assign]
        self.port.timeout = TIMEOUT_WHEN_KILLED
        try:
            return _wire(self.port, wire)
        finally:
            del port.write                                      # the method again
            if timer.ident is not None:
                timer.join()

    def transfer(self, cents: int, transaction_id: str, *, out: bool = False) -> AftTransferReply | AftShortReply:
        return aft_transfer(self.exchange, ADDRESS, cents=cents, transaction_id=transaction_id,
                            asset_number=ASSET, to_machine=not out)

    def interrogate(self, index: int = 0) -> object:
        """0x72 interrogation (code FF) of transaction ``index`` (0: the current or newest)."""
        return ask(self.exchange, LongPoll(ADDRESS, 0x72, AftInterrogate(0xFF, index).encode()))


@contextmanager
def live_host(tmp_path: Path) -> Iterator[Host]:
    host = Host(start(tmp_path, sas=SAS))
    try:
        yield host
    finally:
        host.port.close()
        host.terminal.kill()


def egm_meters(state_dir: Path) -> dict[str, Any]:
    shown = subprocess.run([sys.executable, "-m", "firmware.cli", "meters", "--state-dir", str(state_dir), "--json"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)  # type: ignore[no-any-return]


def completed(reply: object, transaction_id: str, cents: int) -> bool:
    return (isinstance(reply, AftTransferReply) and reply.transaction_id == transaction_id
            and reply.transfer_status in COMPLETED and reply.cashable == cents)


@pytest.mark.parametrize("kill_at", ["before", "written", "read"])
@pytest.mark.parametrize("out", [False, True], ids=["to_machine", "from_machine"])
def test_a_sigkill_at_every_step_of_a_transfer_applies_it_once(tmp_path, kill_at, out):
    with live_host(tmp_path) as host:
        if out:
            assert completed(host.transfer(5000, "LOAD"), "LOAD", 5000)
        host.kills_due = [kill_at]
        reply = host.transfer(2000, "TX-1", out=out)
        assert host.kills == 1 and not host.kills_due
        assert completed(reply, "TX-1", 2000), reply
        # the restarted machine's interrogation reports the transfer, completed, with its amount
        status = host.interrogate()
        assert completed(status, "TX-1", 2000), status
        assert status == host.interrogate(0xFF)
        # the same request again (a host that lost the reply once more) is answered, not made again
        assert host.transfer(2000, "TX-1", out=out) == status
        assert host.terminal.control("status")["credits_cents"] == (3000 if out else 2000)
        seen = exceptions_until_quiet(host.port)
        # a priority exception: pending once however many transfers raised it since it was last taken
        assert seen.count(X.AFT_TRANSFER_COMPLETE) == 1, [hex(code) for code in seen]
        host.terminal.kill()
    shown = egm_meters(tmp_path / "state")
    assert shown["credits"] == (3000 if out else 2000)
    assert shown["meters"]["transfers_in"] == (5000 if out else 2000)
    assert shown["meters"].get("transfers_out", 0) == (2000 if out else 0)


def kill_campaign(tmp_path: Path, seed: int, iterations: int) -> None:
    """``iterations`` transfers in and out, each with a SIGKILL at a random moment 0-50 ms after
    its request is written (and, now and then, another one after the poll of the host's recovery
    that follows), the terminal started again and the host recovering; then the machine's own
    history and critical memory against what the host believes."""
    rng = random.Random(seed)
    believed: dict[str, int] = {}              #: transaction ID -> signed cents the host believes moved
    outcomes = {"replied": 0, "committed, reply lost": 0, "resent": 0}
    with live_host(tmp_path) as host:
        for n in range(iterations):
            requests, replies = host.requests, host.replies_before_kill
            credits = sum(believed.values())
            out = credits > 0 and rng.random() < 0.5
            cents = rng.randint(1, credits if out else 5000)
            transaction_id = f"R{seed}-{n}"
            # 0-50 ms, often under 5 (mid-commit); now and then a second kill while the host recovers
            host.kills_due = [rng.choice((0.005, 0.05)) * rng.random() for _ in range(1 + (rng.random() < 0.3))]
            reply = host.transfer(cents, transaction_id, out=out)
            host.kills_due.clear()                # a second kill not used (the first reply was read)
            assert completed(reply, transaction_id, cents), reply
            believed[transaction_id] = -cents if out else cents
            outcome = ("replied" if host.replies_before_kill > replies else
                       "resent" if host.requests - requests > 1 else "committed, reply lost")
            outcomes[outcome] += 1
            if rng.random() < 0.5:           # the host sends it once more (a reply lost again): answered, not made
                assert host.transfer(cents, transaction_id, out=out) == reply
        assert host.kills >= iterations
        print(f"seed {seed}: {host.kills} kills, {iterations} transfers: {outcomes}")     # where the kills fell (-s shows it)
        # what the machine reports completed: its history buffer, newest (FF) back
        reported: dict[str, int] = {}
        for back in range(iterations):
            entry = host.interrogate(0xFF - back)
            assert isinstance(entry, AftTransferReply) and entry.transfer_status in COMPLETED, entry
            assert entry.transaction_id not in reported
            reported[entry.transaction_id] = entry.cashable * (-1 if entry.transfer_type == 0x80 else 1)
        assert reported == believed
        assert host.terminal.control("status")["credits_cents"] == sum(reported.values())
        host.terminal.kill()
    with Ledger.open(tmp_path / "state", read_only=True) as ledger:
        for transaction_id, cents in believed.items():
            records = [r for r in ledger.records_for(transaction_id) if r["kind"] in KINDS]
            assert len(records) == 1, (transaction_id, records)
            assert records[0]["body"]["cents"] == abs(cents)
        assert ledger.credits_cents == sum(believed.values())
        assert ledger.meters.get("transfers_in", 0) == sum(c for c in believed.values() if c > 0)
        assert ledger.meters.get("transfers_out", 0) == -sum(c for c in believed.values() if c < 0)


@pytest.mark.slow
def test_transfers_with_a_sigkill_at_a_random_moment_each_are_applied_exactly_once(tmp_path):
    kill_campaign(tmp_path, seed=25, iterations=10)


@pytest.mark.soak
@pytest.mark.parametrize("seed", range(5))
def test_soak_transfers_with_a_sigkill_at_a_random_moment_each(tmp_path, seed):
    kill_campaign(tmp_path, seed=seed, iterations=40)
