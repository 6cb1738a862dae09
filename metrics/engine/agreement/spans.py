"""Agreement between annotators on spans: the figures of docs/agreement.md ("Spans"), each with a
cluster-bootstrap interval over documents (`<name>_ci`) from the uncertainty module: the statistics
are functions of per-document sums (`agreement.measures`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from metrics.engine.agreement.libraries import library_alpha, library_kappa
from metrics.engine.agreement.measures import (
    CohenKappa,
    NominalAlpha,
    PairF1,
    kappa_counts,
    nominal_alpha_counts,
)
from metrics.engine.spans.batch import score_span_columns
from metrics.engine.spans.columns import SpanColumns
from metrics.engine.spans.score import expand_counts
from metrics.engine.spans.types import DocumentSpans, Span
from metrics.engine.uncertainty.bootstrap import IntervalSettings, cluster_bootstrap_intervals
from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.engine.uncertainty.measures import columns_read, number_or_none

OUTSIDE = "O"
# The `krippendorff` package holds a units x values x values array (about 1 KB a character for three
# annotators). Above this many characters alpha comes from the coincidence sums of
# `agreement.measures` instead, the formula the package implements, in O(characters) memory.
LIBRARY_ALPHA_MAX_UNITS = 200_000
SpanTuple = tuple[int, int, str]
F1_MATCHING = {
    "f1_exact": "spans_exact.type_agnostic",
    "f1_overlap": "spans_overlap.type_agnostic",
    "f1_typed": "spans_exact.typed",
}


@dataclass(frozen=True, slots=True)
class AnnotatedDocument:
    """One document's text and the spans of each annotator who annotated it (`{annotator: spans}`)."""

    document_id: str
    text: str
    annotations: Mapping[str, Sequence[SpanTuple]]


def with_intervals(
    values: Mapping[str, float | None],
    counts: DocumentCounts,
    measures: Mapping[str, Any],
    settings: IntervalSettings,
) -> dict[str, Any]:
    """`{name: value, <name>_ci: its interval}` for each value; the interval of a measure of `counts`,
    null where the value is null or intervals are off."""
    intervals = cluster_bootstrap_intervals(counts, measures, settings) if settings.enabled else {}
    entry: dict[str, Any] = {}
    for name, value in values.items():
        interval = intervals[name].stored() if name in intervals and value is not None else None
        entry[name], entry[f"{name}_ci"] = value, interval
    return entry


def character_labels(text: str, spans: Sequence[SpanTuple], labels: Sequence[str]) -> np.ndarray:
    """Label index of every code point of `text` (index 0 is `O`); the first covering span wins."""
    index = {label: position for position, label in enumerate(labels)}
    result = np.zeros(len(text), dtype=np.int64)
    # Painted last to first, so the first span in (start, end, type) order is the one that stays.
    for start, end, entity_type in sorted(spans, reverse=True):
        result[start:end] = index[entity_type]
    return result


def label_set(documents: Sequence[AnnotatedDocument]) -> list[str]:
    """`O` then every entity type any annotator used, sorted."""
    types = {span[2] for document in documents for spans in document.annotations.values() for span in spans}
    return [OUTSIDE, *sorted(types)]


def span_agreement(documents: Sequence[AnnotatedDocument], *, settings: IntervalSettings) -> dict[str, Any]:
    """The `spans` object of agreement.json: `pairs`, `overall`, `single_annotator_documents`, `labels`."""
    single = sorted(document.document_id for document in documents if len(document.annotations) < 2)
    shared = sorted(
        (document for document in documents if len(document.annotations) >= 2),
        key=lambda document: document.document_id,
    )
    annotators = sorted({annotator for document in shared for annotator in document.annotations})
    labels = label_set(shared)
    char_labels = {
        document.document_id: {
            annotator: character_labels(document.text, spans, labels)
            for annotator, spans in document.annotations.items()
        }
        for document in shared
    }
    pairs = [
        _pair(
            a,
            b,
            [d for d in shared if a in d.annotations and b in d.annotations],
            char_labels,
            labels,
            settings,
        )
        for a, b in combinations(annotators, 2)
    ]
    return {
        "pairs": pairs,
        "overall": _overall(shared, annotators, char_labels, labels, settings),
        "single_annotator_documents": single,
        "labels": labels,
    }


def _pair(
    a: str,
    b: str,
    documents: list[AnnotatedDocument],
    char_labels: Mapping[str, Mapping[str, np.ndarray]],
    labels: Sequence[str],
    settings: IntervalSettings,
) -> dict[str, Any]:
    entry: dict[str, Any] = {"a": a, "b": b, "documents": len(documents)}
    measures: dict[str, Any] = {name: PairF1(family) for name, family in F1_MATCHING.items()}
    measures["cohen_kappa_chars"] = CohenKappa("kappa", labels)
    if not documents:
        return entry | {key: None for name in measures for key in (name, f"{name}_ci")}
    scores = score_span_columns(
        SpanColumns.of_documents(
            [
                DocumentSpans(
                    d.document_id,
                    d.text,
                    [Span(*span) for span in d.annotations[a]],
                    [Span(*span) for span in d.annotations[b]],
                )
                for d in documents
            ]
        )
    )
    stored = expand_counts(scores.counts)
    f1_columns = columns_read(measures[name] for name in F1_MATCHING)
    columns = {name: stored[name].astype(np.float64) for name in sorted(f1_columns)}
    kappa_rows = [
        kappa_counts("kappa", char_labels[d.document_id][a], char_labels[d.document_id][b], labels)
        for d in documents
    ]
    for name in {key for row in kappa_rows for key in row}:
        columns[name] = np.array([row.get(name, 0.0) for row in kappa_rows], dtype=np.float64)
    counts = DocumentCounts([d.document_id for d in documents], columns)
    totals = counts.totals()
    values = {name: number_or_none(measures[name](totals)[0]) for name in F1_MATCHING}
    values["cohen_kappa_chars"] = library_kappa(
        np.concatenate([char_labels[d.document_id][a] for d in documents]),
        np.concatenate([char_labels[d.document_id][b] for d in documents]),
    )
    return entry | with_intervals(values, counts, measures, settings)


def _overall(
    documents: list[AnnotatedDocument],
    annotators: list[str],
    char_labels: Mapping[str, Mapping[str, np.ndarray]],
    labels: Sequence[str],
    settings: IntervalSettings,
) -> dict[str, Any]:
    overall: dict[str, Any] = {"annotators": annotators, "documents": len(documents)}
    if not documents:
        overall["krippendorff_alpha_chars"] = overall["krippendorff_alpha_chars_ci"] = None
        return overall
    rows = {}
    for document in documents:
        value_counts = np.zeros((len(document.text), len(labels)))
        for per_character in char_labels[document.document_id].values():
            value_counts[np.arange(len(per_character)), per_character] += 1
        rows[document.document_id] = nominal_alpha_counts("alpha", value_counts, labels)
    counts = DocumentCounts.from_rows(rows, columns=["alpha.observed"])
    measure = NominalAlpha("alpha", labels)
    units = sum(len(document.text) for document in documents)
    if units <= LIBRARY_ALPHA_MAX_UNITS:
        reliability = np.array(
            [
                np.concatenate(
                    [
                        char_labels[d.document_id].get(annotator, np.full(len(d.text), np.nan))
                        for d in documents
                    ]
                )
                for annotator in annotators
            ],
            dtype=np.float64,
        )
        value = library_alpha(reliability, "nominal", value_domain=list(range(len(labels))))
        overall["krippendorff_alpha_chars_computed_by"] = "krippendorff"
    else:
        value = number_or_none(measure(counts.totals())[0])
        overall["krippendorff_alpha_chars_computed_by"] = "coincidence_sums"
    return overall | with_intervals(
        {"krippendorff_alpha_chars": value}, counts, {"krippendorff_alpha_chars": measure}, settings
    )
