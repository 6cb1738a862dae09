"""Problems found while reading input files, each naming where it was found.

Importers collect every problem they can before giving up, so that a user fixes a file in one pass
instead of one error at a time. Errors make the whole import fail (nothing is written); warnings are
reported and the import goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ImportProblem:
    """One problem in one input: the file, the line or document, and the field it concerns."""

    message: str
    file: str | None = None
    line: int | None = None
    document_id: str | None = None
    field: str | None = None
    # Documents a problem concerns when it is about several (e.g. an unknown label seen in many).
    documents: tuple[str, ...] = ()

    def location(self) -> str:
        parts = []
        if self.file:
            parts.append(self.file if self.line is None else f"{self.file}:{self.line}")
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.document_id is not None:
            parts.append(f"document {self.document_id!r}")
        if self.field:
            parts.append(f"field {self.field!r}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.location()
        return f"{where}: {self.message}" if where else self.message

    def as_dict(self) -> dict:
        """The problem as stored with a job: text escaped where the database could not store it."""
        result = {
            "message": _storable(self.message),
            "file": _storable(self.file),
            "line": self.line,
            "document_id": _storable(self.document_id),
            "field": _storable(self.field),
        }
        if self.documents:
            result["documents"] = [_storable(document) for document in self.documents]
        return result


def _storable(text: str | None) -> str | None:
    """`text` with NUL characters and lone surrogates escaped (PostgreSQL's JSON refuses both)."""
    if text is None or (text.isprintable() and text.isascii()):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


class InputValidationError(Exception):
    """Raised when input is invalid. Carries every problem found, not only the first."""

    def __init__(self, problems: list[ImportProblem] | ImportProblem):
        self.problems = [problems] if isinstance(problems, ImportProblem) else list(problems)
        super().__init__(self.summary())

    def summary(self, limit: int = 20) -> str:
        lines = [str(problem) for problem in self.problems[:limit]]
        if len(self.problems) > limit:
            lines.append(f"... and {len(self.problems) - limit} more problems")
        return "\n".join(lines)


@dataclass
class ProblemCollector:
    """Gathers errors and warnings while an importer reads; `raise_if_errors` ends a failed read."""

    errors: list[ImportProblem] = field(default_factory=list)
    warnings: list[ImportProblem] = field(default_factory=list)

    def error(self, message: str, **where) -> None:
        self.errors.append(ImportProblem(message, **where))

    def warn(self, message: str, **where) -> None:
        self.warnings.append(ImportProblem(message, **where))

    def raise_if_errors(self) -> None:
        if self.errors:
            raise InputValidationError(self.errors)
