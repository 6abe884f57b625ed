"""``egm host operator add|list|disable|enable``: the floor page's operators, from the command line;
bad input is one clear line and changes nothing; the password is stored only as an argon2id hash."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select

from firmware.cli import main
from host import store_operators
from host.store import HostStore
from host.store_schema import operators


def test_add_list_disable(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # in-process (one interpreter start per call would take seconds each); argon2id at its smallest cost
    monkeypatch.setattr(store_operators, "_hasher", PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))

    def run(*args: str, stdin: str = "") -> SimpleNamespace:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        try:
            code = main(["host", *args])
        except SystemExit as exc:                 # argparse refusing a value
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    state = ["--state-dir", str(tmp_path)]
    added = run("operator", "add", "maria", "--role", "floor-manager", "--password-stdin", "--json", *state,
                stdin="correct horse battery\n")
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["role"] == "floor-manager"
    assert run("operator", "add", "ann", "--role", "attendant", "--password-stdin", *state,
               stdin="attendant-pass-1\n").returncode == 0
    listed = json.loads(run("operator", "list", "--json", *state).stdout)
    assert [(o["name"], o["role"], o["disabled"]) for o in listed] == [("ann", "attendant", False),
                                                                        ("maria", "floor-manager", False)]
    with HostStore.open(str(tmp_path / "host.db")) as store:
        hashes = store.transaction(lambda c: c.execute(select(operators.c.password_hash)).scalars().all())
    assert all(h.startswith("$argon2id$") and "correct horse" not in h for h in hashes)
    assert run("operator", "disable", "ann", *state).returncode == 0
    assert "DISABLED" in run("operator", "list", *state).stdout
    cases = [
        (("operator", "add", "maria", "--role", "auditor", "--password-stdin"), "long enough password", "exists already"),
        (("operator", "add", "bob", "--role", "auditor", "--password-stdin"), "short\n", "10 to 1024 characters"),
        (("operator", "add", "<b>", "--role", "auditor", "--password-stdin"), "long enough password", "operator name"),
        (("operator", "add", "bob", "--role", "boss", "--password-stdin"), "long enough password", "invalid choice"),
        (("operator", "disable", "nobody"), "", "no operator nobody"),
        (("serve", "--listen", "1", "--web", "nowhere"), "", "expected HOST:PORT"),
    ]
    for args, stdin, message in cases:
        proc = run(*args, *state, stdin=stdin)
        assert proc.returncode != 0 and message in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
    assert len(json.loads(run("operator", "list", "--json", *state).stdout)) == 2      # nothing added
