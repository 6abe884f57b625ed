"""``make release``: the signed Debian packages ``egm-terminal`` and ``egm-host`` (docs/release.md).

Run from the repository root: ``python -m deploy.release.build [--signer CERT --ca CA] [--out dist]``.

For each package: a virtual environment made with Debian's ``/usr/bin/python3`` in a staging root at
the path it will have when installed (``STAGE/opt/egm/<name>``), the product's wheel and its
dependencies installed into it from a wheelhouse (PyPI is used here, at build time only), the
staging prefix taken out of the scripts, the bytecode compiled for the final paths, the software
manifest of the installed site-packages signed by the code signer, the Debian control files added,
and ``dpkg-deb --build``. Each ``.deb`` then gets a detached signature (``egm release sign``) and
``SHA256SUMS`` lists every output.

Without ``--signer``/``--ca`` a throwaway development PKI is made in ``OUT/dev-pki`` and the output
says loudly that the packages are development-signed.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

from deploy.release import contents

log = logging.getLogger("egm.release")

REPO = Path(__file__).resolve().parents[2]
SOURCES = Path(__file__).resolve().parent / "debian"
TARGET_PYTHON = Path("/usr/bin/python3")
PYTHON_TAG = "python3.11"
DEFAULT_CACHE = Path(os.environ.get("EGM_RELEASE_CACHE", "/var/cache/egm-release"))
DEV_WARNING = ("*** DEVELOPMENT-SIGNED: these packages are signed by a throwaway CA made in {dir}; "
               "never install them on a casino floor (make release SIGNER=... CA=...) ***")


class ReleaseError(Exception):
    """The build cannot go on (one line: what is missing or what failed)."""


@dataclass(frozen=True)
class PackageSpec:
    name: str          # the Debian package
    prefix: str        # the virtual environment's final path
    requirement: str   # what pip installs into it
    link: str          # /usr/bin name of the egm script
    config: str        # the conffile under /etc/egm
    description: str


PACKAGES: dict[str, PackageSpec] = {
    "terminal": PackageSpec(
        "egm-terminal", "/opt/egm/terminal", "egm-terminal", "egm", "terminal.toml",
        "casino player terminal (EGM): games on a certified RNG kernel"),
    "host": PackageSpec(
        "egm-host", "/opt/egm/host", "egm-terminal[postgres]", "egm-host", "host.toml",
        "casino host of the EGM terminals: store, runner, floor page"),
}


@dataclass(frozen=True)
class Signer:
    cert: Path
    key: Path
    ca: Path
    crl: Path | None
    development: bool


# --------------------------------------------------------------------------------------------------
# tools


def require_tool(name: str, hint: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ReleaseError(f"{name} is missing: {hint}")
    return path


def clean_env() -> dict[str, str]:
    """The environment for the staged interpreter: no PYTHONPATH/PYTHONHOME (a checkout on the path
    would satisfy the product's requirement and be left out of the package), no bytecode written."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return env | {"PYTHONDONTWRITEBYTECODE": "1"}


def run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    log.debug("running %s", " ".join(map(str, cmd)))
    kwargs.setdefault("env", clean_env())
    result = subprocess.run(cmd, text=True, capture_output=True, **kwargs)  # type: ignore[call-overload]
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-5:]
        raise ReleaseError(f"{Path(cmd[0]).name} {' '.join(map(str, cmd[1:3]))} ... failed "
                           f"(exit {result.returncode}): " + " | ".join(tail))
    return result  # type: ignore[no-any-return]


def check_tools() -> None:
    require_tool("dpkg-deb", "apt-get install dpkg")
    if not TARGET_PYTHON.exists():
        raise ReleaseError(f"{TARGET_PYTHON} is missing: the packages are built against Debian's python3 "
                           "(apt-get install python3 python3-venv)")
    probe = subprocess.run([str(TARGET_PYTHON), "-c", "import ensurepip, venv"], capture_output=True)
    if probe.returncode != 0:
        raise ReleaseError(f"{TARGET_PYTHON} cannot make virtual environments: apt-get install python3-venv")


def project_version() -> str:
    with open(REPO / "pyproject.toml", "rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


# --------------------------------------------------------------------------------------------------
# signer


def development_signer(out: Path) -> Signer:
    """A throwaway CA and code signer in OUT/dev-pki (made once; dist/ is not tracked by git)."""
    from egmproto.pki import ca_files, create_ca, issue

    directory = out / "dev-pki"
    files = ca_files(directory)
    cert = directory / "issued" / "release-dev-signer.cert.pem"
    key = directory / "issued" / "release-dev-signer.key.pem"
    if not files.cert.exists():
        create_ca(directory, name="Development Release CA", allow_in_repo=True)
    if not cert.exists():
        issued = issue(directory, "code-signer", "release-dev-signer", allow_in_repo=True)
        cert, key = issued.cert, issued.key
    log.warning(DEV_WARNING.format(dir=directory))
    return Signer(cert=cert, key=key, ca=files.cert, crl=files.crl if files.crl.exists() else None,
                  development=True)


def given_signer(cert: str, key: str | None, ca: str, crl: str | None) -> Signer:
    cert_path = Path(cert)
    key_path = Path(key) if key else cert_path.with_name(cert_path.name.replace(".cert.pem", ".key.pem"))
    for what, path in (("SIGNER certificate", cert_path), ("SIGNER key", key_path), ("CA", Path(ca))):
        if not path.is_file():
            raise ReleaseError(f"the {what} {path} is not a file")
    if key_path == cert_path:
        raise ReleaseError("give the signer's key (SIGNER_KEY=...): its certificate is not named *.cert.pem")
    from egmproto.pki import verify_chain

    verify_chain(cert_path, ca, crl, expect="code-signer")
    return Signer(cert=cert_path, key=key_path, ca=Path(ca), crl=Path(crl) if crl else None, development=False)


# --------------------------------------------------------------------------------------------------
# the virtual environment


def build_wheel(work: Path) -> Path:
    """The product's wheel from this checkout (setuptools' stale build/lib removed first)."""
    shutil.rmtree(REPO / "build", ignore_errors=True)
    dest = work / "wheel"
    shutil.rmtree(dest, ignore_errors=True)
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(dest), str(REPO)])
    shutil.rmtree(REPO / "build", ignore_errors=True)
    wheels = sorted(dest.glob("egm_terminal-*.whl"))
    if len(wheels) != 1:
        raise ReleaseError(f"pip wheel made {len(wheels)} product wheels in {dest}")
    log.info("wheel %s", wheels[0].name)
    return wheels[0]


def pinned_requirement(spec: PackageSpec, version: str) -> str:
    """What pip installs: this checkout's version exactly (``egm-terminal[postgres]==0.1.0``)."""
    return f"{spec.requirement}=={version}"


def make_venv(stage: Path, spec: PackageSpec, wheel: Path, wheelhouse: Path) -> Path:
    """The virtual environment at STAGE/<prefix>, made by Debian's python, with the product installed."""
    venv = stage / spec.prefix.lstrip("/")
    run([str(TARGET_PYTHON), "-m", "venv", str(venv)])
    python = venv / "bin" / "python3"
    wheelhouse.mkdir(parents=True, exist_ok=True)
    shutil.copy2(wheel, wheelhouse / wheel.name)
    requirement = pinned_requirement(spec, project_version())
    install = [str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-compile", "--find-links",
               str(wheelhouse), requirement]
    try:
        run(install)
        log.info("%s: installed %s from the wheel cache %s", spec.name, requirement, wheelhouse)
    except ReleaseError:
        log.info("%s: fetching wheels into %s (build time only)", spec.name, wheelhouse)
        run([str(python), "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--dest",
             str(wheelhouse), "--find-links", str(wheelhouse), requirement])
        run(install)
        log.info("%s: installed %s", spec.name, requirement)
    # No installer at run time: the tree is read-only and changes only by a new package.
    run([str(python), "-m", "pip", "uninstall", "--quiet", "--yes", "pip", "setuptools"])
    return venv


def relocate(stage: Path, venv: Path) -> None:
    """Take the staging prefix out of the scripts and pyvenv.cfg; refuse a file that still has it."""
    old = str(stage).encode()
    for path in [*sorted((venv / "bin").iterdir()), venv / "pyvenv.cfg"]:
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if old in data:
            path.write_bytes(data.replace(old, b""))
    for path in venv.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.stat().st_size < 64 << 20 and old in path.read_bytes():
            raise ReleaseError(f"{path} still names the staging directory {stage}")


def compile_bytecode(stage: Path, venv: Path) -> None:
    """Bytecode for the final paths, never checked against the source (the tree is read-only; the
    signed manifest covers the source: docs/software-verification.md)."""
    run([str(venv / "bin" / "python3"), "-m", "compileall", "-q", "-j", "0", "-s", str(stage), "-p", "/",
         "--invalidation-mode", "unchecked-hash", str(venv / "lib")])


def site_packages(venv: Path) -> Path:
    return venv / "lib" / PYTHON_TAG / "site-packages"


def sign_manifest(spec: PackageSpec, venv: Path, signer: Signer) -> Path:
    """The software manifest of exactly the packaged site-packages, signed by the packaged ``egm``."""
    release = venv / "release"
    release.mkdir()
    python = str(venv / "bin" / "python3")
    manifest = release / "manifest.signed.json"
    run([python, "-m", "firmware.cli", "software", "sign", "--key", str(signer.key),
         "--root", str(site_packages(venv)), "--out", str(manifest)], cwd=str(venv))  # not the checkout: the packaged code
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert = x509.load_pem_x509_certificate(signer.cert.read_bytes())
    (release / "code-signer.pub.pem").write_bytes(cert.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    shutil.copyfile(signer.cert, release / "code-signer.cert.pem")
    shutil.copyfile(signer.ca, release / "ca.cert.pem")
    check = run([python, "-m", "firmware.cli", "software", "verify", "--root", str(site_packages(venv)),
                 "--manifest", str(manifest), "--trust", str(release / "code-signer.pub.pem")], cwd=str(venv))  # not the checkout: the packaged code
    log.info("%s: %s", spec.name, check.stdout.strip())
    return manifest


# --------------------------------------------------------------------------------------------------
# the Debian package


def _text(name: str, **values: str) -> str:
    text = (SOURCES / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("@" + key.upper() + "@", value)
    return text


def _installed_size_kib(stage: Path) -> int:
    total = 0
    for path in stage.rglob("*"):
        if path.is_symlink():
            total += 1
        elif path.is_file():
            total += (path.stat().st_size + 1023) // 1024
    return total


def install_assets(stage: Path, spec: PackageSpec) -> list[str]:
    """The package's deploy/ files (units, udev, drop-ins, examples) at their installed paths; the
    conffiles among them."""
    conffiles = []
    for asset in contents.ASSETS[spec.name]:
        source = REPO / asset.source
        if not source.is_file():
            raise ReleaseError(f"{asset.source} is missing: {spec.name} ships it as {asset.dest}")
        target = stage / asset.dest.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        target.chmod(asset.mode)
        if asset.conffile:
            conffiles.append(asset.dest)
    return conffiles


def maintainer_values(spec: PackageSpec) -> dict[str, str]:
    """The relations and the systemd part of the maintainer scripts (what debhelper would generate)."""
    relations = contents.RELATIONS[spec.name]
    units = contents.UNITS[spec.name]
    running = [unit.replace("@.", "@*.") for unit in units if not unit.endswith(".target")]
    tmpfiles = [asset.dest.rsplit("/", 1)[1] for asset in contents.ASSETS[spec.name]
                if asset.dest.startswith("/usr/lib/tmpfiles.d/")]
    snippet = "".join(
        f'if [ "$1" = configure ] && [ -x "$(command -v systemd-tmpfiles)" ]; then\n'
        f"    systemd-tmpfiles --create {name} || true\nfi\n" for name in tmpfiles)
    return {"depends": ", ".join(relations.depends), "recommends": ", ".join(relations.recommends),
            "units": " ".join(units), "running": " ".join(f"'{unit}'" for unit in running),
            "tmpfiles": snippet,
            "units_text": "\n ".join(textwrap.wrap(
                "Its systemd units, not enabled on install: " + ", ".join(units) + ".", 72, break_on_hyphens=False))}


def debian_files(stage: Path, spec: PackageSpec, version: str) -> None:
    values = {"package": spec.name, "version": version, "prefix": spec.prefix, "link": spec.link,
              "config": spec.config, "description": spec.description, **maintainer_values(spec)}
    conffiles = install_assets(stage, spec)
    (stage / "usr" / "bin").mkdir(parents=True, exist_ok=True)
    (stage / "usr" / "bin" / spec.link).symlink_to(f"{spec.prefix}/bin/egm")
    etc = stage / "etc" / "egm"
    etc.mkdir(parents=True, exist_ok=True)
    (etc / spec.config).write_text(_text(spec.config, **values), encoding="utf-8")
    doc = stage / "usr" / "share" / "doc" / spec.name
    doc.mkdir(parents=True, exist_ok=True)
    (doc / "copyright").write_text(_text("copyright", **values), encoding="utf-8")
    changelog = _text("changelog", **values).encode()
    # A native package (the version has no Debian revision): changelog.gz.
    (doc / "changelog.gz").write_bytes(gzip.compress(changelog, 9, mtime=0))
    overrides = stage / "usr" / "share" / "lintian" / "overrides"
    overrides.mkdir(parents=True)
    (overrides / spec.name).write_text(_text("lintian-overrides", **values), encoding="utf-8")

    control = stage / "DEBIAN"
    control.mkdir()
    (control / "control").write_text(
        _text("control", **values, installed_size=str(_installed_size_kib(stage))), encoding="utf-8")
    (control / "conffiles").write_text("".join(f"{path}\n" for path in [f"/etc/egm/{spec.config}", *conffiles]),
                                       encoding="utf-8")
    for script in ("postinst", "prerm", "postrm"):
        (control / script).write_text(_text(script, **values), encoding="utf-8")
        (control / script).chmod(0o755)
    sums = []
    for path in sorted(stage.rglob("*")):
        if path.is_file() and not path.is_symlink() and control not in path.parents:
            digest = hashlib.md5(path.read_bytes(), usedforsecurity=False).hexdigest()
            sums.append(f"{digest}  {path.relative_to(stage)}\n")
    (control / "md5sums").write_text("".join(sums), encoding="utf-8")
    for path in [stage, *stage.rglob("*")]:
        if not path.is_symlink():
            mode = path.stat().st_mode & 0o7777 & ~0o022         # no group/world write (lintian)
            if path.is_file() and ".so" in path.suffixes:
                mode &= ~0o111                                   # libraries are loaded, not run
            path.chmod(mode)


def dpkg_build(stage: Path, out: Path, spec: PackageSpec, version: str) -> Path:
    deb = out / f"{spec.name}_{version}_amd64.deb"
    run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z6", "--build", str(stage), str(deb)])
    log.info("%s: %s (%d MB)", spec.name, deb, deb.stat().st_size >> 20)
    return deb


def sign_deb(deb: Path, signer: Signer) -> Path:
    from egmproto.release_signature import sign_file, write_signature
    from firmware.cabinet.software import load_private_key

    password = os.environ.get("EGM_SIGNING_PW")
    key = load_private_key(signer.key, password.encode() if password else None)
    sig = deb.with_name(deb.name + ".sig")
    write_signature(sig, sign_file(deb, key, signer.cert.read_bytes()))
    return sig


def checksums(out: Path, files: list[Path]) -> Path:
    lines = []
    for path in files:
        lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}\n")
    target = out / "SHA256SUMS"
    target.write_text("".join(lines), encoding="utf-8")
    return target


# --------------------------------------------------------------------------------------------------


def build(out: Path, signer: Signer, cache: Path, names: list[str]) -> list[Path]:
    check_tools()
    version = project_version()
    out.mkdir(parents=True, exist_ok=True)
    work = out / "build"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    wheel = build_wheel(work)
    wheelhouse = cache / "wheels"
    produced: list[Path] = []
    for name in names:
        spec = PACKAGES[name]
        stage = work / spec.name
        stage.mkdir()
        venv = make_venv(stage, spec, wheel, wheelhouse)
        relocate(stage, venv)
        compile_bytecode(stage, venv)
        sign_manifest(spec, venv, signer)
        debian_files(stage, spec, version)
        deb = dpkg_build(stage, out, spec, version)
        produced += [deb, sign_deb(deb, signer)]
    shutil.copyfile(signer.ca, out / "ca.cert.pem")
    produced.append(out / "ca.cert.pem")
    produced.append(checksums(out, produced))
    shutil.rmtree(work, ignore_errors=True)
    return produced


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make release", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "dist"), help="output directory (default dist/)")
    parser.add_argument("--signer", default=os.environ.get("SIGNER") or None,
                        help="the code signer's certificate (egm certs issue --kind code-signer; env SIGNER)")
    parser.add_argument("--signer-key", default=os.environ.get("SIGNER_KEY") or None,
                        help="its private key (default: the certificate's NAME.key.pem; env SIGNER_KEY; "
                             "passphrase in EGM_SIGNING_PW)")
    parser.add_argument("--ca", default=os.environ.get("CA") or None, help="the casino CA's certificate (env CA)")
    parser.add_argument("--crl", default=os.environ.get("CRL") or None, help="the CA's CRL (env CRL)")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help=f"wheel cache (default {DEFAULT_CACHE})")
    parser.add_argument("--package", action="append", choices=sorted(PACKAGES),
                        help="build only this package (repeatable; default both)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    out = Path(args.out).resolve()
    try:
        if bool(args.signer) != bool(args.ca):
            raise ReleaseError("give both SIGNER (the code signer's certificate) and CA, or neither "
                               "(a development-signed build)")
        signer = (given_signer(args.signer, args.signer_key, args.ca, args.crl) if args.signer
                  else development_signer(out))
        produced = build(out, signer, Path(args.cache), args.package or ["terminal", "host"])
    except ReleaseError as exc:
        print(f"make release: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a PKI or signing refusal: one line
        from firmware.errors import EgmError

        if isinstance(exc, EgmError):
            print(f"make release: error: {exc}", file=sys.stderr)
            return 2
        raise
    for path in produced:
        print(path)
    if signer.development:
        print(DEV_WARNING.format(dir=out / "dev-pki"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
