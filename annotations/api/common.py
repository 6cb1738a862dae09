"""Pieces the API views share: 413, pagination of selector querysets, and schema helpers."""

from __future__ import annotations

from collections.abc import Callable

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evalproject.api import PAGE_PARAMETERS
from evalproject.pagination import KeysetPagination

__all__ = ["PAGE_PARAMETERS", "PayloadTooLarge", "paginated", "paginated_response"]


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The upload is too large."
    default_code = "payload_too_large"


def paginated_response(
    *,
    queryset,
    serializer_class: type[serializers.Serializer],
    request: Request,
    view: APIView,
    ordering: str = "id",
    page_transform: Callable[[list], list] | None = None,
) -> Response:
    """One keyset page of `queryset`, serialised: `{"next", "previous", "results"}`.

    `page_transform` maps the page's objects before they are serialised (e.g. a redaction).
    """
    paginator = KeysetPagination()
    paginator.ordering = ordering
    page = paginator.paginate_queryset(queryset, request, view=view)
    if page_transform is not None:
        page = page_transform(page)
    data = serializer_class(page, many=True).data
    return paginator.get_paginated_response(data)


def paginated(serializer_class: type[serializers.Serializer], name: str) -> serializers.Serializer:
    """The schema of a keyset page of `serializer_class`."""
    return inline_serializer(
        name=name,
        fields={
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer_class(many=True),
        },
    )
