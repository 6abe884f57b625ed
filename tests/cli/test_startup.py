"""``make run`` (``egm run --sim``) lists what it started: the devices and their ports, the host
link and the embedded host, the state dir, the control socket and the screens."""

from __future__ import annotations

import subprocess
import sys


def started_rows(stdout: str) -> dict[str, tuple[str, str]]:
    """The rows of the ``started`` table: part -> (what, where)."""
    rows = {}
    for line in stdout.split("started", 1)[1].splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) == 3 and cells[0] not in ("", "part"):
            rows[cells[0]] = (cells[1], cells[2])
    return rows


def test_run_sim_headless_lists_what_it_started(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless",
                           "--autoplay", "0", "--state-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows = started_rows(proc.stdout)
    for part, protocol in (("bill_validator", "id003"), ("printer", "tcl"), ("touch", "microtouch"),
                           ("io_board", "io")):
        what, where = rows[part]
        assert what == f"simulated {protocol}" and where.startswith("/dev/pts/"), (part, rows[part])
    assert rows["shoe"][0] == "not fitted (none)"
    assert rows["host link"][1].startswith("mqtts://127.0.0.1:") and "embedded broker" in rows["host link"][0]
    assert rows["embedded host"][1] == str(tmp_path / "host")
    assert rows["critical memory"][1] == str(tmp_path)
    assert rows["control socket"][1] == str(tmp_path / "control.sock")
    assert rows["screens"][0] == "off (headless)"
