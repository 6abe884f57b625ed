"""One composition root builds the terminal (issue 23): what the terminal works with is passed in
through its constructor, and nothing is wired by assigning a terminal's attributes afterwards
(docs/architecture.md, "The composition root").

The scan reads every module of the terminal's code and of what builds terminals (firmware,
sim_hardware, benchmarks, tests) and refuses:

* an assignment (``x.a = ...``, ``x.a: T = ...``, ``x.a += ...``, ``setattr(x, "a", ...)``) of one of
  :data:`WIRED`, the collaborators the terminal was once wired with afterwards, to anything but
  ``self``: no other object has attributes of those names, so any such assignment is wiring;
* an assignment to any attribute ``Terminal.__init__`` sets, except the terminal's own state
  (:data:`STATE`: what its parts write while it runs), on an expression that names a terminal
  (``terminal``, ``term``, ``<x>.terminal``, ``self.t``, or a local name given one of those, as
  ``t = self.t``) outside the ``Terminal`` class;
* inside ``Terminal``, an assignment of one of :data:`WIRED` outside ``__init__`` (the screens'
  input: also :meth:`Terminal.connect_screens`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from firmware.cabinet.service import ServiceApi, ServiceError
from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("firmware", "sim_hardware", "benchmarks", "tests")
TERMINAL = ROOT / "firmware" / "cabinet" / "terminal.py"
#: The collaborators that used to be assigned onto a built terminal (the service API, the host
#: link, the screens' input, the runner's callbacks). ``demo`` is the service API's (a property).
WIRED = frozenset({"service", "hostlink", "sas", "on_input", "on_round", "on_step", "demo"})
#: Terminal attributes that are state its parts write as it runs, not collaborators.
STATE = frozenset({"message", "halted", "snapshot", "_stop", "_handlers"})
#: Where, inside ``Terminal``, a wired attribute may be set.
SETTERS = {"__init__": WIRED, "connect_screens": frozenset({"on_input"}), "power_up": frozenset({"hostlink", "sas"})}
TERMINAL_NAMES = frozenset({"terminal", "term"})


def _terminal_class(tree: ast.Module) -> ast.ClassDef:
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Terminal")


def _self_attributes(node: ast.AST) -> set[str]:
    return {t.attr for t, _ in _assigned(node) if isinstance(t.value, ast.Name) and t.value.id == "self"}


def collaborators() -> frozenset[str]:
    """Every attribute ``Terminal.__init__`` sets, but its running state."""
    init = next(n for n in _terminal_class(ast.parse(TERMINAL.read_text())).body
                if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    return frozenset(_self_attributes(init) - STATE)


def _assigned(node: ast.AST) -> Iterator[tuple[ast.Attribute, ast.AST]]:
    """``(target, statement)`` for every attribute assigned under ``node``; ``setattr(x, "a", v)``
    counts as ``x.a = v``."""
    for stmt in ast.walk(node):
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = list(stmt.targets)
        elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
            targets = [stmt.target]
        elif (isinstance(stmt, ast.Call) and isinstance(stmt.func, ast.Name) and stmt.func.id == "setattr"
              and len(stmt.args) >= 2 and isinstance(stmt.args[1], ast.Constant)
              and isinstance(stmt.args[1].value, str)):
            targets = [ast.Attribute(value=stmt.args[0], attr=stmt.args[1].value, ctx=ast.Store())]
        while targets:
            target = targets.pop()
            if isinstance(target, ast.Tuple | ast.List):
                targets.extend(target.elts)
            elif isinstance(target, ast.Attribute):
                yield target, stmt


def _aliases(tree: ast.Module) -> dict[int, frozenset[str]]:
    """Statement id -> the local names of a terminal in its function (``t = self.t``: ``t``)."""
    found: dict[int, frozenset[str]] = {}
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            names = frozenset(target.id for stmt in ast.walk(func) if isinstance(stmt, ast.Assign)
                              and _names_a_terminal(stmt.value) for target in stmt.targets
                              if isinstance(target, ast.Name))
            found.update({id(stmt): names for stmt in ast.walk(func)})
    return found


def _names_a_terminal(expr: ast.expr, aliases: frozenset[str] = frozenset()) -> bool:
    if isinstance(expr, ast.Name):
        return expr.id in TERMINAL_NAMES | aliases
    if isinstance(expr, ast.Attribute):
        return expr.attr == "terminal" or (expr.attr == "t" and isinstance(expr.value, ast.Name)
                                            and expr.value.id == "self")
    return False


def wiring_after_construction(path: Path, source: str, attributes: frozenset[str]) -> list[str]:
    """Where ``source`` (the module at ``path``) wires a terminal by assignment, as ``path:line: code``."""
    tree = ast.parse(source)
    found = []
    inside_terminal: set[int] = set()
    if path.resolve() == TERMINAL:
        cls = _terminal_class(tree)
        inside_terminal = {id(n) for n in ast.walk(cls)}
        for method in cls.body:
            if isinstance(method, ast.FunctionDef):
                allowed = SETTERS.get(method.name, frozenset())
                found += [f"{path}:{stmt.lineno}: {ast.unparse(target)} set in Terminal.{method.name}"
                          for target, stmt in _assigned(method)
                          if isinstance(target.value, ast.Name) and target.value.id == "self"
                          and target.attr in WIRED - allowed]
    aliases = _aliases(tree)
    for target, stmt in _assigned(tree):
        on_self = isinstance(target.value, ast.Name) and target.value.id in ("self", "cls")
        if (target.attr in WIRED and not on_self) or (
                target.attr in attributes and id(stmt) not in inside_terminal
                and _names_a_terminal(target.value, aliases.get(id(stmt), frozenset()))):
            found.append(f"{path}:{stmt.lineno}: {ast.unparse(stmt)[:100]}")
    return found


def test_the_scan_knows_the_terminals_collaborators() -> None:
    # the names above are the Terminal's (a rename must not leave the scan looking at nothing)
    assert WIRED - {"demo"} <= collaborators() and "demo" in vars(Terminal)
    assert {"ledger", "devices", "vouchers", "cabinet", "rounds", "money_in"} <= collaborators()


def test_nothing_wires_a_terminal_by_assigning_its_attributes() -> None:
    attributes = collaborators()
    found = []
    for package in SCANNED:
        for path in sorted((ROOT / package).rglob("*.py")):
            found += wiring_after_construction(path.relative_to(ROOT), path.read_text(), attributes)
    assert found == []


@pytest.mark.parametrize("code", [
    "terminal.hostlink = link",
    "rig.terminal.service: ServiceApi = api",
    "self.t.on_step = autoplay",
    "setattr(lock, 'service', api)",
    "api.terminal.ledger = other",
    "term.on_input, x = inbox.offer, 1",
    "def retest(self):\n    t = self.t\n    t.rng = RngService.production(b'')",
])
def test_the_scan_finds_an_assignment_put_back(code: str) -> None:
    assert wiring_after_construction(Path("firmware/commands/run.py"), code, collaborators()) != []


def test_the_scan_finds_a_collaborator_set_in_a_terminal_method() -> None:
    source = TERMINAL.read_text().replace("    def stop(self) -> None:\n",
                                          "    def stop(self) -> None:\n        self.hostlink = None\n")
    assert [f for f in wiring_after_construction(Path("firmware/cabinet/terminal.py"), source, collaborators())
            if "Terminal.stop" in f]


def test_a_part_writing_the_terminals_message_is_not_wiring() -> None:
    assert wiring_after_construction(Path("firmware/cabinet/cashout.py"), "self.t.message = ''",
                                     collaborators()) == []


# --- the constructor ----------------------------------------------------------------------------------
def test_the_service_api_and_the_host_link_are_built_from_the_terminal_they_serve(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path)
    seen: dict[str, object] = {}

    def link(terminal: Terminal) -> SimpleNamespace:
        seen["link"] = terminal
        assert terminal.cabinet is not None and terminal.money_in is not None     # the parts are there
        return SimpleNamespace(connected=False, packages=None, poll=lambda: None, status=lambda: {"up": 1},
                               validate=lambda validation: None)

    def service(terminal: Terminal) -> ServiceApi:
        seen["service"] = terminal
        return ServiceApi.from_config(terminal)

    try:
        terminal = Terminal(Config(), ledger, RngService.seeded(1), Devices(), VoucherBook(ledger, terminal_id="T1"),
                            service=service, hostlink=link, game="three-card-poker")
        assert seen == {"service": terminal} and terminal.hostlink is None     # the link: at power-up
        assert terminal.demo is terminal.service.demo and terminal.game_id == "three-card-poker"
        assert {"service", "demo"} <= set(terminal.handlers)
        terminal.power_up()
        assert seen == {"link": terminal, "service": terminal}
        assert terminal.cabinet.state.name == "IDLE"
        terminal.step()
        assert terminal.status()["host"] == {"up": 1}
        asked = terminal.submit("demo")                       # the command the service API added
        terminal.step()
        assert asked.result(0)["demo"] is False
        plain = Terminal(Config(), ledger, RngService.seeded(1), Devices(), VoucherBook(ledger, terminal_id="T1"))
        assert plain.service is None and plain.demo is None and plain.hostlink is None
        assert "service" not in plain.handlers
        with pytest.raises(ServiceError, match="another terminal"):
            Terminal(Config(), ledger, RngService.seeded(1), Devices(), VoucherBook(ledger, terminal_id="T1"),
                     service=lambda t: terminal.service)
    finally:
        ledger.close()
