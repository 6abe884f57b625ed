"""What power-up needs from the history (each door's last state, the records of each kind, the
host's highest acknowledgement) is carried by the checkpoints and the records after them, and equals
what a walk of the whole history gives: on a ledger with many checkpoints, after a power cut between
a record and its checkpoint, and from a checkpoint written before it carried them."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from firmware.ledger import meters as M
from firmware.ledger.ledger import Ledger
from firmware.ledger.store import Copy, DualStore
from tests.ledger.test_checkpoint import play


class Cut(BaseException):
    """The power going at that instant: nothing after it runs."""


@pytest.fixture
def every_7(monkeypatch):
    monkeypatch.setattr(Ledger, "CHECKPOINT_EVERY", 7)


def history(ledger: Ledger, steps: int, seed: int) -> None:
    """Doors opened and closed, notes, rounds, settings, meters snapshots and host acks, mixed."""
    rng = random.Random(seed)
    acked = ledger.host_acked
    for _ in range(steps):
        what = rng.randrange(6)
        if what == 0:
            ledger.event(rng.choice(("door_open", "door_close")), door=rng.choice(M.DOORS))
        elif what == 1:
            ledger.bill_in(500)
        elif what == 2:
            play(ledger, 1, seed=rng.randrange(1000))
        elif what == 3:
            ledger.store_setting("touch.calibration", {"x": rng.randrange(10)})
        elif what == 4:
            ledger.meters_snapshot("test")
        else:
            acked += rng.randrange(4)
            ledger.host_ack(acked)


def whole_history(ledger: Ledger) -> tuple[dict[str, bool], dict[str, int], int]:
    """Doors, records of each kind and the highest host ack, from every record of the log."""
    doors: dict[str, bool] = {}
    kinds: Counter[str] = Counter()
    acked = 0
    for seq, kind, _ref in ledger.log_index():
        kinds[kind] += 1
        body = ledger.log_record(seq)["body"]
        if kind == "event" and body["event"] in ("door_open", "door_close"):
            doors[body["door"]] = body["event"] == "door_open"
        elif kind == "host_ack":
            acked = max(acked, body["upto"])
    return doors, dict(kinds), acked


def power_up_state(ledger: Ledger) -> tuple[dict[str, bool], dict[str, int], int]:
    return ledger.door_states(), ledger.kind_counts, ledger.host_acked


def test_power_up_state_from_checkpoints_equals_the_whole_history(tmp_path, every_7):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(100_000)
        history(ledger, 300, seed=1)
        live = power_up_state(ledger)
    with Ledger.open(tmp_path) as booted:
        checkpoint = booted._store.latest_checkpoint()
        assert checkpoint is not None and booted.rows - checkpoint.seq < 7 + 2
        assert json.loads(checkpoint.state)["doors"]           # carried by the checkpoint itself
        assert power_up_state(booted) == whole_history(booted) == live
        assert any(booted.door_states().values()) and not all(booted.door_states().values())


@pytest.mark.parametrize("where", ["before the checkpoint", "between the two copies' checkpoints"])
def test_a_power_cut_between_a_record_and_its_checkpoint(tmp_path, every_7, monkeypatch, where):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(100_000)
        history(ledger, 100, seed=2)
        while ledger.rows - ledger._checkpoint_seq < Ledger.CHECKPOINT_EVERY - 1:
            ledger.event("door_close", door="cash_box")

        def cut(self, *args):
            raise Cut
        if where == "before the checkpoint":
            monkeypatch.setattr(DualStore, "write_checkpoint", cut)
        else:
            real = Copy.write_checkpoint
            monkeypatch.setattr(Copy, "write_checkpoint",
                                lambda self, row: cut(self) if self.name == "ledger-mirror.db" else real(self, row))
        with pytest.raises(Cut):
            ledger.event("door_open", door="cash_box")               # committed; its checkpoint is not
    monkeypatch.undo()
    with Ledger.open(tmp_path) as booted:
        assert booted.door_states()["cash_box"] is True
        assert power_up_state(booted) == whole_history(booted)
        history(booted, 40, seed=3)
    with Ledger.open(tmp_path) as again:
        assert power_up_state(again) == whole_history(again)


def test_a_checkpoint_from_before_it_carried_the_doors_is_verified_whole_once(tmp_path, every_7):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(100_000)
        history(ledger, 60, seed=4)
        ledger.event("door_open", door="logic")
        state = json.loads(ledger._state())
        old = json.dumps({k: state[k] for k in ("meters", "meter_seq", "open_round")},
                         separators=(",", ":"), sort_keys=True)
        ledger._store.write_checkpoint(ledger.rows, ledger._store.last_mac, old)
    with Ledger.open(tmp_path, read_only=True, full=True) as whole:
        assert whole.repairs == []                                    # the older checkpoint agrees
    with Ledger.open(tmp_path) as booted:
        assert power_up_state(booted) == whole_history(booted)
        assert booted.door_states()["logic"] is True
        assert set(json.loads(booted._store.latest_checkpoint().state)) == Ledger._STATE_KEYS
