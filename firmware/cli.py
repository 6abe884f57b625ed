"""The ``egm`` command.

Each subcommand lives in its own module under ``firmware.commands`` and exposes
``register(subparsers)``; heavy imports happen inside the command functions so that ``egm --help``
and small commands start quickly. Contract (CONTRACTS.md): JSON on stdout, one document per command;
a failure prints one clear line on stderr and exits non-zero, never a traceback for bad input.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from firmware import __version__
from firmware.errors import EgmError

#: Subcommand modules, in the order ``egm --help`` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "firmware.commands.run",
    "firmware.commands.play",
    "firmware.commands.par",
    "firmware.commands.diagram",
    "firmware.commands.ledger",
    "firmware.commands.rng",
    "firmware.commands.config",
    "firmware.commands.sim",
    "firmware.commands.simctl",
    "firmware.commands.software",
    "firmware.commands.certs",
    "firmware.commands.update",
    "firmware.commands.release",
    "firmware.commands.host",
    "firmware.commands.table",
    "firmware.commands.package",
    "firmware.commands.screenshot",
    "firmware.commands.hil",
)

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (and exit status 2)."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="egm",
        description="Casino player terminal: games, certified RNG, devices, critical memory, host link.",
    )
    parser.add_argument("--version", action="version", version=f"egm {__version__}")
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="logging level for messages on stderr (default WARNING)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        result = args.func(args)
    except EgmError as exc:
        print(f"egm {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # `egm rng dump | head -c 10`: the reader went away; that is not an error of ours.
        # Point stdout at /dev/null so the interpreter's final flush does not complain again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"egm {args.command}: interrupted", file=sys.stderr)
        return 130
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
