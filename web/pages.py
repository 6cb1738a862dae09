"""What every page shares: login required, and the API's refusals answered as pages.

The selectors and services raise DRF exceptions (PermissionDenied 403, ScoringNotFound 404,
ComparisonNotPossible 409, a ValidationError 400...): a page answers with the same status and the
same reason, on an error page instead of JSON. A non-member's Http404 passes through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.exceptions import APIException, ValidationError


def _reason(error: APIException) -> str:
    detail = error.detail
    if isinstance(error, ValidationError) and isinstance(detail, dict):
        return "; ".join(
            f"{field}: {' '.join(str(item) for item in (items if isinstance(items, list) else [items]))}"
            for field, items in detail.items()
        )
    if isinstance(detail, list):
        return " ".join(str(item) for item in detail)
    return str(detail)


def page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A page view: anonymous users go to the login page; API refusals become error pages."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except APIException as error:
            return render(
                request,
                "web/error.html",
                {"status": error.status_code, "reason": _reason(error)},
                status=error.status_code,
            )

    return login_required(wrapper)


def chart_download(request: HttpRequest, charts: dict[str, str | None], filename: str) -> HttpResponse | None:
    """`?svg=<chart test id>`: that chart of the page as an SVG file (for a paper); None when not asked."""
    wanted = request.GET.get("svg")
    if wanted is None:
        return None
    chart = charts.get(wanted)
    if chart is None:
        raise Http404("This page has no such chart.")
    response = HttpResponse('<?xml version="1.0" encoding="UTF-8"?>\n' + chart, content_type="image/svg+xml")
    response["Content-Disposition"] = f'attachment; filename="{filename}-{wanted}.svg"'
    return response
