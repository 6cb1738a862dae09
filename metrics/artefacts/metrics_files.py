"""`metrics.csv`, `metrics.json` and the console table: one row per attribute, sorted by label then
id (docs/semantics.md section 4; intervals: docs/uncertainty.md). A metric that could not be computed
is an empty cell in the CSV and is left out of the JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, Any

from metrics.artefacts.cells import cell, csv_writer, is_null
from metrics.engine.attributes.metrics import COUNT_COLUMNS, metric_column_order
from metrics.engine.attributes.types import AttributeResult, ExtractionEvaluation
from metrics.engine.text_table import text_table
from metrics.engine.uncertainty.attribute_metrics import attribute_metric_definitions
from metrics.engine.uncertainty.bootstrap import Interval

AttributeIntervals = Mapping[str, Mapping[str, Interval]]

IDENTITY_COLUMNS = ("extraction_run_id", "attribute_id", "attribute_label", "attribute_type")
METRICS_JSON_FORMAT_VERSION = 1


def sorted_results(evaluation: ExtractionEvaluation) -> list[AttributeResult]:
    return sorted(evaluation.attributes, key=lambda result: (result.spec.label, result.spec.attribute_id))


def metric_column_names(evaluation: ExtractionEvaluation, custom_metrics: Sequence[str] = ()) -> list[str]:
    types_present = sorted({result.spec.type for result in evaluation.attributes})
    ordered = list(metric_column_order(types_present, list(custom_metrics)))
    extra = sorted({name for result in evaluation.attributes for name in result.metrics} - set(ordered))
    return ordered + extra


def write_metrics_csv(
    evaluation: ExtractionEvaluation,
    handle: IO[str],
    *,
    custom_metrics: Sequence[str] = (),
    intervals: AttributeIntervals | None = None,
) -> None:
    metrics = metric_column_names(evaluation, custom_metrics)
    # Interval columns for every metric a type present has an interval for: the columns depend on the
    # types, not on which intervals happen to be null.
    types = {result.spec.attribute_id: result.spec.type for result in evaluation.attributes}
    with_interval = (
        {name for _, name in attribute_metric_definitions(types)} if intervals is not None else set()
    )
    header: list[str] = [*IDENTITY_COLUMNS, *COUNT_COLUMNS]
    for name in metrics:
        header.append(name)
        if name in with_interval:
            header += [f"{name}_ci_low", f"{name}_ci_high"]
    writer = csv_writer(handle)
    writer.writerow(header)
    for result in sorted_results(evaluation):
        spec = result.spec
        row = [
            cell(evaluation.run_id),
            cell(spec.attribute_id),
            cell(spec.label),
            spec.type.value,
            *(cell(result.counts.get(name)) for name in COUNT_COLUMNS),
        ]
        for name in metrics:
            row.append(cell(result.metrics.get(name)))
            if name in with_interval:
                interval = (intervals or {}).get(spec.attribute_id, {}).get(name)
                row += ["", ""] if interval is None else [cell(interval.low), cell(interval.high)]
        writer.writerow(row)


def metrics_report(
    evaluation: ExtractionEvaluation,
    custom_metrics: Sequence[str] = (),
    *,
    intervals: AttributeIntervals | None = None,
    intervals_config: Mapping[str, Any] | None = None,
) -> dict:
    """The content of metrics.json: the same values as metrics.csv, nulls omitted; with `intervals`,
    each attribute's non-null intervals under `intervals`, and `intervals_config` at the top."""
    metrics = metric_column_names(evaluation, custom_metrics)
    attributes = []
    for result in sorted_results(evaluation):
        counts = {name: result.counts[name] for name in COUNT_COLUMNS if not is_null(result.counts.get(name))}
        counts.update(
            (name, value)
            for name, value in sorted(result.counts.items())
            if name not in counts and name not in COUNT_COLUMNS and not is_null(value)
        )
        entry = {
            "attribute_id": result.spec.attribute_id,
            "attribute_label": result.spec.label,
            "attribute_type": result.spec.type.value,
            "counts": counts,
            "metrics": {
                name: result.metrics[name] for name in metrics if not is_null(result.metrics.get(name))
            },
        }
        if intervals is not None:
            entry["intervals"] = _interval_entries(intervals.get(result.spec.attribute_id, {}), metrics)
        attributes.append(entry)
    report: dict[str, Any] = {
        "extraction_run_id": evaluation.run_id,
        "format_version": METRICS_JSON_FORMAT_VERSION,
    }
    if intervals_config is not None:
        report["intervals_config"] = dict(intervals_config)
    report["attributes"] = attributes
    return report


def _interval_entries(per_metric: Mapping[str, Interval], metrics: Sequence[str]) -> dict[str, dict]:
    """Defined intervals in metric column order (then any other, by name)."""
    order = {name: index for index, name in enumerate(metrics)}
    names = sorted(per_metric, key=lambda name: (order.get(name, len(order)), name))
    return {name: entry for name in names if (entry := per_metric[name].stored()) is not None}


def format_metrics_table(evaluation: ExtractionEvaluation, custom_metrics: Sequence[str] = ()) -> str:
    """A fixed-width table of the headline metrics for a terminal. A metric null because predictions
    are missing shows its `_given_prediction` value in parentheses, with a footnote, so a blank is
    never all a user learns."""
    headline = [name for name in metric_column_names(evaluation, custom_metrics) if "_given_" not in name]
    count_names = ("n_gold_instances", "n_missing_predictions", "n_invalid_gold")
    header = ["attribute", "type", "n_gold", "n_missing", "n_invalid_gold", *headline]
    body = []
    used_given_prediction = False
    for result in sorted_results(evaluation):
        cells = [
            result.spec.label,
            result.spec.type.value,
            *(_console(result.counts.get(n)) for n in count_names),
        ]
        for name in headline:
            value = result.metrics.get(name)
            given = result.metrics.get(name + "_given_prediction")
            if is_null(value) and not is_null(given):
                cells.append(f"({_console(given)})")
                used_given_prediction = True
            else:
                cells.append(_console(value))
        body.append(cells)
    lines = text_table([header, *body])
    if used_given_prediction:
        lines.append(
            "(x): null over all documents because predictions are missing; x is the value on the "
            "documents with a prediction (the *_given_prediction column)."
        )
    return "\n".join(lines)


def _console(value: float | int | None) -> str:
    if is_null(value):
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
