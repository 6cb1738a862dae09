"""What the split rules raise. Both are DRF API exceptions, so a view that lets one through still answers
with the right status and the reason; services and tasks may catch them like any other exception."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.exceptions import APIException


class SplitRuleViolation(APIException):
    """A request the evaluation strategy forbids: 409 Conflict, with the reason and the details.

    `.message` is one sentence for a person; `.details` is a dict for a program (e.g. the documents
    outside a run's stage). The response body is `{"detail": message, "code": ..., **details}`.
    """

    status_code = status.HTTP_409_CONFLICT
    default_code = "split_rule_violation"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None, code: str | None = None):
        super().__init__(detail=message, code=code or self.default_code)
        self.message = message
        self.details = dict(details or {})
        self.code = code or self.default_code
        # DRF would turn every value into a string; a program reading the details wants the JSON types.
        self.detail = {"detail": message, "code": self.code, **self.details}

    def __str__(self) -> str:
        return self.message


class SplitAccessRefused(SplitRuleViolation):
    """A read of something hidden before acceptance (test gold, comparison rows, metrics): 403."""

    status_code = status.HTTP_403_FORBIDDEN
    default_code = "hidden_before_acceptance"
