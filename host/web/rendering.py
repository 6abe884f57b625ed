"""Pages and fragments drawn from the templates, with what every page shows (the operator, the
CSRF token for its forms, a one-time message)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import Response
from fastapi.templating import Jinja2Templates

from host.web import auth


def is_fragment(request: Request) -> bool:
    """A request of the page's own script (the live parts), not of a person's browser tab."""
    return request.headers.get("x-requested-with") == "fetch"


def render(request: Request, template: str, context: dict[str, Any], status: int = 200) -> Response:
    """``template`` with the operator (if any), their CSRF token and the flash message."""
    name = request.session.get("operator")
    operator = request.app.state.operators.get(name) if isinstance(name, str) else None
    if operator is not None and (operator.disabled or operator.role != request.session.get("role")):
        operator = None
    base = {"operator": operator, "who": auth.describe(operator) if operator else None,
            "csrf": auth.csrf_token(request), "flash": request.session.pop("flash", None)}
    templates: Jinja2Templates = request.app.state.templates
    return templates.TemplateResponse(request, template, {**base, **context}, status_code=status)
