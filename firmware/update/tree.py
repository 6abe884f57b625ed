"""The application tree a bundle carries: packed as a tar, unpacked into a slot with care.

Only regular files, directories and symbolic links that stay inside the tree are unpacked (Debian
bookworm's Python 3.11.2 has no ``tarfile`` extraction filters, so the members are checked here);
owners are not kept and modes lose set-id bits.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path, PurePosixPath

from firmware.update.errors import UpdateError, UpdateRefused


def pack(tree: Path, out: Path) -> None:
    """Write ``tree``'s contents to the tar ``out`` (sorted, owners zeroed: the same tree gives the
    same bytes apart from the times)."""
    tree = Path(tree)
    if not tree.is_dir():
        raise UpdateError(f"--tree {tree} is not a directory")

    def clean(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(tree.rglob("*")):
            if "__pycache__" in path.parts:
                continue
            tar.add(path, arcname=path.relative_to(tree).as_posix(), recursive=False, filter=clean)


def _inside(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and not PurePosixPath(name).is_absolute() and ".." not in parts


def unpack(archive: Path, dest: Path) -> None:
    """Unpack the tar ``archive`` into the empty directory ``dest``; refuse a hostile member."""
    try:
        with tarfile.open(archive, "r:") as tar:
            members = tar.getmembers()
            for m in members:
                if not _inside(m.name):
                    raise UpdateRefused("bad-payload", f"the payload holds an unsafe path {m.name[:80]!r}")
                if m.issym():
                    target = PurePosixPath(m.name).parent / m.linkname
                    if PurePosixPath(m.linkname).is_absolute() or not _inside(os.path.normpath(target)):
                        raise UpdateRefused("bad-payload", f"the payload's link {m.name[:80]!r} points outside")
                elif not (m.isfile() or m.isdir()):
                    raise UpdateRefused("bad-payload", f"the payload's {m.name[:80]!r} is not a file, "
                                                       "directory or link")
                m.mode &= 0o777
                m.uid = m.gid = os.getuid()
            dest.mkdir(parents=True, exist_ok=True)
            for m in members:
                tar.extract(m, dest, set_attrs=not m.issym())
    except (tarfile.TarError, OSError) as exc:
        raise UpdateRefused("bad-payload", f"the payload cannot be unpacked: {exc}") from None


def clear(directory: Path) -> None:
    """Empty ``directory`` (made if missing)."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)


def copy_tree(src: Path, dest: Path) -> None:
    clear(dest)
    shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
