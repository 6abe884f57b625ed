"""``make release`` end to end (marker ``release``, ``make release-test``; docs/release.md).

Both packages are built (development-signed) into a temporary dist/, checked with ``egm release
verify``, ``dpkg-deb`` and lintian, then installed into a fresh Debian root made by debootstrap
(bookworm, minbase, with python3; the pristine root is cached under /var/cache/egm-release so a
rerun only copies it). Inside the root, as the ``egm`` user, from the installed files: ``egm
software verify`` and ``egm run --sim --headless --autoplay 20`` with the packaged configuration,
then one changed file in the installed tree makes the verification fail.

Root only (chroot, mounts); the whole test takes several minutes (docs/release.md has the times).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.release

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("EGM_RELEASE_CACHE", "/var/cache/egm-release"))
PRISTINE = CACHE / "debootstrap" / "bookworm-minbase"
MIRROR = os.environ.get("EGM_DEBOOTSTRAP_MIRROR", "http://deb.debian.org/debian")
SITE = "/opt/egm/terminal/lib/python3.11/site-packages"
RELEASE = "/opt/egm/terminal/release"
TIMES: dict[str, float] = {}


def _need(tool: str) -> str:
    path = shutil.which(tool) or (f"/usr/sbin/{tool}" if os.access(f"/usr/sbin/{tool}", os.X_OK) else None)
    if path is None:
        pytest.skip(f"{tool} is not installed (make release-tools)")
    return path


def _timed(label: str, cmd: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    start = time.monotonic()
    try:
        result = subprocess.run(cmd, text=True, capture_output=True, **kwargs)
    except subprocess.TimeoutExpired as exc:       # a terminal that stays up (e.g. tilted) is killed
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        result = subprocess.CompletedProcess(cmd, -9, out, err)
    TIMES[label] = TIMES.get(label, 0.0) + time.monotonic() - start
    return result


@pytest.fixture(scope="module", autouse=True)
def _report_times() -> Iterator[None]:
    """The measured times, printed at the end (``-s``; docs/release.md)."""
    yield
    for label, seconds in TIMES.items():
        print(f"release test: {label}: {seconds:.1f} s")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.geteuid() != 0:
        pytest.skip("the release test needs root (chroot, mounts, dpkg in the root)")
    _need("dpkg-deb")
    out = tmp_path_factory.mktemp("dist")
    result = _timed("build both packages", [sys.executable, "-m", "deploy.release.build", "--out", str(out)],
                    cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "DEVELOPMENT-SIGNED" in result.stderr
    return out


def _pristine_root() -> Path:
    """The cached bookworm minbase root with python3 (made once; a partial one is never used)."""
    if (PRISTINE / "usr" / "bin" / "python3").exists():
        return PRISTINE
    debootstrap = _need("debootstrap")
    partial = PRISTINE.with_name(PRISTINE.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    result = _timed("debootstrap (first run only)",
                    [debootstrap, "--variant=minbase", "--include=python3", "bookworm", str(partial), MIRROR])
    if result.returncode != 0:
        pytest.skip(f"debootstrap could not make a bookworm root from {MIRROR}: {result.stderr.strip()[-300:]}")
    partial.rename(PRISTINE)
    return PRISTINE


@pytest.fixture(scope="module")
def chroot(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    pristine = _pristine_root()
    root = tmp_path_factory.mktemp("root") / "bookworm"
    copied = _timed("fresh root (copy of the cached debootstrap)", ["cp", "-a", str(pristine), str(root)])
    assert copied.returncode == 0, copied.stderr
    mounts: list[Path] = []
    try:
        for kind, source, target in (("proc", "proc", "proc"), ("bind", "/dev", "dev"),
                                     ("bind", "/dev/pts", "dev/pts")):
            where = root / target
            opts = ["-t", "proc"] if kind == "proc" else ["--bind"]
            subprocess.run(["mount", *opts, source, str(where)], check=True)
            mounts.append(where)
        for deb in sorted(dist.glob("*.deb")):
            shutil.copy2(deb, root / "tmp" / deb.name)
        debs = [f"/tmp/{deb.name}" for deb in sorted(dist.glob("*.deb"))]
        installed = _timed("dpkg -i both packages in the root", ["chroot", str(root), "dpkg", "-i", *debs])
        assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]
        yield root
    finally:
        for where in reversed(mounts):
            subprocess.run(["umount", "--lazy", str(where)], check=False)
        if not any(os.path.ismount(m) for m in mounts):
            shutil.rmtree(root, ignore_errors=True)


def _in_root(root: Path, *argv: str, user: str = "egm", label: str | None = None,
             timeout: float = 300) -> subprocess.CompletedProcess[str]:
    cmd = ["chroot", str(root), "env", "-i", "PATH=/usr/bin:/bin", "HOME=/var/lib/egm", "LANG=C.UTF-8"]
    if user != "root":
        cmd += ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups"]
    return _timed(label or argv[0], [*cmd, *argv], timeout=timeout)


def test_packages_are_signed_and_listed(dist: Path) -> None:
    debs = sorted(dist.glob("*.deb"))
    assert [d.name for d in debs] == ["egm-host_0.1.0_amd64.deb", "egm-terminal_0.1.0_amd64.deb"]
    sums = (dist / "SHA256SUMS").read_text()
    for deb in debs:
        result = subprocess.run([sys.executable, "-m", "firmware.cli", "release", "verify", str(deb),
                                 "--ca", str(dist / "dev-pki" / "ca.cert.pem"), "--json"],
                                cwd=ROOT, text=True, capture_output=True)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["sha256"] in sums
        listing = subprocess.run(["dpkg-deb", "-c", str(deb)], text=True, capture_output=True, check=True).stdout
        prefix = "./opt/egm/host" if deb.name.startswith("egm-host") else "./opt/egm/terminal"
        for path in ("/bin/egm", "/bin/python3", "/release/manifest.signed.json", "/release/code-signer.pub.pem",
                     "/lib/python3.11/site-packages/firmware/cli.py"):
            assert f"{prefix}{path}" in listing, path
        assert "./etc/egm/" in listing and "/dist/build/" not in listing


def test_lintian_reports_no_error(dist: Path) -> None:
    lintian = _need("lintian")
    result = _timed("lintian both packages", [lintian, "--fail-on", "error", *map(str, sorted(dist.glob("*.deb")))])
    assert result.returncode == 0, result.stdout[-3000:]
    assert " E: " not in result.stdout and not result.stdout.startswith("E: ")


def test_installed_software_verifies_and_plays_20_rounds(chroot: Path) -> None:
    ok = _in_root(chroot, "egm", "software", "verify", "--root", SITE, "--manifest", f"{RELEASE}/manifest.signed.json",
                  "--trust", f"{RELEASE}/code-signer.pub.pem", "--json", label="egm software verify")
    assert ok.returncode == 0, ok.stderr
    result = json.loads(ok.stdout)
    assert result["ok"] is True and result["files_checked"] > 300 and result["mismatches"] == []

    run = _in_root(chroot, "egm", "run", "--sim", "--headless", "--autoplay", "20", "--config",
                   "/etc/egm/terminal.toml", "--state-dir", "/var/lib/egm/lab", label="egm run --autoplay 20")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "software signature       ok" in run.stdout
    assert "autoplay: 20 round(s)" in run.stdout and "accounting identity holds" in run.stdout
    meters = _in_root(chroot, "egm", "meters", "--state-dir", "/var/lib/egm/lab", "--json", label="egm meters")
    assert json.loads(meters.stdout)["meters"]["games_played"] == 20
    ledger = _in_root(chroot, "egm", "ledger", "verify", "--state-dir", "/var/lib/egm/lab", label="egm ledger verify")
    assert ledger.returncode == 0, ledger.stderr

    host = _in_root(chroot, "egm-host", "software", "verify", "--root",
                    "/opt/egm/host/lib/python3.11/site-packages", "--manifest",
                    "/opt/egm/host/release/manifest.signed.json", "--trust",
                    "/opt/egm/host/release/code-signer.pub.pem", label="egm-host software verify")
    assert host.returncode == 0, host.stderr


def test_installed_layout(chroot: Path) -> None:
    ids = _in_root(chroot, "id", "egm", user="root").stdout
    assert "(egm)" in ids and "dialout" in ids
    state = os.stat(chroot / "var/lib/egm")
    assert oct(state.st_mode & 0o777) == "0o750"
    assert oct(os.stat(chroot / "var/lib/egm/pki").st_mode & 0o777) == "0o700"
    assert os.stat(chroot / "etc/egm/terminal.toml").st_mode & 0o007 == 0
    from deploy.release import contents

    for package, config in (("egm-terminal", "terminal.toml"), ("egm-host", "host.toml")):
        conffiles = (chroot / f"var/lib/dpkg/info/{package}.conffiles").read_text().split()
        assert conffiles == [f"/etc/egm/{config}", *(a.dest for a in contents.ASSETS[package] if a.conffile)]
        for asset in contents.ASSETS[package]:
            assert (chroot / asset.dest.lstrip("/")).read_bytes() == (ROOT / asset.source).read_bytes(), asset.dest
        # The units are known to deb-systemd-helper (update-state) but not enabled; no systemd ran.
        for unit in contents.UNITS[package]:
            assert (chroot / "var/lib/systemd/deb-systemd-helper-enabled" / f"{unit}.dsh-also").exists(), unit
    assert not list((chroot / "etc/systemd/system").rglob("egm-*"))


def test_a_tampered_installed_file_fails_verification(chroot: Path) -> None:
    target = chroot / SITE.lstrip("/") / "firmware" / "games" / "war_engine.py"
    original = target.read_bytes()
    target.write_bytes(original + b"\n# changed after installation\n")
    try:
        bad = _in_root(chroot, "egm", "software", "verify", "--root", SITE, "--manifest",
                       f"{RELEASE}/manifest.signed.json", "--trust", f"{RELEASE}/code-signer.pub.pem", "--json",
                       label="egm software verify (changed file)")
        assert bad.returncode == 1
        assert json.loads(bad.stdout)["mismatches"] == ["changed: firmware/games/war_engine.py"]
        # The power-up self-test fails on the same file: the terminal does not play (it exits or
        # stays tilted until killed) and says why.
        run = _in_root(chroot, "egm", "run", "--sim", "--headless", "--autoplay", "1", "--config",
                       "/etc/egm/terminal.toml", "--state-dir", "/var/lib/egm/tampered", timeout=60,
                       label="egm run with a changed file (stays tilted: killed after 60 s)")
        assert "autoplay: 1 round(s)" not in run.stdout
        line = next(x for x in run.stdout.splitlines() if x.strip().startswith("software signature"))
        assert "ok" not in line.split("signature", 1)[1].split(), line
    finally:
        target.write_bytes(original)
