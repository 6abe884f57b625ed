"""The live table's fault lab (issue 24's acceptance): ``egm table demo``'s machinery (the controller
in this process, each player station an ``egm run --sim --headless --autoplay`` process) with

* a TCP fault proxy between the stations and the controller that cuts connections at random
  (:class:`FaultProxy`: both sides see the connection end, as a pulled cable or a switch reboot);
* station processes SIGKILLed at random moments and started again on the same state directory;
* one power cut of the controller mid-round: the journal entry carrying the round's first cards is
  committed, then critical memory "fails" (the controller stops as ``egm table serve`` does), and a
  new controller opens the same critical memory on the same port (:class:`FaultyDemo`).

Afterwards every party's critical memory is read read-only and the money is reconciled round by
round (:func:`reconcile`)."""

from __future__ import annotations

import contextlib
import logging
import random
import re
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware.commands._table_demo import ENDED, TableDemo
from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.ledger.meters import TABLE_HELD
from firmware.table import controller as controller_module

log = logging.getLogger("tests.table.faults")

#: A run fails when no round settles for this long (a station that stops betting, a lost result).
STALL_S = 60.0


class FaultProxy:
    """Forwards every accepted connection to ``target()`` (HOST:PORT, read at each connection, so a
    restarted controller on the same port is reached again); :meth:`drop` cuts one at random."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.drops = 0
        self.thread = threading.Thread(target=self._accept, name="fault-proxy", daemon=True)

    def start(self) -> FaultProxy:
        self.thread.start()
        return self

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                client, _ = self.sock.accept()
            except OSError:                 # a time-out, a connection aborted before it was taken
                if self.stopped.is_set():
                    return
                continue
            try:
                self._forward(client)
            except Exception:               # noqa: BLE001 - the proxy must outlive any one connection
                log.exception("fault proxy: a connection could not be forwarded")
                client.close()

    def _forward(self, client: socket.socket) -> None:
        host, port = self.target().rsplit(":", 1)
        try:
            upstream = socket.create_connection((host, int(port)), timeout=5)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        client.settimeout(None)
        with self.lock:
            self.pairs.append((client, upstream))
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        self._cut(src, dst)

    def _cut(self, a: socket.socket, b: socket.socket) -> None:
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
        with self.lock:
            self.pairs = [p for p in self.pairs if a not in p]

    def drop(self, rng: random.Random) -> bool:
        """Cut one live connection (chosen with ``rng``); False when none is up."""
        with self.lock:
            if not self.pairs:
                return False
            pair = rng.choice(self.pairs)
        self._cut(*pair)
        self.drops += 1
        return True

    def stop(self) -> None:
        self.stopped.set()
        self.sock.close()
        with self.lock:
            pairs = list(self.pairs)
        for pair in pairs:
            self._cut(*pair)


class PowerCut(CriticalMemoryError):
    """The controller's critical memory stops answering (the test's power cut)."""


class MidRoundCut:
    """Armed, the next journal entry that carries cards is committed and then the controller's
    critical memory fails (``PowerCut``): the round is open in the journal with its first cards."""

    def __init__(self) -> None:
        self.armed = False
        self.fired = threading.Event()
        self.round_id: str | None = None

    def install(self, monkeypatch: Any) -> None:
        original = controller_module._ShowingJournal.transition
        cut = self

        def transition(journal: Any, entry: Any) -> None:
            if cut.armed and entry.cards:
                cut.armed = False
                journal._controller.ledger.transition(entry)        # committed, then the lights go out
                cut.round_id = journal._controller.round.round_id
                cut.fired.set()
                raise PowerCut("power cut (the acceptance test)")
            original(journal, entry)

        monkeypatch.setattr(controller_module._ShowingJournal, "transition", transition)


@dataclass
class Faults:
    """What a run did to the table."""

    station_kills: int = 0
    drain_restarts: list[str] = field(default_factory=list)
    link_drops: int = 0
    controller_cuts: list[str] = field(default_factory=list)
    seconds: float = 0.0
    rounds: int = 0


class FaultyDemo(TableDemo):
    """:class:`TableDemo` whose stations reach the controller through a :class:`FaultProxy`;
    ``seats``: only the stations at these seats play (station-k sits at seat k). The first betting
    window opens once every station is seated, so the first round has them all."""

    def __init__(self, root: Path, *, seats: list[int] | None = None, **kwargs: Any) -> None:
        super().__init__(root, **kwargs)
        self.proxy = FaultProxy(lambda: self.address)
        self.seat_of = {name: k for k, name in enumerate(self.names, 1)}
        #: Stations found still offline 20 s into the drain and power-cycled (a link that did not
        #: come back by itself: the report names them).
        self.drain_restarts: list[str] = []
        if seats is not None:
            self.names = [f"station-{k}" for k in seats]

    def station_config(self, name: str) -> Path:
        path = super().station_config(name)
        text = path.read_text(encoding="utf-8")
        text = text.replace(f'controller = "{self.address}"', f'controller = "{self.proxy.address}"')
        text = re.sub(r"(?m)^seat = \d+$", f"seat = {self.seat_of[name]}", text)
        path.write_text(text, encoding="utf-8")
        return path

    def _hold_until_seated(self, deadline: float) -> None:
        c = self.controller
        assert c is not None
        while time.monotonic() < deadline:                  # pause as soon as no window is open
            with c.lock:
                if c.phase in ENDED:
                    c.pause()
                    break
            time.sleep(0.01)
        for name in self.names:
            self.start_station(name)
        while time.monotonic() < deadline:
            with c.lock:
                if all(c.seating.is_online(n) for n in self.names):
                    c.unpause()
                    return
            time.sleep(0.05)
        raise AssertionError("the stations did not all join")

    def played(self) -> tuple[int, bool]:
        c = self.controller
        assert c is not None
        with c.lock:
            return c.meters()["games_played"], c.phase in ENDED

    def run_with_faults(self, rounds: int, *, seed: int, cut: MidRoundCut | None = None, kill_p: float = 0.1,
                        drop_p: float = 0.1, timeout_s: float = 1800.0) -> Faults:
        """``rounds`` rounds with, after each settled round, a station SIGKILLed (and restarted) with
        probability ``kill_p`` at a random moment of the next 0.4 s, a connection cut with probability
        ``drop_p``, and the controller's power cut (``cut``) armed half way. Then the table pauses,
        every result is acknowledged and the stations stop."""
        rng = random.Random(seed)
        faults = Faults()
        started = time.monotonic()
        deadline = started + timeout_s
        self.start_controller()
        self.proxy.start()
        try:
            self._hold_until_seated(deadline)
            last, progressed = 0, time.monotonic()
            while time.monotonic() < deadline:
                if cut is not None and cut.fired.is_set() and cut.round_id not in faults.controller_cuts:
                    faults.controller_cuts.append(str(cut.round_id))
                    self.restart_controller()
                played, ended = self.played()
                if played >= rounds and ended:
                    break
                if played > last:
                    last, progressed = played, time.monotonic()
                    if cut is not None and not faults.controller_cuts and not cut.armed and played >= rounds // 2:
                        cut.armed = True
                    if rng.random() < kill_p:
                        time.sleep(rng.uniform(0.0, 0.4))
                        self.restart_station(rng.choice(self.names))
                        faults.station_kills += 1
                    if rng.random() < drop_p:
                        self.proxy.drop(rng)
                elif time.monotonic() - progressed > STALL_S:
                    raise AssertionError(f"no round settled for {STALL_S:.0f} s after round {last}: the table is stuck")
                time.sleep(0.01)
            else:
                raise AssertionError(f"{rounds} rounds were not settled in {timeout_s} s ({last} were)")
            self._drain(deadline)
            faults.drain_restarts = list(self.drain_restarts)
            faults.link_drops = self.proxy.drops
            faults.rounds = self.played()[0]
        finally:
            self.stop_stations()
            self.proxy.stop()
            self.stop_controller()
        faults.seconds = round(time.monotonic() - started, 1)
        return faults

    def _drain(self, deadline: float) -> None:
        """The table pauses; every station (started again if it died) rejoins and has no open bet
        left (read in its critical memory). The controller may still hold a result whose
        acknowledgement was lost with a connection or a power cut after the station committed it:
        the station has it, nothing asks for it again."""
        c = self.controller
        assert c is not None
        c.pause()
        for name in self.names:
            if self.procs[name].poll() is not None:
                self.restart_station(name)
        deadline = min(deadline, time.monotonic() + 3 * STALL_S)
        restart_at = time.monotonic() + STALL_S / 3
        while time.monotonic() < deadline:
            with c.lock:
                offline = [n for n in self.names if not c.seating.is_online(n)]
            still_open = [] if offline else [n for n in self.names if self._open_bets(n)]
            if not offline and not still_open:
                return
            if offline and time.monotonic() > restart_at:        # see the module: a station not back
                log.warning("fault run: %s still offline at the end: power-cycled", offline)
                self.drain_restarts.extend(offline)
                for name in offline:
                    self.restart_station(name)
                restart_at = time.monotonic() + STALL_S / 3
            time.sleep(0.2)
        raise AssertionError(f"not settled: stations offline {offline}, with open bets {still_open}")

    def _open_bets(self, name: str) -> int:
        """The station's open bets, read-only while it runs (a read that meets a write: try again)."""
        try:
            with Ledger.open(self.station_dir(name), read_only=True) as ledger:
                return len(ledger.table_bets)
        except Exception:                   # noqa: BLE001 - read again on the next pass
            return 1

    def stop_stations(self) -> None:
        for name in list(self.procs):
            self.kill_station(name, signal.SIGTERM)


# --- the reconciliation ---------------------------------------------------------------------------
def _records(ledger: Ledger, prefix: str) -> list[dict[str, Any]]:
    return [ledger.log_record(seq) for seq, kind, _ in ledger.log_index() if kind.startswith(prefix)]


def _money(stakes: dict[str, int], results: dict[str, dict[str, Any]]) -> tuple[int, int]:
    """(coin in, coin out) of one seat's settled wagers: what was staked, what came back."""
    return sum(stakes.values()), sum(stakes[n] + results[n]["net"] for n in stakes)


@dataclass
class Reconciled:
    rounds: int = 0
    bets: int = 0
    accepted: int = 0
    refused: int = 0
    misdeals: int = 0
    pool_contests: int = 0
    commission: int = 0
    problems: list[str] = field(default_factory=list)


def reconcile(table_dir: Path, station_dirs: dict[str, Path]) -> Reconciled:
    """Every identity of the acceptance, from each party's critical memory (read-only); the
    problems found are listed in ``problems`` (empty: they all hold)."""
    out = Reconciled()
    bad = out.problems.append
    with Ledger.open(table_dir, read_only=True) as ledger:
        denom = ledger.denom_cents
        table_meters = dict(ledger.meters)
        rounds: dict[str, dict[str, Any]] = {}
        for rec in _records(ledger, "round.complete"):
            rounds[rec["ref"]] = rec["body"]["entry"]["data"]
            record = ledger.round_record(rec["ref"])
            pool = record.get("war_pool")
            if pool and pool.get("winner") is not None:
                out.pool_contests += 1
                out.commission += pool.get("commission", 0)
        answers: dict[str, dict[str, Any]] = {}
        for rec in _records(ledger, "tablectl.answer"):
            body = rec["body"]
            if body["bet_id"] in answers:
                bad(f"the controller answered {body['bet_id']} twice")
            answers[body["bet_id"]] = body
    out.rounds = len(rounds)
    out.misdeals = sum(1 for d in rounds.values() if d.get("misdeal"))
    # the controller's meters are its rounds
    c_in = sum(_money(d["stakes"][s], d["results"][s])[0] for d in rounds.values() for s in d["stakes"])
    c_out = sum(_money(d["stakes"][s], d["results"][s])[1] for d in rounds.values() for s in d["stakes"])
    if (c_in * denom, c_out * denom) != (table_meters.get("coin_in", 0), table_meters.get("coin_out", 0)):
        bad(f"the controller's meters {table_meters} are not its rounds' coin in {c_in} / out {c_out}")
    if table_meters.get("pool_commission", 0) != out.commission * denom:
        bad(f"pool_commission {table_meters.get('pool_commission')} != the rounds' commission {out.commission}")
    seated: dict[tuple[str, str], str] = {}                  # (round, seat) -> bet_id of the accepted answer
    for a in answers.values():
        if a["accepted"]:
            seated[(a["round_id"], str(a["seat"]))] = a["bet_id"]
    per_round: dict[str, list[int]] = {rid: [0, 0] for rid in rounds}
    station_bets: set[str] = set()
    s_in = s_out = 0
    for name, path in station_dirs.items():
        with Ledger.open(path, read_only=True) as ledger:
            m = dict(ledger.meters)
            credits = ledger.credits_cents
            kinds: dict[str, list[tuple[str, dict[str, Any]]]] = {}
            for rec in _records(ledger, "table."):
                kinds.setdefault(rec["body"]["bet_id"], []).append((rec["kind"], rec["body"]))
        m["credits"] = credits
        if accounting_difference(m) != 0 or m.get(TABLE_HELD, 0) != 0:
            bad(f"{name}: credits not conserved (difference {accounting_difference(m)}, held {m.get(TABLE_HELD)})")
        credits_in = sum(m.get(k, 0) for k in ("bills_in", "ticket_in", "transfers_in")) - sum(
            m.get(k, 0) for k in ("ticket_out", "handpay_cancelled_credits", "transfers_out"))   # net of cash-outs
        if credits_in - credits != m.get("coin_in", 0) - m.get("coin_out", 0):
            bad(f"{name}: credits in {credits_in} - credits now {credits} != coin in - coin out")
        s_in += m.get("coin_in", 0)
        s_out += m.get("coin_out", 0)
        for bet_id, recs in kinds.items():
            out.bets += 1
            station_bets.add(bet_id)
            seq = [k for k, _ in recs]
            answer = answers.get(bet_id)
            if seq == ["table.bet", "table.refused"]:
                out.refused += 1
                if answer is not None and answer["accepted"]:
                    bad(f"{name}: {bet_id} refused here but accepted by the controller")
                continue
            if seq != ["table.bet", "table.accepted", "table.result"]:
                bad(f"{name}: {bet_id} ends as {seq}")
                continue
            out.accepted += 1
            result = recs[2][1]
            rid, seat = result["round_id"], str(result["seat"])
            if answer is None or not answer["accepted"] or seated.get((rid, seat)) != bet_id:
                bad(f"{name}: {bet_id} accepted here is not seat {seat} of {rid} at the controller")
                continue
            data = rounds.get(rid)
            if data is None or data["stakes"].get(seat) != result["stakes"] or data["results"][seat] != result["results"]:
                bad(f"{name}: {bet_id}'s result is not the controller's record of {rid} seat {seat}")
                continue
            money = _money(result["stakes"], result["results"])
            per_round[rid][0] += money[0]
            per_round[rid][1] += money[1]
    for rid, data in rounds.items():
        want = [sum(_money(data["stakes"][s], data["results"][s])[i] for s in data["stakes"]) for i in (0, 1)]
        if per_round[rid] != want:
            bad(f"round {rid}: the stations' coin in/out {per_round[rid]} != the controller's {want}")
    for bet_id in seated.values():
        if bet_id not in station_bets:
            bad(f"the controller seated {bet_id}, which no station placed")
    if (s_in, s_out) != (table_meters.get("coin_in", 0), table_meters.get("coin_out", 0)):
        bad(f"the stations' coin in/out {s_in}/{s_out} != the controller's meters {table_meters}")
    return out


class MisreadMidRound:
    """The simulated dealer of a card-reading shoe (``card_wanted``): draws each card the controller
    asks for; in the first round where ``seats`` seats have bet, the shoe misreads card ``at_card``."""

    def __init__(self, shoe: Any, demo: TableDemo, *, seats: int = 7, at_card: int = 5) -> None:
        self.shoe, self.demo, self.seats, self.at_card = shoe, demo, seats, at_card
        self.round_id: str | None = None
        self._current: str | None = None
        self._drawn = 0

    def __call__(self) -> None:
        c = self.demo.controller
        assert c is not None
        r = c.round
        if r.round_id != self._current:
            self._current, self._drawn = r.round_id, 0
        self._drawn += 1
        if self.round_id is None and len(r.bets) == self.seats and self._drawn == self.at_card:
            self.round_id = r.round_id
            self.shoe.misread_next()
        self.shoe.draw()
