"""The span metrics of issue 8, over the span engine's per-document counts.

The count table (`pipeline.intervals.span_count_table`) holds, per document, every
`spans.score.COUNT_FIELDS` count, `chars_typed.<TYPE>.{tp,fp,fn,covered_by_any}` per type and
`leakage.<condition>.leaked`. Metric names are results.json paths (`micro.chars.all.f1`), so an
interval is stored beside its metric at `<path>_ci` (the list and the tests: docs/uncertainty.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ..spans.measures import family_measures
from ..spans.score import FAMILIES, LEAKAGE_CONDITIONS
from .counts import DocumentCounts
from .measures import MetricDefinition, ratio, recall

# The micro families with intervals, in the order their metrics are listed.
MICRO_FAMILIES = (
    "chars.all",
    "chars.scored",
    "nervaluate.strict",
    "nervaluate.partial",
    "spans_overlap.type_agnostic",
)

# `{leakage rate path: (leaked documents column, trials column)}` for every condition and rate.
LEAKAGE_RATE_COLUMNS = {
    f"leakage.{condition}.{rate}": (f"leakage.{condition}.leaked", trials)
    for condition in LEAKAGE_CONDITIONS
    for rate, trials in (
        ("rate_all_documents", "documents"),
        ("rate_documents_with_gold", "documents_with_gold"),
    )
}


def span_document_counts(table: Mapping[str, np.ndarray]) -> DocumentCounts:
    """DocumentCounts from a per-document count table (its `document_id` entry gives the documents),
    with `documents` (1 each) and `documents_with_gold` (gold spans > 0) for the leakage rates."""
    columns = {
        name: np.asarray(values, dtype=np.float64) for name, values in table.items() if name != "document_id"
    }
    columns["documents"] = np.ones(len(table["document_id"]))
    columns["documents_with_gold"] = (columns["document.gold_spans"] > 0).astype(np.float64)
    return DocumentCounts(list(table["document_id"]), columns)


def span_metric_definitions(columns: Iterable[str]) -> dict[str, MetricDefinition]:
    """Every span metric with an interval or a paired test for a table with these columns, keyed by its
    results.json path. Per-type metrics are defined for the types the columns hold; `char_recall` only
    where `covered_by_any` is there (a missing count must not read as zero)."""
    columns = set(columns)
    names = dict(FAMILIES)
    definitions = {
        f"micro.{family}.{metric}": MetricDefinition(family_measures(family, names[family])[metric])
        for family in MICRO_FAMILIES
        for metric in ("precision", "recall", "f1")
    }
    entity_types = {
        name.split(".")[1] for name in columns if name.startswith("chars_typed.") and name.count(".") == 2
    }
    for entity_type in sorted(entity_types):
        prefix = f"chars_typed.{entity_type}"
        gold_chars = {f"{prefix}.tp": 1.0, f"{prefix}.fn": 1.0}
        definitions[f"per_type.{entity_type}.chars_typed.recall"] = MetricDefinition(
            recall(f"{prefix}.tp", f"{prefix}.fn"), family="per_type.chars_typed.recall"
        )
        if f"{prefix}.covered_by_any" in columns:
            definitions[f"per_type.{entity_type}.char_recall"] = MetricDefinition(
                ratio(f"{prefix}.covered_by_any", gold_chars), family="per_type.char_recall"
            )
    for name, (leaked, trials) in LEAKAGE_RATE_COLUMNS.items():
        definitions[name] = MetricDefinition(ratio(leaked, trials), correctness=(leaked, trials))
    return definitions
