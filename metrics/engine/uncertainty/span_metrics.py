"""The span metrics of issue 8, over the span engine's per-document counts.

The count table (`pipeline.intervals.span_count_table`) holds, per document, every
`spans.score.COUNT_FIELDS` count, `chars_typed.<TYPE>.{tp,fp,fn,covered_by_any}` per type and
`leakage.<condition>.leaked`. Metric names are results.json paths (`micro.chars.all.f1`), so an
interval is stored beside its metric at `<path>_ci` (the list: docs/uncertainty.md). Definitions match
`spans.measures`. Each per-type metric is one Holm family across types. Leakage rates have exact
Clopper–Pearson intervals (documents are the trials) and are compared between runs by McNemar.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ..spans.score import LEAKAGE_CONDITIONS
from .counts import DocumentCounts
from .measures import HarmonicMean, Measure, MetricDefinition, f1, precision, ratio, recall

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
    micro: dict[str, tuple[Measure, Measure, Measure]] = {}  # precision, recall, F1
    for variant in ("all", "scored"):
        tp, fp, fn = (f"chars.{variant}.{count}" for count in ("tp", "fp", "fn"))
        micro[f"chars.{variant}"] = (precision(tp, fp), recall(tp, fn), f1(tp, fp, fn))
    for schema in ("strict", "partial"):
        prefix = f"nervaluate.{schema}"
        cor, inc, par, mis, spu = (
            f"{prefix}.{count}" for count in ("correct", "incorrect", "partial", "missed", "spurious")
        )
        credit = {cor: 1.0, par: 0.5} if schema == "partial" else {cor: 1.0}
        schema_precision = ratio(credit, {cor: 1.0, inc: 1.0, par: 1.0, spu: 1.0})
        schema_recall = ratio(credit, {cor: 1.0, inc: 1.0, par: 1.0, mis: 1.0})
        micro[prefix] = (schema_precision, schema_recall, HarmonicMean(schema_precision, schema_recall))
    overlap = "spans_overlap.type_agnostic"
    overlap_recall = ratio(f"{overlap}.gt_matched", f"{overlap}.gt_total")
    overlap_precision = ratio(f"{overlap}.pred_matched", f"{overlap}.pred_total")
    micro[overlap] = (overlap_precision, overlap_recall, HarmonicMean(overlap_precision, overlap_recall))
    definitions = {
        f"micro.{prefix}.{metric}": MetricDefinition(measure)
        for prefix, measures in micro.items()
        for metric, measure in zip(("precision", "recall", "f1"), measures, strict=True)
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
