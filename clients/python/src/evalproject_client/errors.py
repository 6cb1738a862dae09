"""Typed errors: one class per kind of answer a pipeline reacts to differently.

Every API error carries the server's problem details: `status` (HTTP status), `detail` (the message
for a person), `code` (a stable machine code when the server gives one), `problems` (every individual
problem, each a dict with at least `message`, and `field`, `document_id`, `file`, `line` when known)
and `body` (the JSON answer as received, or its text).
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """The server answered with an error status."""

    def __init__(self, status: int, body: Any, *, method: str = "", url: str = "") -> None:
        self.status = status
        self.body = body
        self.method = method
        self.url = url
        self.detail = _detail(body)
        self.code = body.get("code") if isinstance(body, dict) and isinstance(body.get("code"), str) else None
        self.problems = _problems(body)
        super().__init__(f"{method} {url} -> {status}: {self.detail}".strip())

    @property
    def status_code(self) -> int:
        return self.status


class ValidationError(ApiError):
    """400 or 422: the request was refused as malformed; `problems` says what to fix."""


class AuthenticationError(ApiError):
    """401: no token, or a token the server does not accept."""


class PermissionDenied(ApiError):
    """403: a member of the project whose role does not allow this (or a read-only token)."""


class NotFound(ApiError):
    """404: no such object, or one the token's user may not see (outsiders get 404, not 403)."""


class Conflict(ApiError):
    """409: the object is in a state that does not allow this (e.g. finalizing a scored run)."""


class PayloadTooLarge(ApiError):
    """413: the upload is bigger than the server accepts."""


class ServerError(ApiError):
    """5xx: the server failed; retried requests raise this once the retries are spent."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: ValidationError,
}


def error_for(status: int, body: Any, *, method: str = "", url: str = "") -> ApiError:
    """The typed error for an error answer."""
    cls = ServerError if status >= 500 else _BY_STATUS.get(status, ApiError)
    return cls(status, body, method=method, url=url)


class JobFailed(Exception):
    """A job (import or scoring) the client waited on ended `failed`; `errors` are the job's."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.job = job
        self.errors: list[Any] = list(job.get("errors") or [])
        reasons = "; ".join(_problem_text(error) for error in self.errors) or "no reason given"
        super().__init__(f"job {job.get('id')} ({job.get('kind', 'job')}) failed: {reasons}")


class JobTimeout(TimeoutError):
    """A job the client waited on did not end within the timeout; `job` is its last state."""

    def __init__(self, job: dict[str, Any], timeout: float) -> None:
        self.job = job
        super().__init__(f"job {job.get('id')} is still {job.get('status')} after {timeout} s")


class WebhookVerificationError(ValueError):
    """A webhook request whose signature or timestamp does not hold: reject it (answer 400)."""


def _detail(body: Any) -> str:
    if isinstance(body, dict):
        for key in ("detail", "title", "message"):
            if isinstance(body.get(key), str):
                return body[key]
        problems = _problems(body)
        if problems:
            return "; ".join(_problem_text(problem) for problem in problems)
    if isinstance(body, list):
        return "; ".join(map(str, body))
    return str(body or "").strip()[:500]


def _problems(body: Any) -> list[dict[str, Any]]:
    """Every problem of an error body: the `errors`/`problems` list when there is one, else DRF's field
    errors (`{"field": ["message", ...]}`) one per message."""
    if not isinstance(body, dict):
        return [{"message": str(item)} for item in body] if isinstance(body, list) else []
    for key in ("errors", "problems"):
        listed = body.get(key)
        if isinstance(listed, list):
            return [item if isinstance(item, dict) else {"message": str(item)} for item in listed]
    problems: list[dict[str, Any]] = []
    for field, messages in body.items():
        if field in ("detail", "code", "title", "status", "type"):
            continue
        for message in messages if isinstance(messages, list) else [messages]:
            problems.append(
                {"field": field, "message": message if isinstance(message, str) else str(message)}
            )
    return problems


def _problem_text(problem: Any) -> str:
    if not isinstance(problem, dict):
        return str(problem)
    where = ", ".join(
        f"{key} {problem[key]}" for key in ("file", "line", "document_id", "field") if problem.get(key)
    )
    message = str(problem.get("message", problem))
    return f"{message} ({where})" if where else message
