"""The background PAR computations of the service menu: one job per configuration, its state for
``config show``, a failure reported (and forgotten, so asking again computes again)."""

from __future__ import annotations

import threading

from firmware.cabinet.par_jobs import ParJob, ParJobs


def test_one_job_per_key_done_or_failed_and_forgotten():
    jobs = ParJobs()
    gate = threading.Event()
    runs = []

    def work():
        runs.append(1)
        gate.wait(5)

    first = jobs.start("k", ParJob("holdem-war", {"tie_pays": 17}, 10_000), work)
    again = jobs.start("k", ParJob("holdem-war", {"tie_pays": 17}, 10_000), work)
    assert again is first and first.state == "running"
    gate.set()
    assert jobs.wait(5) and first.state == "done" and first.finished is not None and len(runs) == 1

    def broken():
        raise RuntimeError("no memory for the simulation")

    failed = jobs.start("bad", ParJob("split21-stud", {}, 10_000), broken)
    assert jobs.wait(5) and failed.state == "failed" and "RuntimeError: no memory" in failed.error
    assert {j.to_json()["state"] for j in jobs.all()} == {"done", "failed"}
    jobs.forget("bad")
    assert [j.game for j in jobs.all()] == ["holdem-war"]
