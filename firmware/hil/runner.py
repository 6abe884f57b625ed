"""Run the lab suite: ``pytest.main`` in this process with the suite's plugin and own ini.

:func:`run` is ``egm hil run``: it checks the target (a bad target file is one clear error and
nothing runs), runs the suite (``firmware/hil/suite``, or ``suite=`` for another folder of tests)
with ``-p firmware.hil.plugin``, ``-c firmware/hil/pytest.ini`` (not the project's ini: its
``addopts`` would break an installed product), ``--rootdir`` the report folder and no cache, and
returns the :class:`~firmware.hil.record.RunRecord` read back from ``run.json``. The plugin rewrites
``run.json`` after every test, so ``resume=RUN_DIR`` runs only the tests it has no verdict for.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import IO

from firmware.hil.errors import HilError
from firmware.hil.operator import DEFAULT_PROMPT_TIMEOUT
from firmware.hil.record import RUN_FILE, RunRecord

SUITE_DIR = Path(__file__).resolve().parent / "suite"
INI = Path(__file__).resolve().parent / "pytest.ini"


def default_report_dir(base: Path | None = None) -> Path:
    """``hil-YYYYmmdd-HHMMSS`` in ``base`` (default: the current folder)."""
    return (base or Path.cwd()) / datetime.now().strftime("hil-%Y%m%d-%H%M%S")


def pytest_args(suite: Path, report_dir: Path, extra: Sequence[str] = ()) -> list[str]:
    """The arguments of a suite run or collection (the plugin, the suite's ini, no cache)."""
    return ["-c", str(INI), "--rootdir", str(report_dir), "--confcutdir", str(suite),
            "-p", "no:cacheprovider", "-p", "firmware.hil.plugin", "-p", "no:terminal",
            "--import-mode=importlib", "--capture=sys", "-W", "ignore::pytest.PytestAssertRewriteWarning",
            *extra, str(suite)]


def check_target(target_spec: str) -> None:
    """HilError if ``target_spec`` is neither ``sim`` nor a good cabinet target file."""
    if target_spec != "sim":
        from firmware.hil.target import load_target_file

        load_target_file(Path(target_spec))


def run(target_spec: str = "sim", only: Sequence[str] = (), report_dir: Path | None = None,
        resume: Path | None = None, operator_name: str = "", prompt_timeout: float = DEFAULT_PROMPT_TIMEOUT,
        progress: bool = True, *, suite: Path | None = None, answers: IO[str] | None = None,
        out: IO[str] | None = None) -> RunRecord:
    """Run the suite against ``target_spec`` (``sim`` or a cabinet target file); the run's record.

    ``resume``: a report folder of an interrupted run (its tests with a verdict are kept; the report
    goes there). ``answers``: the operator's input (default: stdin). ``out``: progress and prompts
    (default: stderr).
    """
    import pytest

    from firmware.hil.plugin import RunContext

    check_target(target_spec)
    if prompt_timeout <= 0:
        raise HilError("--prompt-timeout is a positive number of seconds")
    suite = Path(suite) if suite is not None else SUITE_DIR
    if not suite.is_dir():
        raise HilError(f"the suite {suite} is not a folder")
    if resume is not None:
        resume = Path(resume)
        previous = RunRecord.load(resume)
        if previous.target != target_spec:
            raise HilError(f"--resume {resume}: that run's target is {previous.target}, not {target_spec}")
        folder = resume
        only = list(only) or previous.only
    else:
        folder = Path(report_dir) if report_dir is not None else default_report_dir()
        if (folder / RUN_FILE).exists():
            raise HilError(f"{folder} already holds a run (use --resume {folder} to go on with it)")
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HilError(f"cannot make the report folder {folder}: {exc.strerror or exc}") from None
    folder = folder.resolve()
    extra = ["--hil-target", target_spec, "--hil-report", str(folder), "--hil-prompt-timeout", str(prompt_timeout)]
    if operator_name:
        extra += ["--hil-operator", operator_name]
    for word in only:
        extra += ["--hil-only", word]
    if resume is not None:
        extra.append("--hil-resume")
    ctx = RunContext(answers=answers if answers is not None else sys.stdin, out=out, progress=progress)
    code = pytest.main(pytest_args(suite, folder, extra), plugins=[ctx])
    if ctx.problems:
        if created:
            _remove_tree(folder)
        raise HilError("; ".join(ctx.problems))
    if ctx.session is None or ctx.session.run is None or not (folder / RUN_FILE).exists():
        raise HilError(f"the suite did not run (pytest exit status {int(code)})")
    if code == pytest.ExitCode.INTERRUPTED:
        # run.json holds what was done: `--resume` goes on from there
        raise KeyboardInterrupt(f"interrupted; resume with --resume {folder}")
    return RunRecord.load(folder)


def _remove_tree(folder: Path) -> None:
    import shutil

    with contextlib.suppress(OSError):
        shutil.rmtree(folder)


def quiet() -> IO[str]:
    """A sink for progress (tests)."""
    return io.StringIO()
