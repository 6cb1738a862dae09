"""API-wide pieces: the exception handler and the API root."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    """DRF's handler, plus Django's ValidationError (raised by services' full_clean) as a 400."""
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        exc = serializers.ValidationError(detail)
    return drf_exception_handler(exc, context)
