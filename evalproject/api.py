"""API-wide pieces: the exception handler, and the base view and schema that declare each operation's
query parameters once. The JSON parser is in `evalproject.parsers`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    """DRF's handler, plus Django's ValidationError (raised by services' full_clean) as a 400."""
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        exc = serializers.ValidationError(detail)
    return drf_exception_handler(exc, context)


PAGE_PARAMETERS = [
    OpenApiParameter("cursor", str, description="Opaque cursor from `next` or `previous`."),
    OpenApiParameter("page_size", int, description="Rows per page, up to 1,000 (default 100)."),
]


class ApiView(APIView):
    """The base of every API view: the query parameters a method takes are declared once, and drive
    both the check here and the OpenAPI description (`ApiSchema`).

    `query_serializers` maps a method ("get") to the serializer of its query parameters; `paginated_methods`
    names the methods that answer a keyset page (they also take `cursor` and `page_size`). A query
    parameter a method does not declare answers 400 listing those it does: a misspelt filter would
    otherwise return every row.
    """

    query_serializers: ClassVar[dict[str, type[serializers.Serializer]]] = {}
    paginated_methods: ClassVar[tuple[str, ...]] = ()
    # True when its DELETE reads a body (described in the schema like a POST's).
    delete_takes_body: ClassVar[bool] = False

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        method = "get" if request.method == "HEAD" else request.method.lower()
        if not hasattr(self, method):
            return  # the method is not allowed: that (405) is the answer, whatever the parameters
        query_parameters_check(request.query_params, known=query_parameter_names(type(self), method))


def query_parameters_check(query_params: Iterable[str], *, known: Iterable[str]) -> None:
    """A 400 naming each query parameter not in `known` and listing those that are (the web pages
    that mirror an operation check their queries with it too)."""
    known = set(known)
    unknown = sorted(set(query_params) - known)
    if unknown:
        expected = ", ".join(sorted(known)) or "none"
        raise serializers.ValidationError(
            {name: [f"unknown query parameter; this operation takes: {expected}."] for name in unknown}
        )


def query_parameter_names(view_class: type, method: str) -> list[str]:
    """The query parameters `method` of `view_class` declares."""
    names = []
    serializer_class = getattr(view_class, "query_serializers", {}).get(method)
    if serializer_class is not None:
        names.extend(serializer_class().fields)
    if method in getattr(view_class, "paginated_methods", ()):
        names.extend(parameter.name for parameter in PAGE_PARAMETERS)
    return names


class ApiSchema(AutoSchema):
    """drf-spectacular's schema, plus the query parameters each `ApiView` method declares."""

    def get_override_parameters(self) -> list:
        parameters = list(super().get_override_parameters())
        method = self.method.lower()
        serializer_class = getattr(self.view, "query_serializers", {}).get(method)
        if serializer_class is not None:
            parameters.insert(0, serializer_class)
        if method in getattr(self.view, "paginated_methods", ()):
            parameters.extend(PAGE_PARAMETERS)
        return parameters

    def _get_request_body(self, direction: str = "request"):
        # drf-spectacular describes a body for POST, PUT and PATCH only; a DELETE that takes one
        # (`ApiView.delete_takes_body`) is described the same way.
        if self.method != "DELETE" or not getattr(self.view, "delete_takes_body", False):
            return super()._get_request_body(direction)
        self.method = "POST"
        try:
            return super()._get_request_body(direction)
        finally:
            self.method = "DELETE"
