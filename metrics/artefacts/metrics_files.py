"""`metrics.csv`, `metrics.json` and the console table: one row per attribute (SEMANTICS.md section 3).

Rows are sorted by attribute label (then id, so equal labels still sort the same way every run). The
columns are `extraction_run_id, attribute_id, attribute_label, attribute_type`, the engine's
COUNT_COLUMNS, then the metrics in the engine's `metric_column_order` for the attribute types present
(any other metric a result carries follows, sorted by name, rather than being dropped). A metric that
could not be computed is an empty cell in the CSV and is left out of the JSON.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence

from metrics.artefacts.cells import Destination, cell, is_null, open_destination
from metrics.engine.attributes import COUNT_COLUMNS, metric_column_order
from metrics.engine.attributes.types import AttributeResult, ExtractionEvaluation

IDENTITY_COLUMNS = ("extraction_run_id", "attribute_id", "attribute_label", "attribute_type")
METRICS_JSON_FORMAT_VERSION = 1


def sorted_results(evaluation: ExtractionEvaluation) -> list[AttributeResult]:
    return sorted(evaluation.attributes, key=lambda result: (result.spec.label, result.spec.attribute_id))


def metric_columns(evaluation: ExtractionEvaluation, custom_metrics: Sequence[str] = ()) -> list[str]:
    """The metric columns of metrics.csv, in order."""
    types_present = sorted({result.spec.type for result in evaluation.attributes})
    ordered = list(metric_column_order(types_present, list(custom_metrics)))
    known = set(ordered)
    extra = sorted({name for result in evaluation.attributes for name in result.metrics} - known)
    return ordered + extra


def write_metrics_csv(
    evaluation: ExtractionEvaluation, destination: Destination, *, custom_metrics: Sequence[str] = ()
) -> None:
    metrics = metric_columns(evaluation, custom_metrics)
    with open_destination(destination) as handle:
        writer = csv.writer(handle)
        writer.writerow([*IDENTITY_COLUMNS, *COUNT_COLUMNS, *metrics])
        for result in sorted_results(evaluation):
            spec = result.spec
            writer.writerow(
                [
                    cell(evaluation.run_id),
                    cell(spec.attribute_id),
                    cell(spec.label),
                    spec.type.value,
                    *(cell(result.counts.get(name)) for name in COUNT_COLUMNS),
                    *(cell(result.metrics.get(name)) for name in metrics),
                ]
            )


def metrics_report(evaluation: ExtractionEvaluation, custom_metrics: Sequence[str] = ()) -> dict:
    """The content of metrics.json: the same values as metrics.csv, nulls omitted."""
    metrics = metric_columns(evaluation, custom_metrics)
    attributes = []
    for result in sorted_results(evaluation):
        counts = {name: result.counts[name] for name in COUNT_COLUMNS if not is_null(result.counts.get(name))}
        counts.update(
            (name, value)
            for name, value in sorted(result.counts.items())
            if name not in counts and name not in COUNT_COLUMNS and not is_null(value)
        )
        attributes.append(
            {
                "attribute_id": result.spec.attribute_id,
                "attribute_label": result.spec.label,
                "attribute_type": result.spec.type.value,
                "counts": counts,
                "metrics": {
                    name: result.metrics[name] for name in metrics if not is_null(result.metrics.get(name))
                },
            }
        )
    return {
        "extraction_run_id": evaluation.run_id,
        "format_version": METRICS_JSON_FORMAT_VERSION,
        "attributes": attributes,
    }


def write_metrics_json(
    evaluation: ExtractionEvaluation, destination: Destination, *, custom_metrics: Sequence[str] = ()
) -> None:
    with open_destination(destination) as handle:
        json.dump(metrics_report(evaluation, custom_metrics), handle, indent=2, ensure_ascii=False)
        handle.write("\n")


def format_metrics_table(evaluation: ExtractionEvaluation, custom_metrics: Sequence[str] = ()) -> str:
    """A fixed-width table for a terminal: the headline metrics (no stratified `_given_` columns).

    A metric that could not be computed shows `-`. When it is null because predictions are missing,
    the cell shows its `_given_prediction` value in parentheses instead, with a footnote, so a blank
    is never all a user learns (SEMANTICS.md section 2). metrics.csv has every column.
    """
    headline = [name for name in metric_columns(evaluation, custom_metrics) if "_given_" not in name]
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
    widths = [max(len(row[index]) for row in [header, *body]) for index in range(len(header))]
    lines = [
        "  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *body]
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
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
