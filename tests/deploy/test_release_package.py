"""The Debian packaging of ``make release`` on a small staged tree (default suite, seconds).

The real build (a full virtual environment, minutes) and its installation are
``tests/deploy/test_release.py`` (marker ``release``); this checks the packaging steps themselves:
control files, conffiles, maintainer script, modes, the detached signature and the refusals.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from deploy.release import build
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


@pytest.fixture(scope="module")
def terminal_deb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("pkg")
    spec = build.PACKAGES["terminal"]
    stage = _stage(tmp, spec)
    build.debian_files(stage, spec, "0.1.0")
    return build.dpkg_build(stage, tmp, spec, "0.1.0")


def test_control_conffiles_and_maintainer_script(terminal_deb: Path) -> None:
    assert terminal_deb.name == "egm-terminal_0.1.0_amd64.deb"
    fields = subprocess.run(["dpkg-deb", "-f", str(terminal_deb)], text=True, capture_output=True, check=True).stdout
    assert "Package: egm-terminal\n" in fields and "Architecture: amd64\n" in fields
    assert "Depends: python3 (>= 3.11~), python3 (<< 3.12), libc6 (>= 2.28), passwd\n" in fields
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


def test_lintian_finds_no_error(terminal_deb: Path) -> None:
    lintian = build.shutil.which("lintian")
    if lintian is None:
        pytest.skip("lintian is not installed (make release-tools)")
    result = subprocess.run([lintian, "--fail-on", "error", str(terminal_deb)], text=True, capture_output=True)
    assert result.returncode == 0, result.stdout


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
