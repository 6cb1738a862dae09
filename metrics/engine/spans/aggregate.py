"""From per-document counts to the results.json body (docs/semantics.md section 1).

Sums are of integers and means use exactly rounded sums (`math.fsum`'s), so the result is the same whatever
the order of the documents or the way they were split into chunks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import product

import numpy as np

from metrics.engine.spans.measures import exactly_rounded_sum, family_measures
from metrics.engine.spans.nervaluate_counts import COUNT_NAMES, SCHEMAS
from metrics.engine.spans.score import (
    CONDITIONS_OF_LEAK_CODE,
    CONFUSION_NAMES,
    EXISTENCE_NAMES,
    FAMILIES,
    LEAKAGE_CONDITIONS,
    N_STORED,
    expand_counts,
    expand_type_counts,
)
from metrics.engine.spans.score_table import SpanScores
from metrics.engine.uncertainty.measures import number_or_none

_MEASURES = ("precision", "recall", "f1", "specificity")


def _scalar(value: np.ndarray | float | int) -> float | int | None:
    """A 0-d or 1-element array to a plain number; NaN (undefined) to None."""
    value = np.asarray(value).reshape(-1)[0]
    return int(value) if np.issubdtype(value.dtype, np.integer) else number_or_none(value)


def _measures_of(counts: Mapping[str, int], family: str, names: Sequence[str]) -> dict:
    """The family's counts (`counts` names them "<family>.<count>") followed by their measures, as
    plain numbers (undefined = None)."""
    picked = {name: counts[f"{family}.{name}"] for name in names}
    sums = {f"{family}.{name}": np.array([count], dtype=np.int64) for name, count in picked.items()}
    measures = family_measures(family, names)
    return {**picked, **{key: _scalar(measure(sums)) for key, measure in measures.items()}}


def _macro_of(family: str, names: Sequence[str], columns: Mapping[str, np.ndarray]) -> dict:
    """Mean of each ratio measure over the documents where it is defined, with those documents' count."""
    result: dict = {}
    entered: dict[str, int] = {}
    for key, measure in family_measures(family, names).items():
        if key not in _MEASURES:
            continue
        values = measure(columns)
        defined = values[~np.isnan(values)]
        entered[key] = int(defined.size)
        result[key] = exactly_rounded_sum(defined) / defined.size if defined.size else None
    result["n_documents"] = entered
    return result


def _put(tree: dict, path: tuple[str, ...], value: dict) -> None:
    for key in path[:-1]:
        tree = tree.setdefault(key, {})
    tree[path[-1]] = value


def _sorted_by_id(scores: SpanScores) -> tuple[list[str], dict[str, np.ndarray], list[int]]:
    """Document ids, their COUNT_FIELDS columns and their reading positions, sorted by document id
    (then by counts, so that even duplicate ids give one order)."""
    ids, counts = scores.document_ids, scores.counts
    if len(set(ids)) == len(ids):
        order = sorted(range(len(ids)), key=ids.__getitem__)
    else:
        keys = [counts[:, k] for k in reversed(range(N_STORED))]
        order = np.lexsort([*keys, np.array(ids, dtype=object).astype(str)]).tolist()
    in_order = order == list(range(len(ids)))  # as most inputs are: no copy of the rows
    rows = counts if in_order else counts[order]
    # Column by column in memory (the transpose of a row-major copy of the transpose): every measure
    # and sum below reads whole columns, which the rows would spread over a cache line a value.
    stored = np.ascontiguousarray(rows.T, dtype=np.int64).T
    return list(ids) if in_order else [ids[i] for i in order], expand_counts(stored), order


def _per_type(scores: SpanScores) -> dict[str, dict]:
    """per_type: each type some document holds, with its counts summed over the documents."""
    present, totals = scores.type_totals()
    return {
        scores.type_names[code]: _per_type_entry(
            {name: int(column[0]) for name, column in expand_type_counts(total).items()}
        )
        for code, total in zip(present.tolist(), totals, strict=True)
    }


def _leaked_text(scores: SpanScores) -> dict[int, list[dict]]:
    """{document's reading position: its leaked gold spans, as per_document lists them}."""
    by_document: dict[int, list[dict]] = {}
    names = scores.type_names
    for document, start, end, code, text, condition in zip(
        scores.leaked_document.tolist(),
        scores.leaked_start.tolist(),
        scores.leaked_end.tolist(),
        scores.leaked_type.tolist(),
        scores.leaked_text,
        scores.leaked_condition.tolist(),
        strict=True,
    ):
        conditions = CONDITIONS_OF_LEAK_CODE[condition]
        span = {
            "start": start,
            "end": end,
            "entity_type": names[code],
            "text": text,
            "conditions": conditions,
        }
        by_document.setdefault(document, []).append(span)
    return by_document


def aggregate(scores: SpanScores, *, include_sensitive_text: bool = False) -> dict:
    """The results.json body: micro, macro, leakage, per_type, per_document, restricted predictions.

    Without include_sensitive_text the result holds no text from the documents; with it, each leaking
    document lists its leaked gold spans and their text.
    """
    ids, columns, order = _sorted_by_id(scores)
    totals = {name: int(column.sum()) for name, column in columns.items()}

    micro: dict = {}
    macro: dict = {}
    for family, names in FAMILIES:
        path = tuple(family.split("."))
        _put(micro, path, _measures_of(totals, family, names))
        _put(macro, path, _macro_of(family, names, columns))

    n_documents = len(ids)
    with_gold = int((columns["document.gold_spans"] > 0).sum())
    leakage: dict = {}
    for condition in LEAKAGE_CONDITIONS:
        affected = columns[f"leakage.{condition}.gold_spans_affected"]
        leaked_ids = [ids[i] for i in np.flatnonzero(affected > 0).tolist()]
        leakage[condition] = {
            "documents_leaked": len(leaked_ids),
            "rate_all_documents": len(leaked_ids) / n_documents if n_documents else None,
            "rate_documents_with_gold": len(leaked_ids) / with_gold if with_gold else None,
            "gold_spans_affected": totals[f"leakage.{condition}.gold_spans_affected"],
            "leaked_characters": totals[f"leakage.{condition}.leaked_characters"],
            "leaked_document_ids": leaked_ids,
        }

    leaked_text = _leaked_text(scores) if include_sensitive_text else {}
    return {
        "micro": micro,
        "macro": macro,
        "leakage": leakage,
        "per_type": _per_type(scores),
        "per_document": _per_document(ids, columns, order, leaked_text),
        "documents_with_gold": with_gold,
        "restricted_predictions_dropped": totals["document.restricted_predictions_dropped"],
        "restricted_predictions_dropped_by_type": dict(sorted(scores.dropped_by_type().items())),
    }


def _per_type_entry(counts: dict[str, int]) -> dict:
    """per_type.<TYPE>: counts and measures of every family restricted to the type.

    char_recall = gold code points of the type covered by a prediction of any type / gold code points
    of the type (was it removed, whatever the predicted type); undefined without gold of the type.
    """
    gold_chars = counts["chars_typed.tp"] + counts["chars_typed.fn"]
    return {
        "gold": counts["gold"],
        "predicted": counts["predicted"],
        "nervaluate": {
            schema: _measures_of(counts, f"nervaluate.{schema}", COUNT_NAMES) for schema in SCHEMAS
        },
        "chars_typed": _measures_of(counts, "chars_typed", CONFUSION_NAMES),
        "char_recall": counts["chars_typed.covered_by_any"] / gold_chars if gold_chars else None,
        "tokens": _measures_of(counts, "tokens", CONFUSION_NAMES),
        "spans_exact": _measures_of(counts, "spans_exact", EXISTENCE_NAMES),
        "spans_overlap": _measures_of(counts, "spans_overlap", EXISTENCE_NAMES),
        "leakage": {
            condition: {"gold_spans_affected": counts[f"leakage.{condition}.gold_spans_affected"]}
            for condition in LEAKAGE_CONDITIONS
        },
    }


# Shared, so that 100,000 rows do not hold 100,000 copies of the same few lists; indexed by the
# leakage flags read as a binary number, first condition highest.
_LEAK_LISTS = [
    [condition for condition, flag in zip(LEAKAGE_CONDITIONS, flags, strict=True) if flag]
    for flags in product((False, True), repeat=len(LEAKAGE_CONDITIONS))
]


def _per_document(
    ids: list[str], columns: dict[str, np.ndarray], order: list[int], leaked_text: dict[int, list[dict]]
) -> list[dict]:
    """per_document[]: a compact row per document, sorted by document id.

    `leaked` lists the leakage conditions the document meets (empty when it leaks nothing).
    """
    leak_code = np.zeros(len(ids), dtype=np.int64)
    for condition in LEAKAGE_CONDITIONS:
        leak_code = 2 * leak_code + (columns[f"leakage.{condition}.gold_spans_affected"] > 0)
    document = (
        columns[f"document.{name}"].tolist() for name in ("gold_spans", "predicted_spans", "characters")
    )
    leaked = map(_LEAK_LISTS.__getitem__, leak_code.tolist())
    rows = [
        {
            "document_id": document_id,
            "gold_spans": gold,
            "predicted_spans": predicted,
            "characters": characters,
            "chars_all": chars_all,
            "chars_scored": chars_scored,
            "leaked": conditions,
        }
        for document_id, gold, predicted, characters, chars_all, chars_scored, conditions in zip(
            ids, *document, _chars_rows(columns, "all"), _chars_rows(columns, "scored"), leaked, strict=True
        )
    ]
    if leaked_text:
        row_of = {position: row for row, position in enumerate(order)}
        for position, spans in leaked_text.items():
            rows[row_of[position]]["leaked_spans"] = spans
    return rows


def _chars_rows(columns: dict[str, np.ndarray], variant: str) -> list[dict[str, int]]:
    """Each document's chars.<variant> counts, as per_document lists them."""
    counts = (columns[f"chars.{variant}.{name}"].tolist() for name in ("tp", "fp", "fn", "tn"))
    return [{"tp": tp, "fp": fp, "fn": fn, "tn": tn} for tp, fp, fn, tn in zip(*counts, strict=True)]
