"""Writing a checked batch of posted documents: new ones inserted with COPY, changed ones replaced.

Called by `predictions_ingest` with the run share-locked; it raises PredictionConflict (409) for
documents posted before with other content unless the caller asked to replace them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from annotations.models import Attribute
from annotations.services.bulk import bulk_insert, json_cell
from experiments.errors import PredictionConflict
from experiments.models import (
    DocumentStatus,
    ExperimentRun,
    PredictedSpan,
    PredictedValue,
    RunDocument,
    RunKind,
)
from experiments.prediction_batches import PostedDocument, document_problem

CREATED, UNCHANGED, REPLACED = "created", "unchanged", "replaced"
INSERT_BATCH_SIZE = 2000


@dataclass
class IngestOutcome:
    """What a batch did; `status_code` is 201 when anything was written, 200 when nothing changed."""

    status_code: int
    body: dict[str, Any]


_RUN_DOCUMENT_COLUMNS = (
    "content_hash",
    "context",
    "status",
    "error",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "timings",
)


def _run_document_row(document: PostedDocument) -> tuple:
    fields = _run_document_fields(document)
    fields.setdefault("context", "")
    fields.setdefault("status", DocumentStatus.OK)
    fields.setdefault("timings", {})
    fields["timings"] = _json(fields["timings"])
    return tuple(fields.get(name) for name in _RUN_DOCUMENT_COLUMNS)


def _run_document_fields(document: PostedDocument) -> dict[str, Any]:
    prediction = document.prediction
    if prediction is None:
        return {"content_hash": document.content_hash}
    return {
        "content_hash": document.content_hash,
        "context": prediction.context,
        "status": DocumentStatus.OK if prediction.status == "ok" else DocumentStatus.FAILED,
        "error": prediction.error,
        "input_tokens": prediction.input_tokens,
        "output_tokens": prediction.output_tokens,
        "cost_usd": prediction.cost_usd,
        "timings": dict(prediction.timings),
    }


def predictions_write(
    run: ExperimentRun,
    posted: list[PostedDocument],
    known: dict[str, dict],
    *,
    replace: bool,
    warnings: list[dict],
) -> IngestOutcome:
    statuses, new, changed = _sorted_by_status(run, posted, known, replace=replace)
    targets = _run_documents_create(run, new, known)
    if changed:
        _run_documents_replace(changed)
        targets.extend(changed)
    _write_children(run, targets)

    counts = {CREATED: 0, UNCHANGED: 0, REPLACED: 0}
    for status in statuses.values():
        counts[status] += 1
    body = {
        "run": run.pk,
        "counts": counts,
        "documents": [
            {"document_id": document.document_id, "status": statuses[document.document_id]}
            for document in posted
        ],
        "warnings": warnings,
    }
    return IngestOutcome(status_code=201 if counts[CREATED] or counts[REPLACED] else 200, body=body)


def _sorted_by_status(
    run: ExperimentRun, posted: list[PostedDocument], known: dict[str, dict], *, replace: bool
) -> tuple[dict[str, str], list[PostedDocument], list[tuple[PostedDocument, int]]]:
    """Each posted document's status (created, unchanged, replaced), the new documents, and the
    changed ones with their row's key. A changed document without `replace` is a conflict: nothing
    is stored, and every conflict of the batch is named."""
    document_pks = [known[document.document_id]["pk"] for document in posted]
    existing = {
        row["document_id"]: row
        for row in RunDocument.objects.filter(run=run, document_id__in=document_pks).values(
            "pk", "document_id", "content_hash"
        )
    }
    statuses: dict[str, str] = {}
    new: list[PostedDocument] = []
    changed: list[tuple[PostedDocument, int]] = []
    conflicts = []
    for document in posted:
        row = existing.get(known[document.document_id]["pk"])
        if row is None:
            new.append(document)
            statuses[document.document_id] = CREATED
        elif row["content_hash"] == document.content_hash:
            statuses[document.document_id] = UNCHANGED
        elif replace:
            changed.append((document, row["pk"]))
            statuses[document.document_id] = REPLACED
        else:
            conflicts.append(
                document_problem(
                    document.index,
                    document.document_id,
                    None,
                    "posted before with different content; send ?replace=true to replace it",
                )
            )
    if conflicts:
        raise PredictionConflict(
            f"{len(conflicts)} document(s) were posted before with different content; nothing was stored.",
            details={"conflicts": conflicts},
        )
    return statuses, new, changed


def _run_documents_create(
    run: ExperimentRun, new: list[PostedDocument], known: dict[str, dict]
) -> list[tuple[PostedDocument, int]]:
    """Insert the new documents' rows; each document with its row's key."""
    now = timezone.now()
    bulk_insert(
        RunDocument,
        (*_RUN_DOCUMENT_COLUMNS, "run_id", "document_id", "created_at", "updated_at"),
        (
            (*_run_document_row(document), run.pk, known[document.document_id]["pk"], now, now)
            for document in new
        ),
    )
    # COPY hands back no keys: one query finds the rows just written (the run is locked).
    new_pks = dict(
        RunDocument.objects.filter(
            run=run, document_id__in=[known[document.document_id]["pk"] for document in new]
        ).values_list("document_id", "pk")
    )
    return [(document, new_pks[known[document.document_id]["pk"]]) for document in new]


def _run_documents_replace(changed: list[tuple[PostedDocument, int]]) -> None:
    """Overwrite the changed documents' rows and delete their predictions (written again after)."""
    changed_pks = [pk for _, pk in changed]
    PredictedSpan.objects.filter(run_document_id__in=changed_pks).delete()
    PredictedValue.objects.filter(run_document_id__in=changed_pks).delete()
    updated = [RunDocument(pk=pk, **_run_document_fields(document)) for document, pk in changed]
    fields = list(_run_document_fields(changed[0][0]).keys())
    RunDocument.objects.bulk_update(updated, fields=fields, batch_size=INSERT_BATCH_SIZE)


def _write_children(run: ExperimentRun, targets: list[tuple[PostedDocument, int]]) -> None:
    if run.kind == RunKind.SPANS:
        bulk_insert(
            PredictedSpan,
            ("run_document_id", "start", "end", "entity_type", "label"),
            (
                (run_document_pk, span.start, span.end, span.entity_type, span.label)
                for document, run_document_pk in targets
                for span in document.spans
            ),
        )
        return
    attribute_pks = dict(
        Attribute.objects.filter(project_id=run.project_id).values_list("attribute_id", "pk")
    )
    bulk_insert(
        PredictedValue,
        ("run_document_id", "attribute_id", "output_data", "additional_text", "reasoning", "position"),
        (
            (
                run_document_pk,
                attribute_pks[annotation.attribute_id],
                _json(annotation.output_data),
                annotation.additional_text,
                annotation.reasoning,
                position,
            )
            for document, run_document_pk in targets
            for position, annotation in enumerate(document.prediction.annotations)
        ),
    )


def _json(value: Any) -> Any:
    """A JSON column's cell for bulk_insert. JSON null is stored as SQL NULL, as the ORM stores None."""
    return json_cell(value, json.dumps(value, ensure_ascii=False))
