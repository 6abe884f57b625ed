"""The buttons: disable, enable, send meters, set time. Each is a POST form with the session's CSRF
token, allowed by role (host/web/auth.py), and goes the host's one command path:
:meth:`HostStore.queue_command`, which the running host adopts and sends until the terminal
confirms it (docs/protocols/host-session.md). Every one is recorded in the operator log with who
sent it; nothing is queued for a refused request."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from egmproto.pki import PkiError, validate_name
from host.store_operators import Operator
from host.web import auth
from host.web.routes_pages import terminal_row

router = APIRouter()

REASON_MAX = 200


def _queue(request: Request, operator: Operator, terminal: str, type_: str, body: dict[str, Any]) -> Response:
    try:
        validate_name(terminal, "terminal id")
    except PkiError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None
    terminal_row(request, terminal)                            # 404: a terminal the host never heard from
    queued = request.app.state.store.queue_command(terminal, type_, body)
    detail = ", ".join(f"{k}={v}" for k, v in body.items())
    request.app.state.operators.record(operator.name, operator.role, type_, terminal, detail, f"queued #{queued}")
    request.session["flash"] = (f"{type_.replace('_', ' ').capitalize()} queued for {terminal} (#{queued}): "
                                "the host sends it until the terminal confirms it.")
    return RedirectResponse(f"/terminals/{terminal}", status_code=303)


@router.post("/terminals/{terminal}/disable")
def disable(request: Request, terminal: str, operator: Annotated[Operator, Depends(auth.require("disable"))],
            csrf: str = Form(""), reason: str = Form("")) -> Response:
    auth.check_csrf(request, csrf)
    text = " ".join(reason.split())[:REASON_MAX] or f"disabled from the floor by {operator.name}"
    return _queue(request, operator, terminal, "disable", {"reason": text})


@router.post("/terminals/{terminal}/enable")
def enable(request: Request, terminal: str, operator: Annotated[Operator, Depends(auth.require("enable"))],
           csrf: str = Form("")) -> Response:
    auth.check_csrf(request, csrf)
    return _queue(request, operator, terminal, "enable", {})


@router.post("/terminals/{terminal}/send-meters")
def send_meters(request: Request, terminal: str,
                operator: Annotated[Operator, Depends(auth.require("send_meters"))],
                csrf: str = Form("")) -> Response:
    auth.check_csrf(request, csrf)
    return _queue(request, operator, terminal, "send_meters", {})


@router.post("/terminals/{terminal}/set-time")
def set_time(request: Request, terminal: str, operator: Annotated[Operator, Depends(auth.require("set_time"))],
             csrf: str = Form(""), iso: str = Form("")) -> Response:
    auth.check_csrf(request, csrf)
    text = iso.strip()[:64] or request.app.state.clock().astimezone(UTC).isoformat()
    try:
        if datetime.fromisoformat(text).tzinfo is None:
            raise ValueError
    except ValueError:
        raise HTTPException(status_code=400, detail=f"{text!r} is not an ISO 8601 time with an offset "
                                                    "(e.g. 2026-01-02T15:04:05+00:00)") from None
    return _queue(request, operator, terminal, "set_time", {"iso": text})
