"""The floor page's FastAPI application: sessions, security headers, templates and the routes
(docs/floor-web.md). :func:`create_app` builds it on a :class:`HostStore`; host/web/serve.py runs it
over HTTPS."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import HTTPException
from fastapi.responses import PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader
from starlette.middleware.sessions import SessionMiddleware

from host.store import HostStore
from host.store_floor import FloorQueries
from host.store_operators import Operators
from host.web import auth, routes_commands, routes_login, routes_pages
from host.web.floor_state import Thresholds, age_text, money
from host.web.rendering import is_fragment, render

HERE = Path(__file__).parent
SESSION_COOKIE = "egm_floor_session"
SESSION_MAX_AGE_S = 8 * 3600          #: one shift; then log in again

#: Only our own files: no inline script, nothing from elsewhere.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Strict-Transport-Security": "max-age=31536000",
    "Cache-Control": "no-store",
}


def create_app(store: HostStore, *, secret_key: str, thresholds: Thresholds | None = None,
               clock: Callable[[], datetime] | None = None,
               throttle: auth.LoginThrottle | None = None) -> FastAPI:
    """The floor page on ``store``; ``secret_key`` signs the session cookies."""
    if not isinstance(secret_key, str) or len(secret_key) < 32:
        raise ValueError("the session secret must have at least 32 characters")
    app = FastAPI(title="EGM floor", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.state.operators = Operators(store)
    app.state.floor = FloorQueries(store)
    app.state.thresholds = thresholds or Thresholds()
    app.state.clock = clock or (lambda: datetime.now(UTC))
    app.state.throttle = throttle or auth.LoginThrottle()
    # every template is HTML (*.html.j2): escape everything, whatever the file name says
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True)
    templates = Jinja2Templates(env=env)
    templates.env.filters["path"] = lambda text: quote(str(text), safe="")
    templates.env.filters["money"] = money
    templates.env.filters["age"] = age_text
    templates.env.globals["can"] = auth.can
    app.state.templates = templates

    app.add_middleware(SessionMiddleware, secret_key=secret_key, session_cookie=SESSION_COOKIE,
                       max_age=SESSION_MAX_AGE_S, same_site="strict", https_only=True)

    @app.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        for key, value in SECURITY_HEADERS.items():
            if key == "Cache-Control" and request.url.path.startswith("/static/"):
                continue
            response.headers.setdefault(key, value)
        return response

    @app.exception_handler(auth.LoginRequired)
    async def login_required(request: Request, exc: auth.LoginRequired) -> Response:
        if is_fragment(request):
            return PlainTextResponse("log in again", status_code=401)
        return RedirectResponse("/login", status_code=303)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if is_fragment(request):
            return PlainTextResponse(str(exc.detail), status_code=exc.status_code)
        return render(request, "error.html.j2", {"status": exc.status_code, "message": exc.detail},
                      status=exc.status_code)

    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    for module in (routes_login, routes_pages, routes_commands):
        app.include_router(module.router)
    return app
