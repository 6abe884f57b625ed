"""Game packages on the terminal: download what the host offers, verify it, hold it for approval.

The life of a package (docs/packages.md):

1. **offered**: the host's signed ``package_offer`` (name, version, URL, SHA-256) is recorded
   (``package.offered``) and the download starts on a worker thread; the terminal keeps playing.
2. **downloaded**: the bytes must have the offered SHA-256, and the package must verify
   (:mod:`egmproto.package_format`: the code signer's certificate chains to the casino CA, is
   not revoked, signs the manifest, and every file matches it) and carry options the firmware
   accepts. It then waits in ``<state>/packages/pending/`` and in critical memory (the setting
   ``packages.pending``) for a technician: ``package.pending``. Anything else is deleted and logged
   as ``package.rejected`` with the reason code, which the host receives as an event.
3. **approved** (service menu ``package approve NAME``): the file is verified *again* (it sat on a
   disk), the options pass the same jurisdiction check as ``config set``, the files are copied to
   ``<state>/packages/installed/NAME/VERSION/``, the options are stored and used from the next
   round, and ``package.installed`` is recorded. Or **declined** (``package reject NAME``).

Every step is an event in critical memory before it shows, so the host hears of each one.
Ledger writes happen on the terminal's thread only: the download thread hands its result to
:meth:`PackageManager.poll`, which the host link calls from the terminal's loop.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import shutil
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography import x509

from egmproto import package_format as pf
from firmware.errors import EgmError

log = logging.getLogger("egm.packages")

SETTING_PENDING = "packages.pending"
SETTING_INSTALLED = "packages.installed"
MAX_DOWNLOADS = 4                  #: offers being downloaded at once; more are refused
DOWNLOAD_TIMEOUT_S = 60.0

#: ``fetch(url, destination, max_bytes)`` writes the bytes at ``url`` to ``destination``, or raises.
Fetch = Callable[[str, Path, int], None]



def accept_game_options(game: str, table: Mapping[str, Any]) -> None:
    """One table of a package's ``options.toml`` accepted by its game in this firmware (a known id,
    known options, valid values), or an :class:`EgmError` saying why not (``Package.checked_options``)."""
    from firmware.games.errors import GameError
    from firmware.games.registry import available, make_options

    if game not in set(available()):
        raise GameError(f"no game {game!r} in this firmware")
    make_options(game, table, prefix=game)

class PackageError(EgmError):
    """A package request that cannot be done (no such pending package, ...)."""


def https_fetch(ca: Path, cert: Path | None = None, key: Path | None = None, *,
                timeout_s: float = DOWNLOAD_TIMEOUT_S) -> Fetch:
    """Downloads over HTTPS only: the server verified against the casino CA (and its name), the
    terminal's certificate presented when given, at most ``max_bytes`` read."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_verify_locations(cafile=str(ca))
    if cert is not None and key is not None:
        ctx.load_cert_chain(str(cert), str(key))

    def fetch(url: str, destination: Path, max_bytes: int) -> None:
        if not url.startswith("https://"):
            raise ValueError(f"only https:// downloads are allowed, not {url.split(':', 1)[0]}")
        request = urllib.request.Request(url, headers={"User-Agent": "egm-terminal"})
        with urllib.request.urlopen(request, context=ctx, timeout=timeout_s) as response, \
                open(destination, "wb") as out:
            total = 0
            while chunk := response.read(65536):
                total += len(chunk)
                if total > max_bytes:
                    raise ValueError(f"more than {max_bytes} bytes")
                out.write(chunk)
    return fetch


@dataclass
class _Download:
    name: str
    version: str
    sha256: str
    url: str
    seq: int
    path: Path
    error: str | None = None


class PackageManager:
    """The terminal's packages: offers, downloads, the pending list, installs (see module doc)."""

    def __init__(self, ledger: Any, check_signer: Callable[[x509.Certificate], None], directory: Path, *,
                 fetch: Fetch | None = None, games: Callable[[], list[str]] | None = None,
                 wake: Callable[[], None] = lambda: None,
                 wall: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.ledger = ledger
        self.check_signer = check_signer
        self.dir = Path(directory)
        self.fetch = fetch
        self.games = games
        self._wall = wall
        self._done: queue.Queue[_Download] = queue.Queue()
        self._busy: dict[str, _Download] = {}
        self.wake = wake                         #: the terminal's: a download finished
        for sub in ("incoming", "pending", "installed"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self._reconcile()

    # --- critical memory -------------------------------------------------------------------------
    def pending(self) -> dict[str, dict[str, Any]]:
        """name -> the pending package's summary (waiting for a technician)."""
        return dict((self.ledger.setting(SETTING_PENDING) or {}).get("packages", {}))

    def installed(self) -> dict[str, dict[str, Any]]:
        """name -> the installed package's summary and when it was installed."""
        return dict((self.ledger.setting(SETTING_INSTALLED) or {}).get("packages", {}))

    def status(self) -> dict[str, Any]:
        return {"pending": self.pending(), "installed": self.installed(),
                "downloading": sorted(f"{d.name} {d.version}" for d in self._busy.values())}

    def _set_pending(self, packages: dict[str, dict[str, Any]]) -> None:
        self.ledger.store_setting(SETTING_PENDING, {"packages": packages})

    def _pending_file(self, sha256: str) -> Path:
        return self.dir / "pending" / f"{sha256}{pf.SUFFIX}"

    def _reconcile(self) -> None:
        """At start: a pending package whose file is gone is dropped (logged); stray files removed."""
        pending = self.pending()
        for name, summary in list(pending.items()):
            if not self._pending_file(summary["sha256"]).is_file():
                del pending[name]
                self._rejected(name, summary["version"], summary["sha256"], "file_mismatch",
                               "the pending package's file is gone")
        if pending != self.pending():
            self._set_pending(pending)
        keep = {self._pending_file(s["sha256"]).name for s in pending.values()}
        for stray in list((self.dir / "pending").iterdir()) + list((self.dir / "incoming").iterdir()):
            if stray.name not in keep:
                with contextlib.suppress(OSError):
                    stray.unlink()

    # --- offers and downloads ----------------------------------------------------------------------
    def offer(self, body: dict[str, Any], seq: int) -> None:
        """The host offers a package (a checked ``package_offer`` body): record it, download it."""
        name, version, sha, url = body["name"], body["version"], body["sha256"], body["url"]
        self.ledger.event("package.offered", seq=seq, package=name, version=version, sha256=sha, url=url)
        why = None
        try:
            pf.check_name(name)
            pf.check_version(version)
        except pf.PackageRejected as exc:
            why = ("malformed", exc.detail)
        else:
            installed = self.installed().get(name, {})
            if installed.get("sha256") == sha:
                why = ("duplicate", "already installed")
            elif installed and not pf.is_newer(version, installed["version"]):
                why = ("downgrade", f"version {version} is not newer than the installed {installed['version']}")
            elif self.pending().get(name, {}).get("sha256") == sha or sha in self._busy:
                why = ("duplicate", "already pending")
            elif self.fetch is None:
                why = ("download_failed", "this terminal has no download channel")
            elif len(self._busy) >= MAX_DOWNLOADS:
                why = ("download_failed", f"{MAX_DOWNLOADS} downloads already running")
        if why is not None:
            if why[0] == "duplicate":
                self.ledger.event("package.ignored", package=name, version=version, sha256=sha, detail=why[1])
            else:
                self._rejected(name, version, sha, *why)
            return
        job = _Download(name, version, sha, url, seq, self.dir / "incoming" / f"{sha}.part")
        self._busy[sha] = job
        threading.Thread(target=self._download, args=(job,), name=f"egm-package-{name}", daemon=True).start()

    def _download(self, job: _Download) -> None:
        try:
            assert self.fetch is not None
            self.fetch(job.url, job.path, pf.MAX_PACKAGE_BYTES)
        except Exception as exc:              # any failure of the channel is this download's failure
            job.error = f"{type(exc).__name__}: {exc}"[:300]
        self._done.put(job)
        self.wake()

    def poll(self) -> None:
        """Finished downloads: verify, then pending or rejected (on the terminal's thread)."""
        while True:
            try:
                job = self._done.get_nowait()
            except queue.Empty:
                return
            self._busy.pop(job.sha256, None)
            try:
                self._accept(job)
            finally:
                with contextlib.suppress(OSError):
                    job.path.unlink()

    def _accept(self, job: _Download) -> None:
        try:
            if job.error is not None:
                raise pf.PackageRejected("download_failed", job.error)
            package = self._load(job.path, job.sha256, unreadable="download_failed")
            if (package.name, package.version) != (job.name, job.version):
                raise pf.PackageRejected("malformed", f"offered as {job.name} {job.version}, "
                                                      f"the package is {package.name} {package.version}")
        except pf.PackageRejected as exc:
            self._rejected(job.name, job.version, job.sha256, exc.reason, exc.detail)
            return
        target = self._pending_file(job.sha256)
        os.replace(job.path, target)
        pending = self.pending()
        replaced = pending.get(package.name)
        summary = {**package.summary(), "offered_seq": job.seq, "games": sorted(package.options())}
        pending[package.name] = summary
        self._set_pending(pending)
        self.ledger.event("package.pending", package=package.name, version=package.version,
                          sha256=package.sha256, signer=summary["signer"], games=summary["games"])
        if replaced is not None and replaced["sha256"] != package.sha256:
            with contextlib.suppress(OSError):
                self._pending_file(replaced["sha256"]).unlink()

    def _rejected(self, name: str, version: str, sha256: str, reason: str, detail: str) -> None:
        log.warning("package %s %s rejected: %s: %s", name, version, reason, detail)
        self.ledger.event("package.rejected", package=name, version=version, sha256=sha256,
                          reason=reason, detail=detail[:300])

    def _load(self, path: Path, sha256: str, *, unreadable: str) -> pf.Package:
        """The package in ``path``, verified, its games enabled here; a file that cannot be read
        is :class:`PackageRejected` with the reason ``unreadable``."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise pf.PackageRejected(unreadable, f"cannot read it: {exc.strerror or exc}") from None
        package = pf.load(data, self.check_signer, expected_sha256=sha256)
        installed = self.installed().get(package.name)
        if installed and installed["sha256"] != package.sha256 and not pf.is_newer(package.version,
                                                                                   installed["version"]):
            raise pf.PackageRejected("downgrade", f"version {package.version} is not newer than the installed "
                                                  f"{installed['version']}")
        options = package.checked_options(accept_game_options)
        if self.games is not None:
            unknown = sorted(set(options) - set(self.games()))
            if unknown:
                raise pf.PackageRejected("bad_content", f"games not enabled on this terminal: {', '.join(unknown)}")
        return package

    # --- the technician's decision -------------------------------------------------------------
    def _entry(self, name: str) -> dict[str, Any]:
        entry = self.pending().get(name)
        if entry is None:
            waiting = ", ".join(sorted(self.pending())) or "none"
            raise PackageError(f"no package {name!r} is waiting for approval (waiting: {waiting})")
        return entry

    def reverify(self, name: str) -> pf.Package:
        """The pending package ``name``, verified again from its file. A package that no longer
        verifies is dropped and logged (``package.rejected``) and :class:`PackageRejected` raised."""
        entry = self._entry(name)
        path = self._pending_file(entry["sha256"])
        try:
            return self._load(path, entry["sha256"], unreadable="file_mismatch")
        except pf.PackageRejected as exc:
            self._drop(name, entry)
            self._rejected(name, entry["version"], entry["sha256"], exc.reason, f"at approval: {exc.detail}")
            raise

    def _drop(self, name: str, entry: dict[str, Any]) -> None:
        pending = self.pending()
        pending.pop(name, None)
        self._set_pending(pending)
        with contextlib.suppress(OSError):
            self._pending_file(entry["sha256"]).unlink()

    def place(self, package: pf.Package) -> Path:
        """Copy the verified package's files to ``installed/NAME/VERSION/`` (atomically: staged, then
        renamed). Writes no record: the caller stores the options, then calls :meth:`record`."""
        final = self.dir / "installed" / package.name / package.version
        staging = final.with_name(f".{package.version}.staging")
        shutil.rmtree(staging, ignore_errors=True)
        for path, content in package.files.items():
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        if final.exists():
            shutil.rmtree(final)
        os.replace(staging, final)
        return final

    def record(self, package: pf.Package, *, role: str | None) -> dict[str, Any]:
        """Record ``package`` installed (critical memory) and take it off the pending list; its
        pending file stays until :meth:`forget_file`. The caller records this and the options in
        one ledger batch: a power loss leaves the package pending with nothing of it in force, or
        installed with all of it; approving a pending one again installs the same thing again."""
        self._entry(package.name)
        installed = self.installed()
        record = {**package.summary(), "games": sorted(package.options()),
                  "installed_at": self._wall().isoformat(), "by": role}
        installed[package.name] = record
        self.ledger.store_setting(SETTING_INSTALLED, {"packages": installed})
        self.ledger.event("package.installed", package=package.name, version=package.version,
                          sha256=package.sha256, games=record["games"], role=role)
        pending = self.pending()
        pending.pop(package.name, None)
        self._set_pending(pending)
        return record

    def forget_file(self, sha256: str) -> None:
        """Delete an installed package's pending file (after its record is durable)."""
        with contextlib.suppress(OSError):
            self._pending_file(sha256).unlink()

    def decline(self, name: str, *, role: str | None) -> dict[str, Any]:
        entry = self._entry(name)
        self._drop(name, entry)
        self.ledger.event("package.declined", package=name, version=entry["version"], sha256=entry["sha256"],
                          role=role)
        return entry

