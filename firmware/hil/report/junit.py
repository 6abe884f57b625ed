"""``junit.xml``: the run for CI. One ``testcase`` per test (classname: its standard and clause);
FAIL is a ``failure``, ERROR an ``error``, BLOCKED a ``skipped`` whose message starts ``blocked:``,
SKIPPED a ``skipped`` with its reason; measurements and notes go to ``system-out``."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from firmware.hil.record import RunRecord, TestRecord


def _case(test: TestRecord) -> ET.Element:
    case = ET.Element("testcase", {"classname": f"{test.standard}.{test.clause}", "name": test.id,
                                   "time": f"{test.elapsed_s:.3f}"})
    if test.verdict == "FAIL":
        ET.SubElement(case, "failure", {"message": test.reason or "failed", "type": "FAIL"}).text = test.reason
    elif test.verdict == "ERROR":
        ET.SubElement(case, "error", {"message": test.reason or "error", "type": "ERROR"}).text = test.reason
    elif test.verdict == "BLOCKED":
        ET.SubElement(case, "skipped", {"message": f"blocked: {test.reason}", "type": "BLOCKED"})
    elif test.verdict == "SKIPPED":
        ET.SubElement(case, "skipped", {"message": test.reason or "skipped", "type": "SKIPPED"})
    lines = [f"{test.title} ({test.standard} {test.clause})"]
    lines += [f"{m.name} = {m.value!r} {m.unit} [{m.limits}] {'ok' if m.passed else 'OUTSIDE'}".replace("  ", " ")
              for m in test.measurements]
    lines += [f"note: {n}" for n in test.notes]
    ET.SubElement(case, "system-out").text = "\n".join(lines)
    return case


def write_junit(run: RunRecord, folder: Path) -> Path:
    counts = run.counts()
    total_time = sum(t.elapsed_s for t in run.tests)
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", {
        "name": "egm-hil", "tests": str(len(run.tests)), "failures": str(counts["FAIL"]),
        "errors": str(counts["ERROR"]), "skipped": str(counts["SKIPPED"] + counts["BLOCKED"]),
        "time": f"{total_time:.3f}", "timestamp": run.started, "hostname": run.host.split(" ", 1)[0]})
    props = ET.SubElement(suite, "properties")
    for name, value in (("run_id", run.run_id), ("target", run.target), ("software_sha256", run.software.get("sha256")),
                        ("config_sha256", run.config_sha256), ("cabinet_id", run.cabinet_id),
                        ("operator", run.operator)):
        ET.SubElement(props, "property", {"name": name, "value": str(value or "")})
    for test in run.tests:
        suite.append(_case(test))
    ET.indent(suites)
    path = folder / "junit.xml"
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
    return path
