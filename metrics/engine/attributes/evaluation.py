"""One whole extraction evaluation: rows for every gold document, then metrics per attribute."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from metrics.engine.attributes.comparison import (
    compare_documents,
    documents_without_context,
    unscored_document_ids,
)
from metrics.engine.attributes.custom_metrics import resolve_custom_metrics
from metrics.engine.attributes.metrics import MetricColumns, attribute_result, metric_columns
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


def _listed(ids: Sequence[str], what: str) -> list[str]:
    """The note "<n> <what>: <the first ids>", none when there are no ids."""
    if not ids:
        return []
    shown = ", ".join(repr(identifier) for identifier in ids[:_IDS_SHOWN])
    more = f" and {len(ids) - _IDS_SHOWN} more" if len(ids) > _IDS_SHOWN else ""
    return [f"{len(ids)} {what}: {shown}{more}"]


def evaluate_extraction(
    *,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    gold_documents: Sequence[GoldDocument],
    predictions: Mapping[str, PredictionDocument],
    settings: EvaluationSettings,
    compare: Callable[..., tuple[list[ComparisonRow], list[str]]] = compare_documents,
) -> ExtractionEvaluation:
    """Score `predictions` against the gold of `gold_documents` for every attribute with a prompt.

    Rows come in gold-document order, then in the order of `attributes`; results in the order of
    `attributes`. Custom metric names are checked before any work (ValueError on an unknown one).
    The same inputs give the same result whatever the order of the `predictions` mapping.

    `compare`: what builds the rows and warnings, called with `compare_documents`' arguments; the
    default is one pass here, `metrics.pipeline.attributes` gives chunked ones with the same result.
    """
    resolve_custom_metrics(settings.custom_metrics)  # an unknown name fails before any work
    rows, warnings = compare(
        run_id=run_id,
        attributes=attributes,
        gold_documents=gold_documents,
        predictions=predictions,
        settings=settings,
    )
    gold_ids = {document.document_id for document in gold_documents}
    extra = sorted(document_id for document_id in predictions if document_id not in gold_ids)
    return evaluation_from_rows(
        run_id=run_id,
        attributes=attributes,
        rows=rows,
        row_warnings=warnings,
        unscored=unscored_document_ids(gold_documents, attributes),
        without_context=documents_without_context(gold_documents, predictions),
        ignored_note=_listed(extra, "prediction document(s) have no gold document and are ignored"),
        settings=settings,
    )


def evaluation_from_rows(
    *,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    rows: list[ComparisonRow],
    row_warnings: Sequence[str],
    unscored: list[str],
    without_context: Sequence[str],
    ignored_note: Sequence[str],
    settings: EvaluationSettings,
) -> ExtractionEvaluation:
    """`evaluation_from_columns` of a run's comparison rows (all of them, in order), which it keeps."""
    evaluation = evaluation_from_columns(
        run_id=run_id,
        attributes=attributes,
        columns=metric_columns(rows, {spec.attribute_id: index for index, spec in enumerate(attributes)}),
        row_warnings=row_warnings,
        unscored=unscored,
        without_context=without_context,
        ignored_note=ignored_note,
        settings=settings,
    )
    evaluation.rows = rows
    return evaluation


def evaluation_from_columns(
    *,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    columns: MetricColumns,
    row_warnings: Sequence[str],
    unscored: list[str],
    without_context: Sequence[str],
    ignored_note: Sequence[str],
    settings: EvaluationSettings,
) -> ExtractionEvaluation:
    """The evaluation of a run, without its rows, from what the metrics read of them (`metric_columns`,
    attributes numbered by their position in `attributes`) and their warnings: the metrics of each
    scored attribute, and the notes on what was left out. The one builder of an ExtractionEvaluation,
    offline and on the server.

    `unscored`: gold documents without gold (in order); `without_context`: gold documents whose
    prediction was extracted with no context (in order); `ignored_note`: the note on predicted
    documents outside the gold, worded by the caller (which knows where they came from), or none.
    Notes come in this order: attributes without a prompt, unscored documents, `ignored_note`,
    custom metrics without a BOOL attribute, documents without a context, then `row_warnings`."""
    custom = resolve_custom_metrics(settings.custom_metrics)
    scored = [spec for spec in attributes if spec.is_scored]
    skipped = [spec.attribute_id for spec in attributes if not spec.is_scored]
    no_bool = custom and not any(spec.type is AttributeType.BOOL for spec in scored)
    position = {spec.attribute_id: index for index, spec in enumerate(attributes)}
    return ExtractionEvaluation(
        run_id=run_id,
        attributes=[
            attribute_result(spec, columns.select(columns.attribute == position[spec.attribute_id]), custom)
            for spec in scored
        ],
        rows=[],
        warnings=[
            *_listed(skipped, "attribute(s) have no prompt and are not scored"),
            *_listed(unscored, "gold document(s) have no gold annotations and are not scored"),
            *ignored_note,
            *(
                ["custom metrics apply to BOOL attributes only, and no BOOL attribute is scored"]
                if no_bool
                else []
            ),
            *_listed(
                without_context,
                "document(s) have a prediction without a context (the pipeline had no text): scored, "
                "with gold_value_in_context and the verbatim scores blank and outside both source strata",
            ),
            *row_warnings,
        ],
        unscored_documents=unscored,
        skipped_attributes=skipped,
    )
