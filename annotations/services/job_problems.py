"""One problem shape for every job's warnings and errors, capped, and errors that hide tracebacks.

The shape is the dict of `ImportProblem.as_dict` (`message`, `file`, `line`, `document_id`, `field`,
and `documents` when it concerns several). Imports, scoring and exports store their warnings and
errors in that shape, so every reader (API, admin, clients) reads one shape, and the redaction of
held-back documents (annotations.selectors.jobs) reads their structured document fields.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from typing import Any

from django.conf import settings

from annotations.importers.errors import ImportProblem

logger = logging.getLogger("annotations.jobs")

# A problem about many documents lists at most this many of them (messages name fewer).
DOCUMENTS_LISTED = 100


def problem_dict(problem: ImportProblem | dict | str) -> dict[str, Any]:
    """`problem` in the one problem shape; a bare string becomes a problem with only a message."""
    if isinstance(problem, ImportProblem):
        return problem.as_dict()
    if isinstance(problem, dict):
        shaped = ImportProblem(str(problem.get("message", ""))).as_dict()
        shaped.update({key: problem[key] for key in shaped if key in problem})
        if problem.get("documents"):
            shaped["documents"] = list(problem["documents"])
        return shaped
    return ImportProblem(str(problem)).as_dict()


def problem_dicts(problems: Iterable[ImportProblem | dict | str]) -> list[dict[str, Any]]:
    return [problem_dict(problem) for problem in problems]


def problems_capped(problems: Iterable[ImportProblem | dict | str], *, what: str) -> list[dict[str, Any]]:
    """The first JOB_PROBLEMS_LISTED problems, each listing at most DOCUMENTS_LISTED documents, and a
    last problem counting the rest: 50,000 distinct unknown labels must not make a 12 MB job row."""
    listed = settings.JOB_PROBLEMS_LISTED
    shaped: list[dict[str, Any]] = []
    rest = 0
    for problem in problems:
        if len(shaped) >= listed:
            rest += 1
            continue
        item = problem_dict(problem)
        if len(item.get("documents", ())) > DOCUMENTS_LISTED:
            item["documents"] = item["documents"][:DOCUMENTS_LISTED]
        shaped.append(item)
    if rest:
        shaped.append(problem_dict(f"... and {rest} more {what}, not listed"))
    return shaped


def internal_error(job_id: int, *, log: logging.Logger = logger) -> dict[str, Any]:
    """Log the exception being handled with its traceback under a new error id; return the problem a
    user sees, which names the id and nothing of the traceback. Call it inside an `except` block."""
    error_id = uuid.uuid4().hex
    log.exception("job %s failed: internal error %s", job_id, error_id)
    return problem_dict(f"internal error {error_id}; see the worker log")
