"""``egm hil list|run``: the lab suite (docs/hil.md).

``list [--standard gli-11|gli-16|gli-24] [--json|--markdown]``: every test with its id, the clause it evidences,
whether it needs an operator and its expected duration. ``run --target sim|CABINET.toml [--only ID...]
[--report DIR] [--resume RUN_DIR] [--operator NAME] [--prompt-timeout S] [--json]``: runs the suite
and writes DIR/junit.xml, DIR/report.html, DIR/run.json and DIR/evidence/. Exit status 0 when every
applicable test passed, 1 when any failed or broke, 2 when none failed but some were blocked.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    from firmware.commands._common import json_argument

    p = sub.add_parser("hil", help="the lab suite: list the tests, run them against the sim or a cabinet")
    hsub = p.add_subparsers(dest="hil_command", metavar="ACTION")
    hsub.required = True

    ls = hsub.add_parser("list", help="every test: id, standard, clause, operator needed, duration")
    ls.add_argument("--standard", choices=["gli-11", "gli-16", "gli-24"], help="only the tests of this standard")
    json_argument(ls)
    ls.add_argument("--markdown", action="store_true", help="print the table docs/hil.md holds (Markdown)")
    ls.set_defaults(func=_list)

    r = hsub.add_parser("run", help="run the suite; reports in --report DIR")
    r.add_argument("--target", required=True, metavar="sim|CABINET.toml",
                   help="sim (the simulated cabinet, unattended) or a cabinet target file (docs/hil.md)")
    r.add_argument("--only", nargs="+", metavar="ID", default=[],
                   help="these test ids or id prefixes (e.g. rng. software.signature)")
    r.add_argument("--report", metavar="DIR", help="the report folder (default: ./hil-YYYYmmdd-HHMMSS)")
    r.add_argument("--resume", metavar="RUN_DIR", help="go on with an interrupted run: its verdicts are kept")
    r.add_argument("--operator", default="", metavar="NAME", help="who runs the suite (the report's 'tested by')")
    r.add_argument("--prompt-timeout", type=float, default=120.0, metavar="S",
                   help="seconds an operator prompt waits before the test is BLOCKED (default 120)")
    json_argument(r)
    r.set_defaults(func=_run)


def _list(args: argparse.Namespace) -> int:
    from firmware.commands._common import emit_json
    from firmware.commands._tables import console, records_table
    from firmware.hil.catalogue import collect, markdown_table, select

    entries = select(collect(), args.standard)
    if args.markdown:
        print(markdown_table(entries), end="")
        return 0
    if args.json:
        emit_json(entries)
        return 0
    rows = [{"id": e["id"], "standard": e["standard"], "clause": e["clause"], "title": e["title"],
             "operator": e["operator"], "duration_s": e["duration_s"], "targets": e["targets"]} for e in entries]
    console().print(records_table(rows, title=f"{len(rows)} lab suite tests"))
    return 0


def _run(args: argparse.Namespace) -> int:
    import sys

    from firmware.commands._common import emit_json
    from firmware.commands._tables import show
    from firmware.errors import UsageError
    from firmware.hil.runner import run

    if args.resume and args.report:
        raise UsageError("--resume RUN_DIR writes its report there: give --report or --resume, not both")
    record = run(args.target, args.only, Path(args.report) if args.report else None,
                 Path(args.resume) if args.resume else None, args.operator, args.prompt_timeout,
                 progress=sys.stderr.isatty() or not args.json)
    if args.json:
        emit_json(record.to_json())
    else:
        rows = [{"id": t.id, "verdict": t.verdict, "clause": f"{t.standard} {t.clause}",
                 "seconds": round(t.elapsed_s, 1), "reason": t.reason or "-"} for t in record.tests]
        show({"tests": rows})
        counts = ", ".join(f"{n} {v.lower()}" for v, n in record.counts().items())
        print(f"{counts}; report: {Path(record.report_dir) / 'report.html'}")
    return record.exit_status()
