"""The lab suite ships with the product: its own pytest ini and templates are package data, the
project's test run does not collect it, and it never imports the project's tests."""

from __future__ import annotations

import ast
import configparser
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HIL = ROOT / "firmware" / "hil"


def test_the_project_suite_does_not_collect_the_lab_suite():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]


def test_the_lab_suite_never_imports_the_projects_tests():
    for path in HIL.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n == "tests" or n.startswith("tests.") for n in names), f"{path} imports {names}"


def test_its_ini_and_templates_are_package_data_and_the_ini_has_no_project_addopts():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = project["tool"]["setuptools"]["package-data"]["firmware"]
    assert "hil/pytest.ini" in data and "hil/report/templates/*.j2" in data
    assert {"pytest>=8.0", "jinja2>=3.1"} <= set(project["project"]["dependencies"])
    ini = configparser.ConfigParser()
    ini.read(HIL / "pytest.ini")
    assert "benchmark" not in ini["pytest"].get("addopts", "")
    assert list((HIL / "report" / "templates").glob("*.j2"))
