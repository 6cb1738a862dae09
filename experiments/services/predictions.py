"""Posting predictions: a batch is checked whole, then written whole, once.

Idempotency has three layers:
- per document: a document posted again with the same content (same canonical-JSON hash) is
  `unchanged`; with other content it is a conflict (409) unless the caller asks to replace it;
- per batch: an Idempotency-Key stores the first answer, and a retry with the same key and body gets
  it back without a second write;
- concurrency: a batch holds a share lock on the run row while it writes, so batches of one run go
  side by side and a finalize (which takes the row FOR UPDATE) waits for them, then keeps new ones
  out. Two clients posting the same batch at the same moment both try to insert; the unique
  constraint on (run, document) (and on (run, key) for Idempotency-Keys) makes the second one fail,
  and it is retried: it then finds the first one's rows and answers `unchanged`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from django.db import IntegrityError, OperationalError, connection, transaction

from annotations.importers.labels import LabelMap
from annotations.models import Attribute, Document
from experiments.errors import IdempotencyKeyReused, PredictionBatchInvalid, RunNotOpen
from experiments.models import (
    ExperimentRun,
    IdempotencyKey,
    RunKind,
    RunStage,
    RunStatus,
)
from experiments.prediction_batches import (
    MAX_DOCUMENTS_PER_BATCH,
    PostedDocument,
    check_duplicates,
    column_problems,
    content_hash,
    document_problem,
    read_attribute_batch,
    read_span_batch,
)
from experiments.services.prediction_writes import IngestOutcome, predictions_write
from experiments.splits import split_check_prediction_documents

_ATTEMPTS = 3


def project_label_map(settings: dict[str, Any]) -> LabelMap:
    """The default label map with the project's own (settings["label_map"]) merged over it."""
    overrides = settings.get("label_map") or {}
    base = LabelMap.default()
    return base.merged_with(overrides, source="project settings") if overrides else base


def batch_request_hash(*, documents: Any, replace: bool) -> str:
    return content_hash({"documents": documents, "replace": replace})


def predictions_ingest(
    *,
    run: ExperimentRun,
    documents: Sequence[Any],
    replace: bool = False,
    idempotency_key: str | None = None,
) -> IngestOutcome:
    """Store a batch of posted documents for `run`, or raise without writing anything.

    Raises PredictionBatchInvalid (400, every problem by document), PredictionConflict (409, documents
    posted before with other content, unless `replace`), RunNotOpen (409), IdempotencyKeyReused (422),
    SplitRuleViolation (409, documents outside the run's stage).
    """
    if not isinstance(documents, list) or not documents:
        raise PredictionBatchInvalid("documents must be a non-empty list")
    if len(documents) > MAX_DOCUMENTS_PER_BATCH:
        raise PredictionBatchInvalid(
            f"at most {MAX_DOCUMENTS_PER_BATCH} documents per batch, got {len(documents)}",
            details={"max_documents": MAX_DOCUMENTS_PER_BATCH},
        )
    request_hash = batch_request_hash(documents=documents, replace=replace) if idempotency_key else ""
    errors = check_duplicates(documents)
    too_big = column_problems(documents)
    if too_big:
        # The readers assume values fit their columns (offsets below 2**62): refuse before reading.
        raise PredictionBatchInvalid(
            f"The batch was refused: {len(errors) + len(too_big)} problem(s); nothing was stored.",
            details={"errors": sorted(errors + too_big, key=lambda error: error["index"])},
        )
    if run.kind == RunKind.SPANS:
        posted, read_errors, warnings = read_span_batch(
            documents, label_map=project_label_map(run.project.settings)
        )
    else:
        posted, read_errors, warnings = read_attribute_batch(documents)
    errors.extend(error for error in read_errors if error not in errors)

    for attempt in range(_ATTEMPTS):
        try:
            with transaction.atomic():
                return _ingest_locked(
                    run,
                    documents,
                    posted,
                    list(errors),
                    warnings,
                    replace=replace,
                    idempotency_key=idempotency_key,
                    request_hash=request_hash,
                )
        except (
            IntegrityError,
            psycopg.IntegrityError,
            OperationalError,
            psycopg.errors.DeadlockDetected,
        ) as error:
            # A concurrent batch wrote some of these documents (or this key) first, or the two deadlocked
            # on overlapping documents: read again, and this batch now finds them stored. (COPY raises
            # psycopg's own exceptions; Django wraps those of execute().)
            if attempt == _ATTEMPTS - 1 or (isinstance(error, OperationalError) and not _is_deadlock(error)):
                raise
    raise AssertionError("unreachable")


def _ingest_locked(
    run: ExperimentRun,
    documents: Sequence[Any],
    posted: list[PostedDocument],
    errors: list[dict],
    warnings: list[dict],
    *,
    replace: bool,
    idempotency_key: str | None,
    request_hash: str,
) -> IngestOutcome:
    locked = _lock_run_for_posting(run.pk)
    if idempotency_key:
        stored = IdempotencyKey.objects.filter(run=locked, key=idempotency_key).first()
        if stored is not None:
            if stored.request_hash != request_hash:
                raise IdempotencyKeyReused(
                    "This Idempotency-Key was used for a different batch; use a new key for new content.",
                    details={"idempotency_key": idempotency_key},
                )
            return IngestOutcome(status_code=stored.response_status, body=stored.response_body)
    if locked.status != RunStatus.OPEN:
        raise RunNotOpen(
            f"Run {locked.pk} is {locked.status}: it no longer accepts predictions.",
            details={"run": locked.pk, "status": locked.status},
        )
    document_rows = _known_documents(locked, documents, with_text=locked.kind == RunKind.SPANS)
    errors.extend(_unknown_documents(documents, document_rows))
    if locked.kind == RunKind.SPANS:
        errors.extend(_span_problems(posted, document_rows))
    else:
        errors.extend(_attribute_problems(locked, posted))
    if errors:
        errors.sort(key=lambda error: (error["index"] is None, error["index"] or 0))
        raise PredictionBatchInvalid(
            f"The batch was refused: {len(errors)} problem(s); nothing was stored.",
            details={"errors": errors},
        )
    if locked.stage != RunStage.ALL:
        split_check_prediction_documents(
            run=locked, document_ids=[row["pk"] for row in document_rows.values()]
        )
    outcome = predictions_write(locked, posted, document_rows, replace=replace, warnings=warnings)
    if idempotency_key:
        IdempotencyKey.objects.create(
            run=locked,
            key=idempotency_key,
            request_hash=request_hash,
            response_status=outcome.status_code,
            response_body=outcome.body,
        )
    return outcome


def _lock_run_for_posting(run_pk: int) -> ExperimentRun:
    """The run, share-locked: batches of one run are written side by side, while a finalize (FOR UPDATE)
    waits for them and, once it holds the run, keeps new batches out until it is done."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {ExperimentRun._meta.db_table} WHERE id = %s FOR SHARE", [run_pk])
        return ExperimentRun.objects.get(pk=run_pk)
    return ExperimentRun.objects.select_for_update().get(pk=run_pk)


def _is_deadlock(error: OperationalError) -> bool:
    return isinstance(error.__cause__, psycopg.errors.DeadlockDetected)


def _known_documents(run: ExperimentRun, documents: Sequence[Any], *, with_text: bool) -> dict[str, dict]:
    ids = {
        str(document["document_id"])
        for document in documents
        if isinstance(document, dict) and isinstance(document.get("document_id"), (str, int))
    }
    fields = ["pk", "external_id", "text"] if with_text else ["pk", "external_id"]
    rows = Document.objects.filter(project_id=run.project_id, external_id__in=ids).values(*fields)
    return {row["external_id"]: row for row in rows}


def _unknown_documents(documents: Sequence[Any], known: dict[str, dict]) -> list[dict]:
    problems = []
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            continue
        document_id = document.get("document_id")
        is_id = isinstance(document_id, (str, int)) and not isinstance(document_id, bool) and str(document_id)
        if is_id and str(document_id) not in known:
            problems.append(
                document_problem(index, str(document_id), "document_id", "no such document in this project")
            )
    return problems


def _span_problems(posted: list[PostedDocument], known: dict[str, dict]) -> list[dict]:
    """Offsets and entity texts against the stored document text, which is what gold offsets index."""
    problems = []
    for document in posted:
        row = known.get(document.document_id)
        if row is None:
            continue
        text = row["text"]
        if document.text is not None and document.text != text:
            problems.append(
                document_problem(
                    document.index, document.document_id, "text", "text differs from the stored document text"
                )
            )
            continue
        for position, span in enumerate(document.spans):
            if span.end > len(text):
                problems.append(
                    document_problem(
                        document.index,
                        document.document_id,
                        f"entities[{position}].end",
                        f"offsets [{span.start}, {span.end}) reach past the end of the text "
                        f"({len(text)} code points)",
                    )
                )
            elif span.text is not None and text[span.start : span.end] != span.text:
                problems.append(
                    document_problem(
                        document.index,
                        document.document_id,
                        f"entities[{position}].text",
                        f"text does not match the document text at [{span.start}, {span.end})",
                    )
                )
    return problems


def _attribute_problems(run: ExperimentRun, posted: list[PostedDocument]) -> list[dict]:
    known = set(Attribute.objects.filter(project_id=run.project_id).values_list("attribute_id", flat=True))
    problems = []
    for document in posted:
        for position, annotation in enumerate(document.prediction.annotations):
            if annotation.attribute_id not in known:
                problems.append(
                    document_problem(
                        document.index,
                        document.document_id,
                        f"annotations[{position}].attribute_id",
                        f"unknown attribute {annotation.attribute_id!r} (not in the project's schema)",
                    )
                )
    return problems
