"""Predicted attribute values of one extraction run, as JSONL: one document a line.

::

    {"document_id": "d1", "context": "the text the model read", "status": "ok",
     "annotations": [{"attribute_id": "a1", "output_data": ..., "additional_text": "...",
                      "reasoning": "..."}],
     "input_tokens": 1200, "output_tokens": 80, "cost_usd": 0.0031,
     "timings": {"llm_call_seconds": 1.9}}

A gold document with no line failed extraction (its predictions are all missing). `status: "failed"`
says the same explicitly, with the `error` kept for the report. Two annotations for one attribute
are both passed on: the engine turns them into a missing prediction and keeps the reason, so the
reader does not decide it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from annotations.importers.attribute_jsonl import (
    iter_json_objects,
    json_type_name,
    open_binary,
    optional_string,
    read_document_id,
    source_name,
)
from annotations.importers.errors import ImportProblem, ProblemCollector
from annotations.importers.sources import SourceInput
from metrics.engine.attributes.types import PredictedAnnotation, PredictionDocument

STATUSES = ("ok", "failed")
KNOWN_FIELDS = frozenset(
    {
        "document_id",
        "context",
        "status",
        "error",
        "annotations",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "timings",
    }
)


@dataclass
class PredictionSet:
    """Prediction lines keyed by document id, in file order."""

    documents: dict[str, PredictionDocument]
    warnings: list[ImportProblem] = field(default_factory=list)
    # document id -> its line number in the file.
    lines: dict[str, int] = field(default_factory=dict)


def read_predictions_jsonl(
    source: SourceInput,
    *,
    name: str | None = None,
    gold_document_ids: Collection[str] | None = None,
) -> PredictionSet:
    """Read a predictions JSONL file; raise InputValidationError listing every problem found.

    With `gold_document_ids`, a line for a document outside the gold is an error: it would be
    silently ignored otherwise, and it usually means the wrong gold or predictions file. A file on
    disk is streamed line by line.
    """
    file = source_name(source, name)
    problems = ProblemCollector()
    documents: dict[str, PredictionDocument] = {}
    first_line: dict[str, int] = {}
    unknown_fields: dict[str, int] = {}
    # Attribute ids recur on every line: one string object per distinct id, not one per annotation.
    attribute_ids: dict[str, str] = {}
    with open_binary(source) as stream:
        for line, record in iter_json_objects(stream, file, problems):
            document_id = read_document_id(record, file, line, problems)
            if document_id is not None:
                if document_id in first_line:
                    problems.error(
                        f"duplicate line for this document (first on line {first_line[document_id]})",
                        file=file,
                        line=line,
                        document_id=document_id,
                        field="document_id",
                    )
                    continue
                first_line[document_id] = line
                if gold_document_ids is not None and document_id not in gold_document_ids:
                    problems.error(
                        "prediction for a document that is not in the gold",
                        file=file,
                        line=line,
                        document_id=document_id,
                        field="document_id",
                    )
            if not KNOWN_FIELDS.issuperset(record):
                for key in record.keys() - KNOWN_FIELDS:
                    unknown_fields.setdefault(key, line)
            document = _read_document(record, document_id, file, line, problems, attribute_ids)
            if document is not None:
                documents[document.document_id] = document
    for key, line in sorted(unknown_fields.items(), key=lambda item: item[1]):
        problems.warn("unknown field ignored (first seen here)", file=file, line=line, field=key)
    problems.raise_if_errors()
    return PredictionSet(documents=documents, warnings=problems.warnings, lines=first_line)


def read_prediction_record(
    record: dict, *, file: str, line: int, attribute_ids: dict[str, str]
) -> tuple[PredictionDocument | None, ProblemCollector]:
    """One parsed line as `read_predictions_jsonl` reads it, alone: (its document, or None, and the
    problems found). Fields outside KNOWN_FIELDS are not looked at (the file's reader warns of them
    once per file). `attribute_ids` interns attribute ids across lines."""
    problems = ProblemCollector()
    document_id = read_document_id(record, file, line, problems)
    return _read_document(record, document_id, file, line, problems, attribute_ids), problems


def _read_document(
    record: dict,
    document_id: str | None,
    file: str,
    line: int,
    problems: ProblemCollector,
    attribute_ids: dict[str, str] | None = None,
) -> PredictionDocument | None:
    errors_before = len(problems.errors)

    def error(message: str, field_path: str) -> None:
        problems.error(message, file=file, line=line, document_id=document_id, field=field_path)

    status = record.get("status", "ok")
    if status not in STATUSES:
        error(f"status must be one of {', '.join(STATUSES)}, found {status!r}", "status")
    # A null or absent context: the pipeline had no text (a PDF that failed to parse). The document
    # is still scored, without the source and verbatim checks that need the text (docs/semantics.md).
    # A failed extraction without one reads as before, with an empty context.
    context = record.get("context", "" if status == "failed" else None)
    if context is None and status == "failed":
        context = ""
    elif context is not None and not isinstance(context, str):
        error(f"context must be a string, found {json_type_name(context)}", "context")
    error_text = optional_string(record, "error", file, line, problems, document_id=document_id)
    counts = {}
    for key in ("input_tokens", "output_tokens"):
        value = record.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            error(f"{key} must be a non-negative integer or null", key)
        counts[key] = value
    cost = record.get("cost_usd")
    if cost is not None and (not isinstance(cost, (int, float)) or isinstance(cost, bool) or cost < 0):
        error("cost_usd must be a non-negative number or null", "cost_usd")
    timings = record.get("timings") or {}
    if not isinstance(timings, dict):
        error(f"timings must be an object of stage -> seconds, found {json_type_name(timings)}", "timings")
        timings = {}
    for stage, seconds in timings.items():
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
            error("must be a non-negative number of seconds", f"timings.{stage}")
    annotations = _read_annotations(
        record.get("annotations", []), error, {} if attribute_ids is None else attribute_ids
    )
    if document_id is None or len(problems.errors) > errors_before:
        return None
    return PredictionDocument(
        document_id=document_id,
        context=context,
        status=status,
        error=error_text,
        annotations=annotations,
        input_tokens=counts["input_tokens"],
        output_tokens=counts["output_tokens"],
        cost_usd=None if cost is None else float(cost),
        timings={stage: float(seconds) for stage, seconds in timings.items()},
    )


def _read_annotations(raw: object, error, attribute_ids: dict[str, str]) -> tuple[PredictedAnnotation, ...]:
    if type(raw) is not list:
        error(f"annotations must be an array, found {json_type_name(raw)}", "annotations")
        return ()
    annotations = []
    # Runs for every annotation of a run (hundreds of thousands): exact type checks, and field paths
    # built only when something is wrong.
    for index, entry in enumerate(raw):
        if type(entry) is not dict:
            error(f"must be an object, found {json_type_name(entry)}", f"annotations[{index}]")
            continue
        attribute_id = entry.get("attribute_id")
        if type(attribute_id) is int:
            # EPPI attribute ids are integers; the prompt CSV holds their decimal strings.
            attribute_id = str(attribute_id)
        elif type(attribute_id) is not str or not attribute_id:
            error("attribute_id must be a non-empty string", f"annotations[{index}].attribute_id")
            continue
        if "output_data" not in entry:
            error("missing output_data (use null for no value)", f"annotations[{index}].output_data")
            continue
        additional_text = entry.get("additional_text")
        reasoning = entry.get("reasoning")
        if (additional_text is not None and type(additional_text) is not str) or (
            reasoning is not None and type(reasoning) is not str
        ):
            for key, value in (("additional_text", additional_text), ("reasoning", reasoning)):
                if value is not None and type(value) is not str:
                    error(
                        f"must be a string or null, found {json_type_name(value)}",
                        f"annotations[{index}].{key}",
                    )
            continue
        annotations.append(
            PredictedAnnotation(
                attribute_ids.setdefault(attribute_id, attribute_id),
                entry["output_data"],
                additional_text,
                reasoning,
            )
        )
    return tuple(annotations)
