"""The pages people read: the floor grid, a terminal (meters plot, events, rounds with recall,
tilts, vouchers, command log), voucher look-up and the operator log. Each asks for its
permission (host/web/auth.py); the live parts are fragments the page's script fetches every second."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import Response

from host.store_operators import Operator
from host.web import auth
from host.web.floor_state import STATES, classify
from host.web.plot import meters_svg
from host.web.rendering import render

router = APIRouter()

Viewer = Annotated[Operator, Depends(auth.require("view"))]
VoucherReader = Annotated[Operator, Depends(auth.require("vouchers"))]
Auditor = Annotated[Operator, Depends(auth.require("operator_log"))]

VALIDATION_RE = re.compile(r"\d{18}")


def floor_rows(request: Request) -> list[dict[str, Any]]:
    """Every terminal with its state (host/web/floor_state.py)."""
    state = request.app.state
    last = state.floor.last_rounds()
    now = state.clock()
    return [classify(row, last.get(row["terminal"]), now, state.thresholds) for row in state.store.terminals()]


def terminal_row(request: Request, terminal: str) -> dict[str, Any]:
    """The terminal's floor row; 404 for a terminal the host never heard from."""
    for row in floor_rows(request):
        if row["terminal"] == terminal:
            return row
    raise HTTPException(status_code=404, detail=f"no terminal {terminal} on this floor")


def _floor_context(request: Request) -> dict[str, Any]:
    rows = floor_rows(request)
    counts = Counter(r["state"] for r in rows)
    return {"rows": rows, "counts": [(s, counts.get(s, 0)) for s in STATES], "total": len(rows)}


@router.get("/floor")
def floor(request: Request, operator: Viewer) -> Response:
    return render(request, "floor.html.j2", _floor_context(request))


@router.get("/floor/grid")
def floor_grid(request: Request, operator: Viewer) -> Response:
    return render(request, "floor_grid.html.j2", _floor_context(request))


def _terminal_context(request: Request, terminal: str) -> dict[str, Any]:
    state = request.app.state
    store = state.store
    return {
        "t": terminal_row(request, terminal),
        "tilts": state.floor.tilts(terminal),
        "events": store.events(terminal, last=40),
        "rounds": store.rounds(terminal, last=25),
        "vouchers": store.vouchers(terminal)[:25],
        "deliveries": state.floor.deliveries(terminal, last=25),
        "oplog": state.operators.log(terminal=terminal, last=25),
        "meters": store.meters(terminal).get(terminal),
    }


@router.get("/terminals/{terminal}")
def terminal_page(request: Request, terminal: str, operator: Viewer) -> Response:
    return render(request, "terminal.html.j2", _terminal_context(request, terminal))


@router.get("/terminals/{terminal}/live")
def terminal_live(request: Request, terminal: str, operator: Viewer) -> Response:
    return render(request, "terminal_live.html.j2", _terminal_context(request, terminal))


@router.get("/terminals/{terminal}/status")
def terminal_status(request: Request, terminal: str, operator: Viewer) -> Response:
    t = terminal_row(request, terminal)
    meters = request.app.state.store.meters(terminal).get(terminal)
    return render(request, "terminal_status.html.j2", {"t": t, "meters": meters})


@router.get("/terminals/{terminal}/meters.svg")
async def terminal_plot(request: Request, terminal: str, operator: Viewer) -> Response:
    terminal_row(request, terminal)
    history = request.app.state.store.meter_history(terminal, last=500)
    svg = await asyncio.to_thread(meters_svg, history)
    return Response(svg, media_type="image/svg+xml")


@router.get("/terminals/{terminal}/rounds/{seq}")
def round_recall(request: Request, terminal: str, seq: int, operator: Viewer) -> Response:
    t = terminal_row(request, terminal)
    found = request.app.state.floor.round(terminal, seq)
    if found is None:
        raise HTTPException(status_code=404, detail=f"no round record {seq} of terminal {terminal}")
    return render(request, "round.html.j2", {"t": t, "round": found})


@router.get("/vouchers")
def vouchers(request: Request, operator: VoucherReader, validation: str = "") -> Response:
    wanted = re.sub(r"[\s-]", "", validation)[:64]
    context: dict[str, Any] = {"validation": validation[:64], "voucher": None, "error": None}
    if not validation:
        return render(request, "vouchers.html.j2", context)
    if VALIDATION_RE.fullmatch(wanted) is None:
        context["error"] = "A validation number has 18 digits (spaces and dashes are ignored)."
        return render(request, "vouchers.html.j2", context, status=400)
    found = request.app.state.floor.voucher(wanted)
    request.app.state.operators.record(operator.name, operator.role, "voucher_lookup", None, wanted,
                                       "found" if found else "unknown")
    context["voucher"] = found
    if found is None:
        context["error"] = f"No voucher {wanted} is known to this host."
        return render(request, "vouchers.html.j2", context, status=404)
    return render(request, "vouchers.html.j2", context)


@router.get("/operator-log")
def operator_log(request: Request, operator: Auditor) -> Response:
    return render(request, "operator_log.html.j2", {"lines": request.app.state.operators.log(last=500)})
