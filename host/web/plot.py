"""A terminal's meters over time as an SVG picture, drawn on the server by matplotlib.

The object-oriented API only (no pyplot, no global figure state), under one lock: matplotlib's
renderers are not meant to be driven from several threads at once.
"""

from __future__ import annotations

import io
import threading
from datetime import datetime
from typing import Any

from matplotlib.dates import AutoDateLocator, DateFormatter, date2num
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

#: the meters drawn (dollars, cumulative) and their colours
SERIES = (("coin_in", "Coin in", "#1f6feb"), ("coin_out", "Coin out", "#2da44e"),
          ("bills_in", "Bills in", "#bf8700"), ("ticket_out", "Tickets out", "#8250df"))

_lock = threading.Lock()


def meters_svg(history: list[dict[str, Any]]) -> bytes:
    """``history`` (:meth:`HostStore.meter_history`, any order) as an SVG: the money meters and the
    credit balance, in dollars, against the time each snapshot was taken."""
    points = sorted((datetime.fromisoformat(h["sent_at"]), h["meters"]) for h in history
                    if isinstance(h.get("meters"), dict))
    with _lock:
        fig = Figure(figsize=(7.2, 3.0), dpi=100, layout="constrained")
        ax = fig.add_subplot()
        if not points:
            ax.text(0.5, 0.5, "no meter reports yet", ha="center", va="center", color="#57606a",
                    transform=ax.transAxes)
            ax.set_axis_off()
        else:
            times = [t for t, _ in points]
            x = date2num(times)  # type: ignore[no-untyped-call]
            highest = 0.0
            for key, label, colour in SERIES:
                values = [_cents((body.get("meters") or {}).get(key)) / 100 for _, body in points]
                highest = max(highest, *values)
                ax.plot(x, values, label=label, color=colour, marker="o", markersize=3, linewidth=1.6)
            credits = [_cents(body.get("credits")) / 100 for _, body in points]
            highest = max(highest, *credits)
            ax.plot(x, credits, label="Credits", color="#cf222e", linestyle="--", linewidth=1.4)
            span = (times[-1] - times[0]).total_seconds()
            if span >= 5:
                ax.xaxis.set_major_locator(AutoDateLocator(maxticks=8))  # type: ignore[no-untyped-call]
            else:                                  # too short a span for a date locator: its ends
                ax.set_xticks(sorted({float(x[0]), float(x[-1])}))
            ax.xaxis.set_major_formatter(DateFormatter(  # type: ignore[no-untyped-call]
                "%H:%M:%S" if span < 86400 else "%d %b %H:%M"))
            ax.set_xlabel(f"UTC, {times[0]:%Y-%m-%d}" if span < 86400 else "UTC")
            ax.set_ylim(0, highest * 1.15 if highest > 0 else 1)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"${v:,.0f}" if v >= 10 else f"${v:,.2f}"))
            ax.grid(True, color="#d0d7de", linewidth=0.6)
            ax.legend(loc="upper left", fontsize=8, ncols=5, frameon=False)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
        out = io.BytesIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def _cents(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
