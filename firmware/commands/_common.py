"""Helpers shared by the subcommands: JSON output, option parsing, the default state directory and
the ``--state-dir`` check."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from firmware.config.schema import Config


def load_terminal_config(path: str | Path | None) -> Config:
    """The configuration at ``path`` (None: the built-in one) with every ``[games.options.<game>]``
    table checked by its game: the configuration sits below the games, so they meet here, in the
    composition root (docs/architecture.md)."""
    from firmware.config import load_config
    from firmware.games.registry import validate_options

    return load_config(path, check_options=validate_options)


def password_from_env(variable: str | None) -> bytes | None:
    """The passphrase of ``--password-env VAR`` (None without the option); an unset VAR is an error."""
    from firmware.errors import UsageError

    if not variable:
        return None
    value = os.environ.get(variable)
    if value is None:
        raise UsageError(f"--password-env: the environment variable {variable} is not set")
    return value.encode("utf-8")


def emit_json(document: object) -> None:
    """Write one JSON document to stdout (CONTRACTS.md: one document per command)."""
    json.dump(document, sys.stdout, indent=None, separators=(", ", ": "))
    sys.stdout.write("\n")
    sys.stdout.flush()


def _whole_number(text: str, least: int) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"expected a number of at least {least}, not {value}")
    return value


def positive_int(text: str) -> int:
    return _whole_number(text, 1)


def non_negative_int(text: str) -> int:
    return _whole_number(text, 0)


def json_argument(p: argparse.ArgumentParser) -> None:
    """The ``--json`` flag of a command that prints text for people by default."""
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (for machines) instead of text for people")


def read_limited(path: str, what: str, limit: int) -> bytes:
    """The bytes of ``path``; a missing or unreadable file, or one over ``limit`` bytes, is one clear
    :class:`UsageError` naming it as ``what``."""
    from firmware.errors import UsageError

    try:
        if Path(path).stat().st_size > limit:
            raise UsageError(f"{what} {path} is larger than {limit} bytes")
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def plain_text(rst: str) -> str:
    """A docstring written in reStructuredText as ``--help`` shows it: no ````literal```` quotes,
    a ``::`` that opens a literal block as a plain colon."""
    import re

    return re.sub(r"::$", ":", rst.replace("``", ""), flags=re.MULTILINE)


def game_id(text: str) -> str:
    """An argparse type: a game id of the registry (with ``choices``, ``--help`` lists them)."""
    import argparse

    from firmware.games.registry import GAMES

    if text not in GAMES:
        raise argparse.ArgumentTypeError(f"unknown game {text!r}; games are {', '.join(GAMES)}")
    return text


def game_ids() -> tuple[str, ...]:
    """Every game id, in the registry's order (the ``choices`` of a GAME argument)."""
    from firmware.games.registry import GAMES

    return tuple(GAMES)


def default_state_dir(terminal_id: str | None = None) -> Path:
    """Where ``egm run`` keeps critical memory when no ``--state-dir`` is given, and so where
    ``meters``, ``recall``, ``events``, ``ledger`` and ``simctl`` look for it: the platform's data
    directory for egm (``$XDG_DATA_HOME/egm`` on Linux), then the terminal id (``terminal_id``,
    else the default configuration's)."""
    import platformdirs

    if terminal_id is None:
        from firmware.config.schema import TerminalSection

        terminal_id = TerminalSection().id
    return Path(platformdirs.user_data_dir("egm")) / terminal_id


def state_dir_argument(p: argparse.ArgumentParser, help: str = "the terminal's state directory (critical memory)") -> None:
    """``--state-dir DIR``, by default :func:`default_state_dir` (as ``egm run``)."""
    import platformdirs

    p.add_argument("--state-dir", default=None, metavar="DIR",
                   help=f"{help}; default egm run's: {platformdirs.user_data_dir('egm')}/TERMINAL-ID")


def chosen_state_dir(args: argparse.Namespace) -> Path:
    """The ``--state-dir`` given, else :func:`default_state_dir`."""
    return Path(args.state_dir) if args.state_dir else default_state_dir()
def checked_state_dir(text: str | os.PathLike[str], *, write: bool = False, create: bool = False) -> Path:
    """``--state-dir``, checked before the command does anything else; one clear :class:`UsageError`
    otherwise, and nothing made or changed.

    Read (the default): an existing directory that can be listed ("nothing found at DIR" when there
    is none; a reading command never makes one). ``write``: the same, and writable. ``create``: an
    existing writable directory, or one that can be made (the command makes it; this check does not).
    """
    from firmware.errors import UsageError

    path = Path(text)
    if _exists(path):
        if not path.is_dir():
            raise UsageError(f"--state-dir {path} is not a directory")
        if not os.access(path, os.R_OK | os.X_OK):
            raise UsageError(f"--state-dir {path} cannot be read (permission denied)")
        if (write or create) and not os.access(path, os.W_OK):
            raise UsageError(f"--state-dir {path} is not writable (permission denied)")
        return path
    if not create:
        raise UsageError(f"nothing found at {path} (no such directory)")
    parent = path.absolute().parent
    while not _exists(parent):
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"--state-dir {path} cannot be made: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--state-dir {path} cannot be made in {parent} (permission denied)")
    return path


def _exists(path: Path) -> bool:
    """Whether ``path`` names something; a directory on the way that cannot be searched is one
    clear :class:`UsageError` (``Path.exists`` would raise ``PermissionError``)."""
    from firmware.errors import UsageError

    try:
        path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise UsageError(f"--state-dir {path} cannot be read ({exc.strerror or exc})") from None
    return True


def mechanism_option(p: argparse.ArgumentParser) -> None:
    """``--mechanism M``: the RNG's DRBG mechanism (``firmware.rng.mechanisms``), default hmac-drbg."""
    from firmware.rng.mechanisms import DEFAULT_MECHANISM, MECHANISMS

    p.add_argument("--mechanism", choices=list(MECHANISMS), default=DEFAULT_MECHANISM, metavar="M",
                   help=f"the DRBG: {' or '.join(MECHANISMS)} (default {DEFAULT_MECHANISM})")
