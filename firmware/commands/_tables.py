"""Output for a person: rich tables on stdout (``--json`` is the machines' output, ``_common.emit_json``).

:func:`show` draws any JSON-shaped answer (a command's document, a control-socket reply) as
tables: a mapping's plain values as a two-column table, each list of records as a table with the
fields every record has as columns (the others in a ``details`` column), each nested mapping as a
table of its own. A value inside a cell is written ``key=value, ...``; never a Python repr.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

#: Columns used when stdout is not a terminal (a pipe, a file, a test): wide, so that a row is one
#: line for grep (a table is only as wide as its cells).
PIPE_WIDTH = 200


def console() -> Console:
    """A rich console on stdout: the terminal's width, or :data:`PIPE_WIDTH` when piped (whatever
    ``COLUMNS`` says: a reader of a file or a pipe has no screen to fit)."""
    import sys

    from rich.console import Console

    width = None if sys.stdout.isatty() else PIPE_WIDTH
    return Console(file=sys.stdout, width=width, highlight=False, emoji=False, markup=False)


def cell(value: object) -> str:
    """A value as a table cell: numbers with thousands separators, records as ``key=value``."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={cell(v)}" for k, v in value.items())
    if isinstance(value, Sequence) and not isinstance(value, str):
        return ", ".join(cell(v) for v in value)
    return str(value)


def records_table(rows: Sequence[Mapping[str, Any]], title: str | None = None,
                  columns: Sequence[str] | None = None) -> Table:
    """Records as a table: ``columns`` (default: the fields every record has, in the first one's
    order); any other field goes to a ``details`` column as ``key=value``."""
    from rich.table import Table

    if columns is None:
        columns = [k for k in rows[0] if all(k in r for r in rows)] if rows else []
    rest = any(set(r) - set(columns) for r in rows)
    table = Table(title=title, title_justify="left", show_lines=False)
    for name in columns:
        numeric = rows and all(isinstance(r.get(name), int) and not isinstance(r.get(name), bool) for r in rows)
        table.add_column(name, justify="right" if numeric else "left")
    if rest:
        table.add_column("details", overflow="fold")
    for r in rows:
        extra = {k: v for k, v in r.items() if k not in columns}
        table.add_row(*(cell(r.get(k)) for k in columns), *([cell(extra)] if rest else []))
    return table


def _is_records(value: object) -> bool:
    return (isinstance(value, Sequence) and not isinstance(value, str) and bool(value)
            and all(isinstance(v, Mapping) for v in value))


def tables(value: Any, title: str | None = None) -> list[Table | str]:
    """The rich renderables of :func:`show`."""
    from rich.table import Table

    if _is_records(value):
        return [records_table(value, title)]
    if not isinstance(value, Mapping):
        return [cell(value) if title is None else f"{title}: {cell(value)}"]
    out: list[Table | str] = []
    plain = Table(title=title, title_justify="left", show_header=False)
    plain.add_column("name")
    plain.add_column("value", overflow="fold")
    nested: list[tuple[str, Any]] = []
    for key, v in value.items():
        if _is_records(v) or (isinstance(v, Mapping) and v):
            nested.append((str(key), v))
        else:
            plain.add_row(str(key), cell(v) if not (isinstance(v, list) and not v) else "(none)")
    if plain.row_count:
        out.append(plain)
    for key, v in nested:
        out.extend(tables(v, key if title is None else f"{title}.{key}"))
    return out


def show(value: Any, title: str | None = None) -> None:
    """Print ``value`` (a JSON-shaped answer) for a person, as tables."""
    con = console()
    for part in tables(value, title):
        con.print(part)
