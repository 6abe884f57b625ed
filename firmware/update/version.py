"""Software versions in PEP 440 order: an update must be strictly newer than what runs."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from firmware.update.errors import UpdateError, UpdateRefused


def parse(text: str) -> Version:
    """``text`` as a PEP 440 version; :class:`UpdateError` if it is not one."""
    try:
        return Version(text)
    except (InvalidVersion, TypeError):
        raise UpdateError(f"{text!r} is not a PEP 440 version") from None


def check_newer(offered: str, running: str | None) -> None:
    """Refuse ``offered`` unless it is strictly newer than ``running`` (None: nothing installed).

    There is no override: a downgrade or a reinstall of the same version is refused, so an old
    release with a known fault cannot be put back on a cabinet (docs/update.md).
    """
    new = parse(offered)
    if running is None:
        return
    old = parse(running)
    if new < old:
        raise UpdateRefused("downgrade", f"version {offered} is older than the installed {running}: "
                                         "a downgrade is refused")
    if new == old:
        raise UpdateRefused("same-version", f"version {offered} is already installed")
