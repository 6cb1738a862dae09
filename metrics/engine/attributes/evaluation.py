"""One whole extraction evaluation: rows for every gold document, then metrics per attribute."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from metrics.engine.attributes.comparison import (
    documents_without_context,
    no_context_warning,
    skipped_attribute_ids,
    unscored_document_ids,
)
from metrics.engine.attributes.custom_metrics import resolve_custom_metrics
from metrics.engine.attributes.metrics import attribute_result
from metrics.engine.attributes.parallel import compare_all_documents
from metrics.engine.attributes.types import (
    AttributeSpec,
    AttributeType,
    ComparisonRow,
    EvaluationSettings,
    ExtractionEvaluation,
    GoldDocument,
    PredictionDocument,
)

# Listing every id in a warning would drown the log on a large import; the full lists are on the result.
_IDS_SHOWN = 20


def _some_ids(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(document_id) for document_id in ids[:_IDS_SHOWN])
    return shown + (f" and {len(ids) - _IDS_SHOWN} more" if len(ids) > _IDS_SHOWN else "")


def evaluate_extraction(
    *,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    gold_documents: Sequence[GoldDocument],
    predictions: Mapping[str, PredictionDocument],
    settings: EvaluationSettings,
    workers: int | None = None,
) -> ExtractionEvaluation:
    """Score `predictions` against the gold of `gold_documents` for every attribute with a prompt.

    Rows come in gold-document order, then in the order of `attributes`; results in the order of
    `attributes`. Custom metric names are checked before any work (ValueError on an unknown one).
    The same inputs give the same result whatever the order of the `predictions` mapping.

    `workers`: how many processes build the comparison rows (forked; the result is the same whatever
    the number). None: two for a run of at least 2,000 documents on a machine with two cores or more
    and one of them idle, else one; one wherever forking is not possible or not safe (see
    `parallel.resolve_workers`).
    """
    resolve_custom_metrics(settings.custom_metrics)  # an unknown name fails before any work
    rows, warnings = compare_all_documents(
        run_id=run_id,
        attributes=attributes,
        gold_documents=gold_documents,
        predictions=predictions,
        settings=settings,
        workers=workers,
    )
    unscored = unscored_document_ids(gold_documents, attributes)
    gold_ids = {document.document_id for document in gold_documents}
    extra = sorted(document_id for document_id in predictions if document_id not in gold_ids)
    return evaluation_from_rows(
        run_id=run_id,
        attributes=attributes,
        rows=rows,
        row_warnings=no_context_warning(documents_without_context(gold_documents, predictions)) + warnings,
        unscored=unscored,
        extra_predictions=extra,
        settings=settings,
    )


def evaluation_from_rows(
    *,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    rows: list[ComparisonRow],
    row_warnings: list[str],
    unscored: list[str],
    extra_predictions: list[str],
    settings: EvaluationSettings,
) -> ExtractionEvaluation:
    """The evaluation of a run from its comparison rows (all of them, in order) and their warnings:
    the metrics of each scored attribute, and the notes on what was left out. `unscored`: gold
    documents without gold (in order); `extra_predictions`: prediction documents with no gold
    document (sorted)."""
    custom = resolve_custom_metrics(settings.custom_metrics)
    scored = [spec for spec in attributes if spec.is_scored]
    skipped = skipped_attribute_ids(attributes)
    notes: list[str] = []
    if skipped:
        notes.append(f"{len(skipped)} attribute(s) have no prompt and are not scored: {_some_ids(skipped)}")
    if unscored:
        notes.append(
            f"{len(unscored)} gold document(s) have no gold annotations and are not scored: {_some_ids(unscored)}"
        )
    if extra_predictions:
        notes.append(
            f"{len(extra_predictions)} prediction document(s) have no gold document and are ignored: "
            f"{_some_ids(extra_predictions)}"
        )
    if custom and not any(spec.type is AttributeType.BOOL for spec in scored):
        notes.append("custom metrics apply to BOOL attributes only, and no BOOL attribute is scored")

    rows_by_attribute: dict[str, list[ComparisonRow]] = {spec.attribute_id: [] for spec in scored}
    for row in rows:
        rows_by_attribute[row.attribute_id].append(row)
    results = [
        attribute_result(spec, rows_by_attribute[spec.attribute_id], settings, custom_metrics=custom)
        for spec in scored
    ]
    return ExtractionEvaluation(
        run_id=run_id,
        attributes=results,
        rows=rows,
        warnings=notes + row_warnings,
        unscored_documents=unscored,
        skipped_attributes=skipped,
    )
