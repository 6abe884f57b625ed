"""What ``egm host loadtest`` shows: a progress bar while it runs, a table at the end (rich), or
with ``--json`` one document and nothing else."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table


class Shown:
    """The progress bar on stderr (nothing with ``quiet``)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.progress: Progress | None = None
        self.task: Any = None

    def __call__(self, run: Any, phase: str, fraction: float) -> None:
        if self.quiet:
            return
        if self.progress is None:
            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[info]}"),
                                     TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self.progress.start()
            self.task = self.progress.add_task("load test", total=1.0, info="")
        made = sum(p.get("made", 0) for p in run.progress.values())
        outstanding = sum(p.get("outstanding", 0) for p in run.progress.values())
        self.progress.update(self.task, completed=fraction, description=f"{phase:<12}",
                             info=f"reports made {made:>8}  outstanding {outstanding:>6}")

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def table(doc: dict[str, Any]) -> Table:
    t = Table(title=f"egm host loadtest: {doc['terminals']} terminals, {doc['configuration']['rate']:g} reports/s "
                    f"each, {doc['configuration']['duration']:g} s", show_header=False)
    t.add_column("what", style="bold")
    t.add_column("value")
    verdict = "[green]complete: nothing lost, nothing twice[/]" if doc["ok"] else "[red]FAILED[/]"
    rows = [
        ("verdict", verdict),
        ("reports recorded / stored", f"{doc['sent']} / {doc['stored']}"),
        ("lost / duplicates", f"{doc['lost']} / {doc['duplicates']}"),
        ("stored per second", f"{doc['reports_per_second']} (offered {doc['offered_per_second']})"),
        ("seal to stored", f"p50 {doc['latency']['p50_ms']} ms, p90 {doc['latency']['p90_ms']} ms, "
                           f"p99 {doc['latency']['p99_ms']} ms, max {doc['latency']['max_ms']} ms"),
        ("kinds", ", ".join(f"{k} {v}" for k, v in sorted(doc["kinds"].items()))),
        ("vouchers", f"redeemed {doc['vouchers']['redeemed']}, paid twice {doc['vouchers']['paid_twice']}, "
                     f"spent ones refused {doc['vouchers']['refused_as_spent']}"),
        ("commands", f"{doc['commands']['queued']} to {doc['commands']['terminals']} terminals, "
                     f"wrong {doc['commands']['wrong']}"),
        ("host meters = last snapshot", "yes" if not doc["meters_mismatch"] else f"no ({doc['meters_mismatch']})"),
        ("resends", str(doc["resends"])),
        ("CPU seconds", ", ".join(f"{k} {v}" for k, v in doc["cpu_s"].items())),
        ("timings", ", ".join(f"{k} {v}" for k, v in doc["timings"].items())),
    ]
    for problem in doc["problems"][:10]:
        rows.append(("problem", f"[red]{problem}[/]"))
    for what, value in rows:
        t.add_row(what, value)
    return t
