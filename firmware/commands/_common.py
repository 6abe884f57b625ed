"""Helpers shared by the subcommands: JSON output and option parsing."""

from __future__ import annotations

import json
import sys
from typing import Any


def emit_json(document: Any) -> None:
    """Write one JSON document to stdout (CONTRACTS.md: one document per command)."""
    json.dump(document, sys.stdout, indent=None, separators=(", ", ": "))
    sys.stdout.write("\n")
    sys.stdout.flush()


def positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, not {value}")
    return value


def non_negative_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of at least 0, not {value}")
    return value


def read_limited(path: str, what: str, limit: int) -> bytes:
    """The bytes of ``path``; a missing or unreadable file, or one over ``limit`` bytes, is one clear
    :class:`UsageError` naming it as ``what``."""
    from pathlib import Path

    from firmware.errors import UsageError

    try:
        if Path(path).stat().st_size > limit:
            raise UsageError(f"{what} {path} is larger than {limit} bytes")
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
