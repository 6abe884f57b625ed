"""The cabinet's configuration files other than units and udev rules: fstab.example passes
``findmnt --verify`` (but for the partitions a build machine does not have), every journald and
timesyncd key is one the installed systemd documents, the tmpfiles lines are well formed."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CABINET = ROOT / "deploy/cabinet"
#: What ``findmnt --verify`` cannot check off the cabinet: its partitions and mount points.
ABSENT_HERE = re.compile(r"unreachable on boot required (source: LABEL=egm-|target: No such file)")


def fstab_findings(path: Path) -> list[str]:
    done = subprocess.run(["findmnt", "--verify", "--tab-file", str(path)], capture_output=True, text=True,
                          timeout=30)
    lines = (done.stdout + done.stderr).splitlines()
    summary = [line for line in lines if "parse errors" in line]
    assert summary, lines
    found = [line.strip() for line in lines if re.match(r"\s+\[[EW]\]", line) and not ABSENT_HERE.search(line)]
    if not summary[0].startswith("0 parse errors"):
        found.append(summary[0])
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#") and len(line.split()) != 6:
            found.append(f"line {number}: {len(line.split())} fields, not 6")
    return found


needs_findmnt = pytest.mark.skipif(shutil.which("findmnt") is None, reason="findmnt (util-linux) is not installed")


@needs_findmnt
def test_the_fstab_example_verifies():
    assert fstab_findings(CABINET / "mounts/fstab.example") == []


@needs_findmnt
@pytest.mark.parametrize("breakage", [
    (" tmpfs  rw,nodev,nosuid,noexec,mode=1777,size=256M", " tmpfss rw,nodev,nosuid,noexec,mode=1777,size=256M"),
    ("bind,x-systemd.requires-mounts-for=/var/lib/egm              0 0", "bind 0"),
])
def test_a_broken_fstab_is_caught(breakage, tmp_path):
    broken = tmp_path / "fstab"
    text = (CABINET / "mounts/fstab.example").read_text()
    assert breakage[0] in text
    broken.write_text(text.replace(*breakage, 1))
    assert fstab_findings(broken) != []


def test_the_state_partition_is_mounted_nodev_nosuid_noexec():
    line = next(x for x in (CABINET / "mounts/fstab.example").read_text().splitlines()
                if x.split()[:2] == ["LABEL=egm-state", "/var/lib/egm"])
    assert {"nodev", "nosuid", "noexec", "barrier=1", "errors=remount-ro"} <= set(line.split()[3].split(","))
    root = next(x for x in (CABINET / "mounts/fstab.example").read_text().splitlines() if x.split()[1:2] == ["/"])
    assert "ro" in root.split()[3].split(",")


def documented_keys(template: Path) -> set[str]:
    """The keys a systemd configuration file's packaged template lists (commented, with their defaults)."""
    return {m.group(1) for m in re.finditer(r"^#?([A-Z][A-Za-z]+)=", template.read_text(), re.M)}


@pytest.mark.parametrize(("dropin", "template"), [
    ("journald/egm.conf", "/etc/systemd/journald.conf"),
    ("timesync/egm.conf", "/etc/systemd/timesyncd.conf"),
])
def test_every_drop_in_key_is_one_systemd_knows(dropin, template):
    if not Path(template).exists():
        pytest.skip(f"{template} (Debian package systemd / systemd-timesyncd) is not installed")
    known = documented_keys(Path(template))
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str                          # type: ignore[assignment,method-assign]
    parser.read(CABINET / dropin)
    section = "Journal" if "journald" in dropin else "Time"
    assert parser.sections() == [section]
    unknown = set(parser[section]) - known
    assert not unknown, f"{dropin}: keys systemd does not know: {sorted(unknown)}"


def test_the_journal_is_persistent_and_capped_below_the_state_partition():
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str                          # type: ignore[assignment,method-assign]
    parser.read(CABINET / "journald/egm.conf")
    journal = parser["Journal"]
    assert journal["Storage"] == "persistent" and journal["SystemMaxUse"] and journal["SystemKeepFree"]


def test_the_tmpfiles_lines_make_the_state_directories():
    lines = [x.split() for x in (CABINET / "tmpfiles/egm.conf").read_text().splitlines()
             if x.strip() and not x.startswith("#")]
    assert all(len(x) == 6 and x[0] == "d" and re.fullmatch(r"[0-7]{4}", x[2]) for x in lines), lines
    by_path = {x[1]: (x[2], x[3], x[4]) for x in lines}
    assert by_path["/var/lib/egm"] == ("0750", "egm", "egm")
    assert by_path["/var/lib/egm/pki"] == ("0700", "egm", "egm")
