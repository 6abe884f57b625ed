"""The Debian packaging of ``make release`` on a small staged tree (default suite, seconds).

The real build (a full virtual environment, minutes) and its installation are
``tests/deploy/test_release.py`` (marker ``release``); this checks the packaging steps themselves:
control files, conffiles, maintainer script, modes, the detached signature and the refusals.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from deploy.release import build, contents
from egmproto.pki import create_ca, issue
from egmproto.release_signature import verify_file

pytestmark = pytest.mark.skipif(build.shutil.which("dpkg-deb") is None, reason="dpkg-deb is not installed")


def _stage(tmp_path: Path, spec: build.PackageSpec) -> Path:
    stage = tmp_path / "stage"
    venv = stage / spec.prefix.lstrip("/")
    (venv / "bin").mkdir(parents=True)
    script = venv / "bin" / "egm"
    script.write_text(f"#!{spec.prefix}/bin/python3\nimport sys\nsys.exit(0)\n")
    script.chmod(0o775)
    (venv / "bin" / "python3").symlink_to("/usr/bin/python3")
    (venv / "release").mkdir()
    (venv / "release" / "manifest.signed.json").write_text("{}\n")
    return stage


@pytest.fixture(scope="module")
def signer(tmp_path_factory: pytest.TempPathFactory) -> build.Signer:
    base = tmp_path_factory.mktemp("pki")
    ca = create_ca(base / "ca", name="Test Casino CA")
    issued = issue(base / "ca", "code-signer", "release-signer")
    return build.Signer(cert=issued.cert, key=issued.key, ca=ca.cert, crl=ca.crl, development=False)


def _build(tmp: Path, name: str) -> Path:
    spec = build.PACKAGES[name]
    stage = _stage(tmp, spec)
    build.debian_files(stage, spec, "0.1.0")
    return build.dpkg_build(stage, tmp, spec, "0.1.0")


@pytest.fixture(scope="module")
def terminal_deb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(tmp_path_factory.mktemp("pkg"), "terminal")


@pytest.fixture(scope="module")
def host_deb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(tmp_path_factory.mktemp("pkg"), "host")


def _members(deb: Path) -> dict[str, tuple[tarfile.TarInfo, bytes]]:
    """Every path in the package's data ("/etc/..."), with its tar entry and content."""
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True, check=True).stdout
    members = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for info in tar.getmembers():
            handle = tar.extractfile(info) if info.isfile() else None
            members["/" + info.name.removeprefix("./").rstrip("/")] = (info, handle.read() if handle else b"")
    return members


def _field(deb: Path, name: str) -> list[str]:
    value = subprocess.run(["dpkg-deb", "-f", str(deb), name], text=True, capture_output=True, check=True).stdout
    return [part.strip().split()[0] for part in value.split(",") if part.strip()]


EXEC_KEYS = ("ExecStartPre", "ExecStart", "ExecStartPost", "ExecReload", "ExecStop", "ExecStopPost")


def unit_executables(text: str) -> list[str]:
    """The programs a unit file runs (the first word of each Exec*= line, its prefixes -@:+! removed)."""
    programs = []
    for line in text.replace("\\\n", " ").splitlines():
        key, _, value = line.partition("=")
        if key.strip() in EXEC_KEYS and value.strip():
            programs.append(value.split()[0].lstrip("-@:+!"))
    return programs


def missing_executables(deb: Path) -> list[str]:
    """Each program a shipped unit runs that is neither in the package nor a binary of a package it
    depends on or recommends (or an Essential one)."""
    members = _members(deb)
    related = set(_field(deb, "Depends")) | set(_field(deb, "Recommends")) | set(contents.ESSENTIAL)
    problems = []
    for path, (_, data) in sorted(members.items()):
        if not path.startswith(contents.UNIT_DIR + "/") or not path.endswith((".service", ".target")):
            continue
        for program in unit_executables(data.decode()):
            if program in members:
                continue
            owner = contents.FOREIGN_BINARIES.get(program)
            if owner is None or owner not in related:
                problems.append(f"{path}: {program} is not in {deb.name} nor in a package it depends on "
                                f"({owner or 'no known package'})")
    return problems


def test_control_conffiles_and_maintainer_script(terminal_deb: Path) -> None:
    assert terminal_deb.name == "egm-terminal_0.1.0_amd64.deb"
    fields = subprocess.run(["dpkg-deb", "-f", str(terminal_deb)], text=True, capture_output=True, check=True).stdout
    assert "Package: egm-terminal\n" in fields and "Architecture: amd64\n" in fields
    assert ("Depends: python3 (>= 3.11~), python3 (<< 3.12), libc6 (>= 2.28), passwd, "
            "init-system-helpers (>= 1.54~)\n") in fields
    conffiles = subprocess.run(["dpkg-deb", "--ctrl-tarfile", str(terminal_deb)], capture_output=True, check=True)
    listing = subprocess.run(["tar", "-t"], input=conffiles.stdout, capture_output=True, check=True).stdout.decode()
    assert {"./conffiles", "./control", "./md5sums", "./postinst"} <= set(listing.split())
    info = subprocess.run(["dpkg-deb", "-I", str(terminal_deb), "postinst"], text=True, capture_output=True,
                          check=True).stdout
    assert "useradd --system" in info and "install -d -o egm -g egm -m 0750 /var/lib/egm" in info
    assert "/etc/egm/terminal.toml" in info


def test_contents_link_config_and_modes(terminal_deb: Path) -> None:
    listing = subprocess.run(["dpkg-deb", "-c", str(terminal_deb)], text=True, capture_output=True,
                             check=True).stdout.splitlines()
    by_path = {line.split()[5]: line for line in listing}
    assert by_path["./usr/bin/egm"].endswith("-> /opt/egm/terminal/bin/egm")
    assert by_path["./opt/egm/terminal/bin/egm"].startswith("-rwxr-xr-x root/root")   # 0775 staged: no g+w
    assert "./etc/egm/terminal.toml" in by_path and "./usr/share/doc/egm-terminal/copyright" in by_path
    config = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(terminal_deb)], capture_output=True, check=True)
    text = subprocess.run(["tar", "-xO", "./etc/egm/terminal.toml"], input=config.stdout, capture_output=True,
                          check=True).stdout.decode()
    assert 'manifest = "/opt/egm/terminal/release/manifest.signed.json"' in text and "development = false" in text
    assert "@" not in text


def test_the_detached_signature_checks_the_package(terminal_deb: Path, signer: build.Signer) -> None:
    sig = build.sign_deb(terminal_deb, signer)
    assert verify_file(terminal_deb, sig, signer.ca, signer.crl).signer == "release-signer"
    sums = build.checksums(terminal_deb.parent, [terminal_deb, sig])
    assert subprocess.run(["sha256sum", "--check", "--quiet", sums.name], cwd=sums.parent).returncode == 0


def test_lintian_finds_no_error(terminal_deb: Path, host_deb: Path) -> None:
    lintian = build.shutil.which("lintian")
    if lintian is None:
        pytest.skip("lintian is not installed (make release-tools)")
    # One run for both packages: lintian's start-up is most of its time on packages this small.
    result = subprocess.run([lintian, "--fail-on", "error", str(terminal_deb), str(host_deb)], text=True,
                            capture_output=True)
    assert result.returncode == 0, result.stdout
    assert "egm-host:" in result.stdout and "egm-terminal:" in result.stdout   # both were read


def test_a_signer_and_ca_that_do_not_match_are_refused(tmp_path: Path, signer: build.Signer) -> None:
    other = create_ca(tmp_path / "other", name="Other CA")
    with pytest.raises(Exception, match="not signed by the CA"):
        build.given_signer(str(signer.cert), None, str(other.cert), None)
    with pytest.raises(build.ReleaseError, match="is not a file"):
        build.given_signer(str(tmp_path / "none.cert.pem"), None, str(signer.ca), None)


def test_signer_without_ca_is_one_line(capsys: pytest.CaptureFixture[str], signer: build.Signer) -> None:
    assert build.main(["--signer", str(signer.cert), "--out", "/nonexistent/dist"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "give both SIGNER" in err


def test_a_missing_tool_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    with pytest.raises(build.ReleaseError, match="dpkg-deb is missing"):
        build.check_tools()


def test_a_production_signer_is_found_beside_its_certificate(signer: build.Signer) -> None:
    given = build.given_signer(str(signer.cert), None, str(signer.ca), str(signer.crl))
    assert given.key == signer.key and not given.development


def test_each_package_pins_this_version_with_its_extras() -> None:
    assert build.pinned_requirement(build.PACKAGES["terminal"], "0.1.0") == "egm-terminal==0.1.0"
    assert build.pinned_requirement(build.PACKAGES["host"], "0.1.0") == "egm-terminal[postgres]==0.1.0"
    from packaging.requirements import Requirement

    for spec in build.PACKAGES.values():
        assert str(Requirement(build.pinned_requirement(spec, "0.1.0")).specifier) == "==0.1.0"


@pytest.mark.parametrize("name", ["egm-terminal", "egm-host"])
def test_the_deploy_files_are_shipped_with_their_paths_and_modes(name: str, terminal_deb: Path,
                                                                  host_deb: Path) -> None:
    deb = terminal_deb if name == "egm-terminal" else host_deb
    members = _members(deb)
    conffiles = subprocess.run(["dpkg-deb", "--info", str(deb), "conffiles"], text=True, capture_output=True,
                               check=True).stdout.split()
    for asset in contents.ASSETS[name]:
        info, data = members[asset.dest]
        assert info.isfile() and (info.uname, info.gname) == ("root", "root"), asset.dest
        assert info.mode == asset.mode == 0o644, asset.dest
        assert data == (build.REPO / asset.source).read_bytes(), asset.dest
        assert (asset.dest in conffiles) == asset.conffile, asset.dest
        assert asset.conffile == asset.dest.startswith("/etc/"), asset.dest     # all of /etc and only it
    for unit in contents.UNITS[name]:
        assert f"{contents.UNIT_DIR}/{unit}" in members, unit


def test_every_unit_and_rule_of_the_repository_is_in_a_package() -> None:
    shipped = {asset.source for assets in contents.ASSETS.values() for asset in assets}
    repo = build.REPO / "deploy"
    expected = {str(p.relative_to(build.REPO)) for p in [*repo.glob("cabinet/systemd/*"), *repo.glob("host/*.service"),
                                                         *repo.glob("host/*.target"), *repo.glob("update/*"),
                                                         *repo.glob("cabinet/udev/*"), *repo.glob("host/*.example")]}
    assert expected - shipped == set()


def test_relations_let_a_minimal_root_install_and_name_the_cabinet_services(terminal_deb: Path,
                                                                            host_deb: Path) -> None:
    assert set(_field(terminal_deb, "Depends")) == {"python3", "libc6", "passwd", "init-system-helpers"}
    assert {"cage", "seatd", "rauc", "rauc-service", "xwayland"} <= set(_field(terminal_deb, "Recommends"))
    assert {"nats-server", "postgresql"} <= set(_field(host_deb, "Recommends"))
    for deb, units in ((terminal_deb, contents.TERMINAL_UNITS), (host_deb, contents.HOST_UNITS)):
        scripts = {name: subprocess.run(["dpkg-deb", "-I", str(deb), name], text=True, capture_output=True,
                                        check=True).stdout for name in ("postinst", "prerm", "postrm")}
        assert f"for unit in {' '.join(units)}; do" in scripts["postinst"]
        assert "deb-systemd-helper update-state" in scripts["postinst"]
        assert "deb-systemd-helper debian-installed" in scripts["postinst"]  # enable only what was enabled
        assert "if [ -d /run/systemd/system ]; then" in scripts["postinst"]  # no systemctl in a chroot
        assert "deb-systemd-invoke stop" in scripts["prerm"] and "deb-systemd-helper purge" in scripts["postrm"]
        assert "rm " not in scripts["postrm"]                                # critical memory stays
        assert not any("@" + word in text for text in scripts.values() for word in ("UNITS", "RUNNING", "TMPFILES"))


@pytest.mark.parametrize("name", ["egm-terminal", "egm-host"])
def test_every_program_a_unit_runs_is_installed(name: str, terminal_deb: Path, host_deb: Path) -> None:
    deb = terminal_deb if name == "egm-terminal" else host_deb
    assert missing_executables(deb) == []
    programs = {p for path, (_, data) in _members(deb).items() if path.endswith(".service")
                for p in unit_executables(data.decode())}
    assert {"egm-terminal": "/usr/bin/egm", "egm-host": "/opt/egm/host/bin/egm"}[name] in programs


def test_a_unit_naming_a_missing_program_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unit = tmp_path / "broken.service"
    unit.write_text("[Service]\nExecStartPre=-/usr/bin/egm selftest\n"
                    "ExecStart=/opt/egm/terminal/bin/egm-missing run \\\n    --x\nExecReload=/usr/sbin/nats-server\n")
    extra = contents.Asset(str(unit), f"{contents.UNIT_DIR}/broken.service")
    monkeypatch.setitem(contents.ASSETS, "egm-terminal", (*contents.TERMINAL_ASSETS, extra))
    problems = missing_executables(_build(tmp_path, "terminal"))
    assert len(problems) == 2, problems
    assert "/opt/egm/terminal/bin/egm-missing" in problems[0]
    assert "/usr/sbin/nats-server" in problems[1] and "(nats-server)" in problems[1]   # not a terminal relation


def test_a_missing_deploy_file_stops_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = contents.Asset("deploy/cabinet/systemd/egm-gone.service", f"{contents.UNIT_DIR}/egm-gone.service")
    monkeypatch.setitem(contents.ASSETS, "egm-terminal", (*contents.TERMINAL_ASSETS, gone))
    with pytest.raises(build.ReleaseError, match="egm-gone.service is missing"):
        _build(tmp_path, "terminal")
