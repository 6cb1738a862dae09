"""What the run and prediction services raise. DRF API exceptions, so a view that lets one through answers
with the right status and a body a program can read (`detail`, `code`, and the particulars)."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.exceptions import APIException


class RunRuleError(APIException):
    """Base: a message for a person plus details for a program, kept as JSON types."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None, code: str | None = None):
        super().__init__(detail=message, code=code or self.default_code)
        self.message = message
        self.code = code or self.default_code
        self.details = dict(details or {})
        self.detail = {"detail": message, "code": self.code, **self.details}

    def __str__(self) -> str:
        return self.message


class RunNotOpen(RunRuleError):
    """Predictions posted to, or a finalize of, a run that no longer accepts them: 409."""

    default_code = "run_not_open"


class PredictionBatchInvalid(RunRuleError):
    """The batch is refused as a whole: `errors` lists every problem by document (400)."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid_batch"


class PredictionConflict(RunRuleError):
    """Documents posted before with other content, without `?replace=true`: 409, nothing written."""

    default_code = "prediction_conflict"


class IdempotencyKeyReused(RunRuleError):
    """An Idempotency-Key sent again with a different body: 422, nothing written."""

    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_code = "idempotency_key_reused"


class RunNotDeletable(RunRuleError):
    """A run that cannot be deleted now (its scoring is running): 409, nothing deleted."""

    default_code = "run_not_deletable"


class RunConfigInvalid(RunRuleError):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid_config"
