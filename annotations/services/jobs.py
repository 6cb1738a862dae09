"""The life of a job row: its problems, its one terminal transition.

One problem shape everywhere: the dict of `ImportProblem.as_dict` (`message`, `file`, `line`,
`document_id`, `field`, and `documents` when it concerns several). Imports, scoring and exports store
their warnings and errors in that shape, so every reader (API, admin, clients) reads one shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from annotations.importers.errors import ImportProblem


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
