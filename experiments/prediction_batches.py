"""Posted prediction batches, read with the same readers as the prediction JSONL files.

A batch is a list of document objects in the JSONL shapes (docs/semantics.md sections 1 and 2). Each object
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
from annotations.models import Attribute, Document
from evalproject.validation import INTEGER_MAX, text_problem
from experiments.models import PredictedSpan
from metrics.engine.attributes.types import PredictionDocument

MAX_DOCUMENTS_PER_BATCH = 1000
# Column lengths of what a batch stores. A posted `entity_type` is the raw label (its canonical type is
# one of the label map's, or OTHER_PII).
DOCUMENT_ID_MAX_LENGTH = Document._meta.get_field("external_id").max_length
LABEL_MAX_LENGTH = PredictedSpan._meta.get_field("label").max_length
ATTRIBUTE_ID_MAX_LENGTH = Attribute._meta.get_field("attribute_id").max_length
# Per document. A run's totals add these up over its documents into one BIGINT (tokens) or float
# (cost, seconds): far above any real document, and low enough that millions of them still add up
# within the column, and that no sum of finite floats overflows to infinity.
TOKENS_MAX = 10**12
COST_USD_MAX = 10**9
SECONDS_MAX = 10**9
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


def column_problems(documents: Sequence[Any]) -> list[dict]:
    """Values the database could not store: texts longer than their column, integers outside it, and
    numbers whose run totals would overflow. Checked before the readers, which assume offsets fit."""
    problems = []
    for index, document in enumerate(documents):
        if not isinstance(document, Mapping):
            continue
        raw_id = document.get("document_id")
        document_id = str(raw_id) if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None
        for field_name, why in _document_column_problems(document):
            problems.append(document_problem(index, document_id, field_name, why))
    return problems


def _document_column_problems(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    problems = [_text("document_id", document.get("document_id"), DOCUMENT_ID_MAX_LENGTH)]
    for key in ("input_tokens", "output_tokens"):
        problems.append(_number(key, document.get(key), TOKENS_MAX))
    problems.append(_number("cost_usd", document.get("cost_usd"), COST_USD_MAX))
    timings = document.get("timings")
    if isinstance(timings, Mapping):
        problems.extend(
            _number(f"timings.{stage}", seconds, SECONDS_MAX) for stage, seconds in timings.items()
        )
    entities = document.get("entities")
    if isinstance(entities, list):
        for position, entity in enumerate(entities):
            if isinstance(entity, Mapping):
                prefix = f"entities[{position}]"
                problems.append(_text(f"{prefix}.entity_type", entity.get("entity_type"), LABEL_MAX_LENGTH))
                problems.append(_number(f"{prefix}.start", entity.get("start"), INTEGER_MAX))
                problems.append(_number(f"{prefix}.end", entity.get("end"), INTEGER_MAX))
    annotations = document.get("annotations")
    if isinstance(annotations, list):
        for position, annotation in enumerate(annotations):
            if isinstance(annotation, Mapping):
                problems.append(
                    _text(
                        f"annotations[{position}].attribute_id",
                        annotation.get("attribute_id"),
                        ATTRIBUTE_ID_MAX_LENGTH,
                    )
                )
    return [problem for problem in problems if problem is not None]


def _text(field_name: str, value: Any, max_length: int) -> tuple[str, str] | None:
    if not isinstance(value, str):
        return None
    why = text_problem(value, max_length=max_length)
    return None if why is None else (field_name, why)


def _number(field_name: str, value: Any, maximum: int) -> tuple[str, str] | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value) <= maximum:
        return None
    return (field_name, f"must be at most {maximum:,} in size, found {value!r}")


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
