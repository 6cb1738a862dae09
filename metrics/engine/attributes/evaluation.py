"""One whole extraction evaluation: rows for every gold document, then metrics per attribute."""

from __future__ import annotations

from collections.abc import Sequence

from metrics.engine.attributes.custom_metrics import resolve_custom_metrics
from metrics.engine.attributes.metrics import MetricColumns, attribute_result, metric_columns
from metrics.engine.attributes.types import (
    AttributeSpec,
    AttributeType,
    ComparisonRow,
    EvaluationSettings,
    ExtractionEvaluation,
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


def evaluation_from_columns(
    *,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    row_warnings: Sequence[str],
    unscored: list[str],
    without_context: Sequence[str],
    ignored_note: Sequence[str],
    settings: EvaluationSettings,
    rows: list[ComparisonRow] | None = None,
    columns: MetricColumns | None = None,
) -> ExtractionEvaluation:
    """The one builder of an ExtractionEvaluation, offline and on the server: the metrics of each scored
    attribute from a run's comparison `rows` (kept), or from their `columns` (`metric_columns`,
    attributes numbered by their position in `attributes`), and the notes on what was left out.
    `ignored_note` is worded by the caller, which knows where the predicted documents outside the
    gold came from."""
    custom = resolve_custom_metrics(settings.custom_metrics)
    scored = [spec for spec in attributes if spec.is_scored]
    skipped = [spec.attribute_id for spec in attributes if not spec.is_scored]
    no_bool = custom and not any(spec.type is AttributeType.BOOL for spec in scored)
    position = {spec.attribute_id: index for index, spec in enumerate(attributes)}
    if columns is None:
        columns = metric_columns(rows or [], position)
    return ExtractionEvaluation(
        run_id=run_id,
        attributes=[
            attribute_result(spec, columns.select(columns.attribute == position[spec.attribute_id]), custom)
            for spec in scored
        ],
        rows=rows or [],
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
    )
