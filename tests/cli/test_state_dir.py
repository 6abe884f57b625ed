"""A ``--state-dir`` that is a file, cannot be read, or (for a reading command) does not exist is one
clear line on stderr and exit 2, before the command does anything, and nothing is made or changed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from firmware.cli import main

#: Commands that only read the state directory: it must exist.
READING = [["meters"], ["recall"], ["events"], ["ledger", "verify"], ["simctl", "status"],
           ["host", "floor"], ["host", "events"]]
#: Commands that write into an existing state directory.
WRITING = [["ledger", "verify", "--repair"], ["host", "disable", "EGM-0001"],
           ["host", "offer-package", "EGM-0001", "{package}"]]
#: Commands that make the state directory when it is missing.
MAKING = [["run", "--headless", "--autoplay", "0"],
          ["ledger", "clear", "--role", "technician", "--reason", "test", "--yes"],
          ["certs", "dev", "--terminal", "EGM-0001"], ["host", "serve", "--listen", "0"]]


def ids(commands: list[list[str]]) -> list[str]:
    return [" ".join(c[:2]) + (" --repair" if "--repair" in c else "") for c in commands]


def argv(command: list[str], state_dir: Path, package: Path) -> list[str]:
    return [w.format(package=package) for w in command] + ["--state-dir", str(state_dir)]


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a directory)."""
    return {str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes()) for p in sorted(root.rglob("*"))}


@pytest.fixture
def package(tmp_path: Path) -> Path:
    path = tmp_path / "offer.egmpkg"
    path.write_bytes(b"{}")
    return path


def refused(capsys, args: list[str]) -> str:
    """Run ``egm ARGS`` in this process; it must refuse with one line on stderr and print nothing."""
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("command", READING + WRITING + MAKING, ids=ids(READING + WRITING + MAKING))
def test_a_file_as_state_dir_is_refused_before_anything_runs(tmp_path, capsys, package, command):
    state = tmp_path / "state"
    state.write_text("not a directory\n")
    before = snapshot(tmp_path)
    line = refused(capsys, argv(command, state, package))     # egm run: not even the self-test
    assert f"--state-dir {state} is not a directory" in line
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", READING + WRITING, ids=ids(READING + WRITING))
def test_a_missing_state_dir_is_nothing_found_and_is_not_made(tmp_path, capsys, package, command):
    state = tmp_path / "nowhere"
    line = refused(capsys, argv(command, state, package))
    assert f"nothing found at {state}" in line
    assert not state.exists()


@pytest.mark.parametrize("command", MAKING, ids=ids(MAKING))
def test_a_state_dir_that_cannot_be_made_is_refused(tmp_path, capsys, package, command):
    blocker = tmp_path / "file"
    blocker.write_text("")
    line = refused(capsys, argv(command, blocker / "state", package))
    assert f"cannot be made: {blocker} is not a directory" in line
    assert blocker.read_text() == ""


def _without_root_privilege() -> list[str]:
    """A prefix that runs a command without the privilege to ignore file permissions: none for a
    normal user; as root, util-linux ``setpriv`` dropping CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: root reads every directory, so none is unreadable")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}"]


@pytest.mark.parametrize("command", READING + WRITING + MAKING, ids=ids(READING + WRITING + MAKING))
def test_an_unreadable_state_dir_is_one_clear_line(tmp_path, package, command):
    state = tmp_path / "locked"
    state.mkdir()
    state.chmod(0)
    try:
        proc = subprocess.run([*_without_root_privilege(), sys.executable, "-m", "firmware.cli",
                               *argv(command, state, package)], capture_output=True, text=True, timeout=120)
        state.chmod(0o700)
        assert list(state.iterdir()) == []
    finally:
        state.chmod(0o700)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"--state-dir {state} cannot be read (permission denied)" in proc.stderr
