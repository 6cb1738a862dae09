"""Posted prediction batches, read with the same readers as the prediction JSONL files.

A batch is a list of document objects in the JSONL shapes (SEMANTICS.md sections 1 and 2). Each object
is read by the importer of its kind, so a document the offline command accepts is accepted here and
the other way round; problems are reported per document, by its index in the batch. Checks that need
the database (known documents, offsets against the stored text, known attributes) come later, in the
ingest service.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from annotations.importers.errors import ImportProblem, InputValidationError, ProblemCollector
from annotations.importers.extraction_predictions import read_predictions_jsonl
from annotations.importers.labels import LabelMap, LabelResolver
from annotations.importers.span_jsonl import iter_jsonl_documents
from annotations.importers.span_types import SpanAnnotation
from metrics.engine.attributes.types import PredictionDocument

MAX_DOCUMENTS_PER_BATCH = 1000
_SOURCE = "batch"


@dataclass
class PostedDocument:
    """One posted document, read and hashed. `spans` for span runs, `prediction` for attribute runs."""

    index: int
    document_id: str
    content_hash: str
    text: str | None = None
    spans: list[SpanAnnotation] = field(default_factory=list)
    prediction: PredictionDocument | None = None


def document_problem(
    index: int | None, document_id: str | None, field_name: str | None, message: str
) -> dict:
    return {"index": index, "document_id": document_id, "field": field_name, "message": message}


def content_hash(document: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of a posted object: the same content in any key order is unchanged."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _as_jsonl(documents: Sequence[Any]) -> bytes:
    return "\n".join(json.dumps(document, ensure_ascii=False) for document in documents).encode("utf-8")


def _problem_dict(problem: ImportProblem) -> dict:
    index = None if problem.line is None else problem.line - 1
    return document_problem(index, problem.document_id, problem.field, problem.message)


def read_span_batch(
    documents: Sequence[Any], *, label_map: LabelMap
) -> tuple[list[PostedDocument], list[dict], list[dict]]:
    """(documents, errors, warnings) of a span batch; labels resolved with the project's label map."""
    problems = ProblemCollector()
    labels = LabelResolver(label_map, input_name=_SOURCE)
    posted = []
    for document in iter_jsonl_documents(
        io.BytesIO(_as_jsonl(documents)), source=_SOURCE, role="predictions", labels=labels, problems=problems
    ):
        index = document.line - 1
        posted.append(
            PostedDocument(
                index=index,
                document_id=document.document_id,
                content_hash=content_hash(documents[index]),
                text=document.text,
                spans=document.spans,
            )
        )
    errors = [_problem_dict(problem) for problem in problems.errors]
    warnings = [_problem_dict(problem) | {"index": None} for problem in labels.warnings()]
    return posted, errors, warnings


def read_attribute_batch(documents: Sequence[Any]) -> tuple[list[PostedDocument], list[dict], list[dict]]:
    """(documents, errors, warnings) of an attribute batch."""
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            return [], [document_problem(index, None, None, "must be a JSON object")], []
    try:
        prediction_set = read_predictions_jsonl(_as_jsonl(documents), name=_SOURCE)
    except InputValidationError as error:
        return [], [_problem_dict(problem) for problem in error.problems], []
    index_of = {}
    for index, document in enumerate(documents):
        document_id = document.get("document_id")
        index_of.setdefault(str(document_id), index)
    posted = [
        PostedDocument(
            index=index_of[document_id],
            document_id=document_id,
            content_hash=content_hash(documents[index_of[document_id]]),
            prediction=prediction,
        )
        for document_id, prediction in prediction_set.documents.items()
    ]
    warnings = [_problem_dict(problem) for problem in prediction_set.warnings]
    return posted, [], warnings


def check_duplicates(documents: Sequence[Any]) -> list[dict]:
    """A document twice in one batch is an error (the JSONL readers say so for files too)."""
    seen: dict[str, int] = {}
    errors = []
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            continue
        document_id = document.get("document_id")
        if isinstance(document_id, (str, int)) and not isinstance(document_id, bool):
            key = str(document_id)
            if key in seen:
                errors.append(
                    document_problem(
                        index, key, "document_id", f"duplicate document (first at index {seen[key]})"
                    )
                )
            else:
                seen[key] = index
    return errors
