"""Logging in and out. A login is checked against the database (argon2id), throttled per name and
per address after a few failures, and recorded in the operator log whatever its outcome."""

from __future__ import annotations

import asyncio
import math

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from host.web import auth
from host.web.rendering import render

router = APIRouter()


@router.get("/")
def home(request: Request) -> Response:
    return RedirectResponse("/floor" if request.session.get("operator") else "/login", status_code=303)


@router.get("/login")
def login_page(request: Request) -> Response:
    return render(request, "login.html.j2", {"error": None, "name": ""})


@router.post("/login")
async def login(request: Request, name: str = Form(""), password: str = Form(""),
                csrf: str = Form("")) -> Response:
    auth.check_csrf(request, csrf)
    operators = request.app.state.operators
    throttle: auth.LoginThrottle = request.app.state.throttle
    address = auth.client_address(request)
    keys = (f"name:{name[:64]}", f"address:{address}")
    wait = throttle.wait(*keys)
    if wait > 0:
        operators.record(name[:64] or "-", None, "login", None, f"from {address}", "throttled")
        return render(request, "login.html.j2",
                      {"error": f"Too many failed attempts: try again in {math.ceil(wait)} s.", "name": name},
                      status=429)
    operator = await asyncio.to_thread(operators.authenticate, name, password)   # argon2 takes a while
    if operator is None:
        throttle.failed(*keys)
        operators.record(name[:64] or "-", None, "login", None, f"from {address}", "refused")
        return render(request, "login.html.j2", {"error": "Wrong name or password.", "name": name}, status=401)
    throttle.succeeded(keys[0])
    auth.session_operator(request, operator)
    operators.record(operator.name, operator.role, "login", None, f"from {address}", "ok")
    return RedirectResponse("/floor", status_code=303)


@router.post("/logout")
def logout(request: Request, csrf: str = Form("")) -> Response:
    auth.check_csrf(request, csrf)
    name, role = request.session.get("operator"), request.session.get("role")
    request.session.clear()
    if isinstance(name, str):
        request.app.state.operators.record(name, role, "logout", None, "", "ok")
    return RedirectResponse("/login", status_code=303)
