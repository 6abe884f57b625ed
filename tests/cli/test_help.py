"""``egm ... --help``: every subcommand's options explained, the game ids listed wherever a game is
taken, and no raw reStructuredText (a module docstring shown as a description)."""

from __future__ import annotations

import argparse
import re

from firmware.cli import build_parser
from firmware.games.registry import GAMES

#: Marks of reStructuredText that mean nothing to a person reading --help.
RST = re.compile(r"``|:(class|func|meth|mod|data|attr|ref):`|\.\. [a-z]+::|::$|%%", re.MULTILINE)


def parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("egm",)):
    """Every (sub)command parser, with its command words."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, (*path, name))


def test_every_subcommand_explains_every_option_and_lists_the_games():
    problems: list[str] = []
    for path, parser in parsers(build_parser()):
        command = " ".join(path)
        text = parser.format_help()
        if RST.search(text):
            problems.append(f"{command}: raw reStructuredText {RST.search(text).group(0)!r} in --help")
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                continue
            name = "/".join(action.option_strings) or action.dest
            if not action.help or action.help == argparse.SUPPRESS:
                problems.append(f"{command} {name}: no help text")
            if action.dest in ("game", "games") or action.metavar == "GAME":
                if set(action.choices or ()) != set(GAMES):
                    problems.append(f"{command} {name}: the game ids are not its choices")
                if not all(g in re.sub(r"\s+", "", text) for g in GAMES):     # wrapped at hyphens
                    problems.append(f"{command} {name}: --help does not list the game ids")
    assert not problems, "\n".join(problems)
