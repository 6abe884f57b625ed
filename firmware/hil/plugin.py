"""The pytest plugin of the lab suite (``-p firmware.hil.plugin``): marker, fixtures, verdicts, record.

Loaded by :mod:`firmware.hil.runner` (``egm hil run``). It registers the ``hil`` marker and checks it
on every collected test (:mod:`firmware.hil.meta`), keeps the tests ``--hil-only`` names, leaves out
those a resumed run already has a verdict for, skips a test that does not apply to the run's target
("not applicable to target X"), and gives the tests their fixtures:

- ``cabinet`` (session): the run's :class:`~firmware.hil.target.Target`, started once, brought back
  up before a test if an earlier one left it down, back to its default start after a test that used
  ``start_extra``. A test that uses it gets automatic evidence: meters before and after, the events
  logged during it, the screen at its end, the terminal's log lines during it.
- ``record`` (function): :class:`~firmware.hil.recorder.Recorder` (steps, measurements with limits,
  notes, evidence files).
- ``operator`` (function): :class:`~firmware.hil.operator.Operator` (``do(instruction, sim=, verify=,
  timeout=)``).

Each test's verdict: PASS; FAIL (an assertion or a measurement outside its limits); ERROR (the test
itself broke: any other exception, in the test or its set-up or tear-down); BLOCKED (``Blocked``:
the operator could not do a step); SKIPPED (with the reason). ``run.json`` is written after every
test, and ``junit.xml`` and ``report.html`` at the end (:mod:`firmware.hil.report`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import platform
import socket
import sys
import time
import uuid
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from firmware.hil.errors import Blocked, HilError, MeasurementFailure, TargetError
from firmware.hil.meta import MetaError, test_meta
from firmware.hil.operator import DEFAULT_PROMPT_TIMEOUT, Console, Operator
from firmware.hil.record import RunRecord, TestRecord, now_iso
from firmware.hil.recorder import Recorder
from firmware.hil.target import Target, make_target

EVIDENCE_DIR = "evidence"
NO_SCREENSHOT = "no screen capture: the terminal has no screenshot op"


class RunContext:
    """What the runner hands the plugin in process (``pytest.main(..., plugins=[ctx])``): the operator's
    input, where progress goes, and what it gets back (the catalogue, collection problems)."""

    def __init__(self, *, answers: IO[str] | None = None, out: IO[str] | None = None, progress: bool = False) -> None:
        self.answers = answers
        self.out = out if out is not None else sys.stderr
        self.progress = progress
        self.catalogue: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.session: HilSession | None = None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hil", "egm lab suite")
    group.addoption("--hil-target", default="sim", help="sim, or a cabinet target file (TOML)")
    group.addoption("--hil-report", default=None, help="the report folder (run.json, junit.xml, report.html)")
    group.addoption("--hil-operator", default="", help="who runs the suite (the report's 'tested by')")
    group.addoption("--hil-prompt-timeout", type=float, default=DEFAULT_PROMPT_TIMEOUT,
                    help="seconds an operator prompt waits (default 120)")
    group.addoption("--hil-only", action="append", default=[], help="a test id or id prefix (repeatable)")
    group.addoption("--hil-resume", action="store_true", help="keep the verdicts in the report folder's run.json")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "hil(id, standard, clause, requirement, title, operator=False, duration=1, "
                   "targets=('sim', 'cabinet')): a lab suite test and the clause it evidences")
    ctx = _context(config)
    session = HilSession(config, ctx)
    config.stash[_SESSION] = session
    config.pluginmanager.register(session, "hil-session")


def _context(config: pytest.Config) -> RunContext:
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, RunContext):
            return plugin
    return RunContext(answers=sys.stdin, progress=False)


_SESSION = pytest.StashKey["HilSession"]()


def session_of(config: pytest.Config) -> HilSession:
    return config.stash[_SESSION]


def _matches(test_id: str, wanted: str) -> bool:
    base = test_id.split("[", 1)[0]
    return test_id == wanted or base == wanted or (wanted.endswith(".") and base.startswith(wanted)) \
        or base.startswith(wanted + ".")


class HilSession:
    """One run: the record, the target (started when a test first needs it), the progress."""

    def __init__(self, config: pytest.Config, ctx: RunContext) -> None:
        self.config = config
        self.ctx = ctx
        ctx.session = self
        opt = config.option
        self.collect_only = bool(getattr(opt, "collectonly", False))
        self.target_spec: str = opt.hil_target
        self.report_dir = Path(opt.hil_report or Path.cwd() / "hil-report").resolve()
        self.only: list[str] = list(opt.hil_only)
        self.prompt_timeout: float = opt.hil_prompt_timeout
        self.target_kind = "sim" if self.target_spec == "sim" else "cabinet"
        self._target: Target | None = None
        self.meta: dict[str, dict[str, Any]] = {}
        self.current: dict[str, TestRecord] = {}
        self.recorders: dict[str, Recorder] = {}
        self.started_at: dict[str, float] = {}
        self.console = Console(ctx.answers, self._say, timeout=self.prompt_timeout, suspend=self._suspend)
        self._progress: Any = None
        self._task: Any = None
        self.run: RunRecord | None = None
        if self.collect_only:
            return
        self.report_dir.mkdir(parents=True, exist_ok=True)
        if opt.hil_resume and (self.report_dir / "run.json").exists():
            self.run = RunRecord.load(self.report_dir)
            self.run.finished = ""
        else:
            self.run = RunRecord(run_id=uuid.uuid4().hex[:12], target=self.target_spec, target_kind=self.target_kind,
                                 operator=opt.hil_operator or "", only=self.only)
        self.run.report_dir = str(self.report_dir)
        if opt.hil_operator:
            self.run.operator = opt.hil_operator
        elif not self.run.operator and self.target_kind == "cabinet":
            from firmware.hil.target import load_target_file

            self.run.operator = load_target_file(Path(self.target_spec)).operator
        self.run.python = f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})"
        self.run.host = f"{socket.gethostname()} ({platform.system()} {platform.release()}, {platform.machine()})"
        from firmware import __version__

        self.run.egm_version = __version__

    # -- output -------------------------------------------------------------------------------
    def _say(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.ctx.out, flush=True)

    @contextlib.contextmanager
    def _suspend(self) -> Iterator[None]:
        capman = self.config.pluginmanager.getplugin("capturemanager")
        ctx = capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext()
        with ctx:
            yield

    def start_progress(self, total: int) -> None:
        if not self.ctx.progress or total == 0:
            return
        from rich.console import Console as RichConsole
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        tty = hasattr(self.ctx.out, "isatty") and self.ctx.out.isatty()
        console = RichConsole(file=self.ctx.out, highlight=False, markup=False, emoji=False,
                              width=None if tty else 160)
        self._progress = Progress(TextColumn("egm hil"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                  TextColumn("{task.description}"), console=console, transient=True)
        self._progress.start()
        self._task = self._progress.add_task("", total=total)

    def progress_line(self, test: TestRecord) -> None:
        reason = f"  ({test.reason})" if test.reason and test.verdict != "PASS" else ""
        self._say(f"{test.verdict:<8}{test.id:<32}{test.elapsed_s:7.1f} s  {test.title}{reason}")
        if self._progress is not None:
            self._progress.advance(self._task)

    def stop_progress(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    # -- the target ---------------------------------------------------------------------------
    def target(self) -> Target:
        if self._target is None:
            target = make_target(self.target_spec, self.report_dir / self.target_kind)
            target.prompt = lambda instruction, verify=None, timeout=None: self.console.ask(
                instruction, verify=verify, timeout=timeout, target=target)
            self._target = target
            target.power_on()
            self.identify(target)
        return self._target

    @property
    def target_started(self) -> bool:
        return self._target is not None

    def identify(self, target: Target | None) -> None:
        """The run's identity: software signature, configuration hash, cabinet id."""
        assert self.run is not None
        run = self.run
        with contextlib.suppress(Exception):
            from firmware.config import load_config

            config_path = target.config_path if target is not None else None
            cfg = load_config(config_path)
            run.cabinet_id = cfg.terminal.id
            canonical = json.dumps(cfg.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
            run.config_sha256 = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        if target is not None:
            try:
                sig = target.software_signature("sha256")
                run.software = {"sha256": sig.get("overall"), "files": len(sig.get("files", [])),
                                "verification": sig.get("verification"), "source": "the terminal (service software)"}
            except TargetError as exc:
                run.software = {"sha256": None, "verification": None, "source": f"not available: {exc}"}
        else:
            from firmware.cabinet.software import default_root, lab_hash

            report = lab_hash(default_root(), "sha256")
            run.software = {"sha256": report["overall"], "files": len(report["files"]), "verification": None,
                            "source": "computed from the installed files (no test started the terminal)"}

    # -- a test's record ----------------------------------------------------------------------
    def begin(self, item: pytest.Item) -> TestRecord:
        meta = self.meta[item.nodeid]
        test = TestRecord(id=meta["id"], nodeid=item.nodeid, title=meta["title"], standard=meta["standard"],
                          clause=meta["clause"], requirement=meta["requirement"], operator=meta["operator"],
                          duration_s=meta["duration_s"], targets=meta["targets"], verdict="PASS",
                          started=now_iso())
        self.current[item.nodeid] = test
        self.started_at[item.nodeid] = time.monotonic()
        self.recorders[item.nodeid] = Recorder(test, self.report_dir / EVIDENCE_DIR / test.id, self.report_dir)
        return test

    def verdict(self, item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
        test = self.current.get(item.nodeid)
        if test is None:
            return
        if report.skipped and report.when in ("setup", "call"):
            test.verdict, test.reason = "SKIPPED", _skip_reason(report)
            return
        if not report.failed:
            return
        exc = call.excinfo.value if call.excinfo is not None else None
        if isinstance(exc, Blocked):
            if test.verdict in ("PASS", "BLOCKED"):
                test.verdict, test.reason = "BLOCKED", exc.reason
            return
        message = _first_line(exc) if exc is not None else str(report.longrepr)[:300]
        if report.when == "call" and isinstance(exc, AssertionError | pytest.fail.Exception):
            test.verdict, test.reason = "FAIL", message
        elif test.verdict in ("PASS", "SKIPPED", "BLOCKED"):
            where = {"setup": "in its set-up", "call": "", "teardown": "in its tear-down"}[report.when]
            test.verdict = "ERROR"
            test.reason = f"{type(exc).__name__ if exc else 'error'} {where}: {message}".replace("  ", " ")
        if report.when == "call" and report.longrepr is not None:
            with contextlib.suppress(Exception):
                self.recorders[item.nodeid].attach("failure", str(report.longrepr), "text")

    def finish(self, nodeid: str) -> None:
        test = self.current.pop(nodeid, None)
        self.recorders.pop(nodeid, None)
        if test is None or self.run is None:
            return
        test.finished = now_iso()
        test.elapsed_s = round(time.monotonic() - self.started_at.pop(nodeid, time.monotonic()), 3)
        self.run.put(test)
        self.run.save(self.report_dir)
        self.progress_line(test)

    # hooks of the session object (registered as a plugin: they need no config)
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            text = [line for line in str(report.longrepr).strip().splitlines() if line.strip()]
            self.ctx.problems.append(f"{report.nodeid or 'the suite'}: cannot be collected: "
                                     f"{text[-1] if text else 'error'}")

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        if self._progress is not None and nodeid in self.meta:
            self._progress.update(self._task, description=self.meta[nodeid]["id"])

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.finish(nodeid)

    def close(self) -> None:
        self.stop_progress()
        if self.run is None:
            return
        if not self.run.software:
            with contextlib.suppress(Exception):
                self.identify(None)
        if self._target is not None:
            with contextlib.suppress(Exception):
                self._target.close()
        if self.ctx.problems:
            return              # nothing ran: the runner reports the problems, no report is written
        self.run.finished = now_iso()
        self.run.save(self.report_dir)
        from firmware.hil.report import write_reports

        write_reports(self.run, self.report_dir)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return reason.removeprefix("Skipped: ")
    return str(longrepr)


# -- collection ---------------------------------------------------------------------------------
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    hil = session_of(config)
    ctx = hil.ctx
    seen: dict[str, str] = {}
    for item in items:
        try:
            meta = test_meta(item)
        except MetaError as exc:
            ctx.problems.append(str(exc))
            continue
        if meta["id"] in seen:
            ctx.problems.append(f"{item.nodeid}: id {meta['id']!r} is already {seen[meta['id']]}'s")
            continue
        seen[meta["id"]] = item.nodeid
        hil.meta[item.nodeid] = meta
    for wanted in hil.only:
        if not any(_matches(m["id"], wanted) for m in hil.meta.values()):
            ctx.problems.append(f"--only {wanted}: no test has that id or id prefix")
    ctx.catalogue = [hil.meta[i.nodeid] for i in items if i.nodeid in hil.meta]
    if ctx.problems:
        config.hook.pytest_deselected(items=list(items))
        items[:] = []
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    done = {t.id for t in hil.run.tests} if hil.run is not None else set()
    for item in items:
        meta = hil.meta[item.nodeid]
        chosen = not hil.only or any(_matches(meta["id"], w) for w in hil.only)
        (keep if chosen and meta["id"] not in done else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
    if hil.run is not None:
        chosen_ids = [hil.meta[i.nodeid]["id"] for i in items]
        hil.run.planned = [t for t in hil.run.planned if t in done] + chosen_ids \
            if hil.run.planned else [*sorted(done), *chosen_ids]
        hil.run.save(hil.report_dir)
    hil.start_progress(len(items))


def pytest_sessionfinish(session: pytest.Session) -> None:
    hil = session_of(session.config)
    if not hil.collect_only:
        hil.close()


# -- each test --------------------------------------------------------------------------------------
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    hil = session_of(item.config)
    if item.nodeid not in hil.meta:
        return
    test = hil.begin(item)
    if hil.target_kind not in test.targets:
        pytest.skip(f"not applicable to target {hil.target_kind}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    result = yield
    hil = session_of(item.config)
    recorder = hil.recorders.get(item.nodeid)
    if recorder is not None:
        soft = [m for m in recorder.soft_failures() if m.soft]
        if soft:
            names = ", ".join(f"{m.name} = {m.value!r} outside {m.limits}" for m in soft)
            raise MeasurementFailure(f"measurement(s) outside their limits: {names}")
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    session_of(item.config).verdict(item, call, report)
    return report


# -- fixtures ---------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def cabinet(request: pytest.FixtureRequest) -> Target:
    """The run's target, started once (see the module docstring)."""
    return session_of(request.config).target()


@pytest.fixture
def record(request: pytest.FixtureRequest) -> Recorder:
    """This test's recorder: ``step``, ``measure``, ``note``, ``attach``."""
    hil = session_of(request.config)
    recorder = hil.recorders.get(request.node.nodeid)
    if recorder is None:
        raise HilError(f"{request.node.nodeid}: not a lab suite test (no hil marker)")
    return recorder


@pytest.fixture
def operator(request: pytest.FixtureRequest, record: Recorder) -> Operator:
    """Asks the operator for a physical step (on the simulated cabinet: its automation)."""
    hil = session_of(request.config)
    target = hil.target() if "cabinet" in request.fixturenames else None
    if target is None and hil.target_kind == "sim":
        target = hil.target()
    return Operator(target, hil.console, record.test.id, record)


@pytest.fixture(autouse=True)
def _hil_cabinet_evidence(request: pytest.FixtureRequest) -> Iterator[None]:
    """For a test that uses ``cabinet``: up before it; meters, events, screen and log around it."""
    if "cabinet" not in request.fixturenames:
        yield
        return
    hil = session_of(request.config)
    recorder = hil.recorders.get(request.node.nodeid)
    target: Target = request.getfixturevalue("cabinet")
    if not target.is_up():
        target.power_on()
    before = _evidence_before(target, recorder)
    yield
    if recorder is not None:
        _evidence_after(target, recorder, before, request.node)
    if target.extra:
        target.restore()


def _evidence_before(target: Target, recorder: Recorder | None) -> dict[str, Any]:
    state: dict[str, Any] = {"log": len(target.log_lines()), "seq": None}
    if recorder is None:
        return state
    try:
        recorder.attach("meters-before", target.meters(), "json")
    except TargetError as exc:
        recorder.note(f"no meters before the test: {exc}")
    try:
        events = target.events(1)
        state["seq"] = events[0]["seq"] if events else 0
    except (TargetError, KeyError, IndexError, TypeError) as exc:
        recorder.note(f"no event sequence at the start: {exc}")
    return state


def _evidence_after(target: Target, recorder: Recorder, before: dict[str, Any], item: pytest.Item) -> None:
    up = target.is_up()
    if not up:
        recorder.note("the terminal was down at the end of the test: no meters, events or screen after it")
    else:
        try:
            recorder.attach("meters-after", target.meters(), "json")
        except TargetError as exc:
            recorder.note(f"no meters after the test: {exc}")
        if before.get("seq") is not None:
            try:
                events = [e for e in target.events(500) if e.get("seq", 0) > before["seq"]]
                recorder.attach("events", list(reversed(events)), "json")
            except TargetError as exc:
                recorder.note(f"no events after the test: {exc}")
        name = "screen-at-failure" if recorder.test.verdict in ("FAIL", "ERROR") else "screen-at-end"
        path = recorder.evidence_dir / f"{name}.png"
        try:
            if target.screenshot(path):
                recorder.attach(name, path, "png")
            else:
                recorder.note(NO_SCREENSHOT)
        except TargetError as exc:
            recorder.note(f"no screen capture: {exc}")
    lines = target.log_lines()[before["log"]:]
    if target.has_log:
        recorder.attach("terminal-log", "\n".join(lines) + ("\n" if lines else ""), "text")
    else:
        recorder.note("no log excerpt: the suite attached to a terminal it did not start (its log is "
                      "the service's, e.g. journalctl)")
