"""What a scored document keeps: a compact row of integer counts per document and per type.

The scores (`SpanScores`) store only the counts that cannot be derived from others (STORED_FIELDS,
TYPE_STORED_FIELDS) in 32-bit integers: 100,000 documents must fit in memory at once. The
full, named counts (COUNT_FIELDS, TYPE_FIELDS) are rebuilt, vectorised, a column at a time by
`derived_count` (all of them: `expand_counts`, `expand_type_counts`):
- spans_exact / spans_overlap: gt_total is the number of gold spans, pred_total of predictions;
- nervaluate: every gold span is claimed at most once, by a COR or an INC prediction, and every
  prediction is COR, INC or SPU, so MIS = gold - COR - INC and SPU = predicted - COR - INC; the
  partial schema is the exact schema with INC renamed PAR (see nervaluate_counts); per type,
  strict is exact and ent_type has no INC.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from metrics.engine.spans.nervaluate_counts import COUNT_NAMES, SCHEMAS

LEAKAGE_CONDITIONS = ("any_char", "any_char_scored", "entity_missed")
# The conditions a leaked gold span meets, by its condition code 2 * (a scored code point leaked) +
# (the span was missed entirely), as shared tuples (one object, not one per span).
CONDITIONS_OF_LEAK_CODE = tuple(
    ("any_char", *(("any_char_scored",) if scored else ()), *(("entity_missed",) if missed else ()))
    for scored in (False, True)
    for missed in (False, True)
)
CONFUSION_NAMES = ("tp", "fp", "fn")
EXISTENCE_NAMES = ("gt_total", "gt_matched", "pred_total", "pred_matched")
# The families of micro and macro in results.json: the key path, dotted, and the counts; COUNT_FIELDS
# names a count "<family>.<count>".
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("chars.all", (*CONFUSION_NAMES, "tn")),
    ("chars.scored", (*CONFUSION_NAMES, "tn")),
    ("chars_typed", CONFUSION_NAMES),
    ("tokens.binary", CONFUSION_NAMES),
    ("tokens.typed", CONFUSION_NAMES),
    *(
        (f"spans_{match}.{kind}", EXISTENCE_NAMES)
        for match in ("exact", "overlap")
        for kind in ("type_agnostic", "typed")
    ),
    *((f"nervaluate.{schema}", COUNT_NAMES) for schema in SCHEMAS),
)
# Per type. `chars_typed.covered_by_any`: gold code points of the type covered by a prediction of
# any type (the numerator of `char_recall`).
_TYPE_FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("chars_typed", (*CONFUSION_NAMES, "covered_by_any")),
    ("tokens", CONFUSION_NAMES),
    ("spans_exact", EXISTENCE_NAMES),
    ("spans_overlap", EXISTENCE_NAMES),
    *((f"nervaluate.{schema}", COUNT_NAMES) for schema in SCHEMAS),
)
# Counts that follow from others (`derived_count`); per type, also those of `_TYPE_STORED_AS`.
_DERIVED = ("gt_total", "pred_total", "partial", "missed", "spurious")


def _named(families: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[str, ...]:
    return tuple(f"{family}.{count}" for family, counts in families for count in counts)


def _stored(names: tuple[str, ...], *derived: str) -> tuple[str, ...]:
    return tuple(
        name
        for name in names
        if not (name.startswith(("nervaluate.partial.", *derived)) or name.rpartition(".")[2] in _DERIVED)
    )


# Every per-document count by name, dotted like the key paths of results.json.
COUNT_FIELDS: tuple[str, ...] = (
    *_named(FAMILIES),
    *(
        f"leakage.{cond}.{c}"
        for cond in LEAKAGE_CONDITIONS
        for c in ("gold_spans_affected", "leaked_characters")
    ),
    *(
        f"document.{c}"
        for c in ("gold_spans", "predicted_spans", "characters", "restricted_predictions_dropped")
    ),
)
STORED_FIELDS = _stored(COUNT_FIELDS)
TYPE_FIELDS: tuple[str, ...] = (
    "gold",
    "predicted",
    *_named(_TYPE_FAMILIES),
    *(f"leakage.{condition}.gold_spans_affected" for condition in LEAKAGE_CONDITIONS),
)
TYPE_STORED_FIELDS = _stored(TYPE_FIELDS, "nervaluate.strict.", "nervaluate.ent_type.incorrect")

N_STORED = len(STORED_FIELDS)
N_TYPE_STORED = len(TYPE_STORED_FIELDS)


def expand_counts(stored: np.ndarray) -> dict[str, np.ndarray]:
    """Every COUNT_FIELDS column (int64), in order, from rows of STORED_FIELDS (shape n x N_STORED)."""
    return _expanded(stored, STORED_FIELDS, COUNT_FIELDS, {})


def expand_type_counts(stored: np.ndarray) -> dict[str, np.ndarray]:
    """Every TYPE_FIELDS column (int64), in order, from rows of TYPE_STORED_FIELDS."""
    return _expanded(stored, TYPE_STORED_FIELDS, TYPE_FIELDS, _TYPE_STORED_AS)


# Per type, strict is exact (and ent_type has no INC: `_expanded`).
_TYPE_STORED_AS = {
    "document.gold_spans": "gold",
    "document.predicted_spans": "predicted",
    "nervaluate.strict.correct": "nervaluate.exact.correct",
    "nervaluate.strict.incorrect": "nervaluate.exact.incorrect",
}


def _expanded(
    stored: np.ndarray, stored_fields: tuple[str, ...], fields: tuple[str, ...], stored_as: dict[str, str]
) -> dict[str, np.ndarray]:
    stored = np.asarray(stored, dtype=np.int64).reshape(-1, len(stored_fields))
    column = {name: stored[:, k] for k, name in enumerate(stored_fields)}
    column.setdefault("nervaluate.ent_type.incorrect", np.zeros(len(stored), dtype=np.int64))

    def named(name: str) -> np.ndarray:
        return column[stored_as.get(name, name)]

    return {name: column[name] if name in column else derived_count(name, named) for name in fields}


def derived_count(name: str, stored: Callable[[str], np.ndarray]) -> np.ndarray:
    """One COUNT_FIELDS column that is not stored, from the stored columns `stored(name)` gives."""
    family, _, count = name.rpartition(".")
    if count == "gt_total":
        return stored("document.gold_spans")
    if count == "pred_total":
        return stored("document.predicted_spans")
    prefix, schema = family.split(".")
    if schema == "partial":
        if count == "incorrect":
            return np.zeros_like(stored("document.gold_spans"))
        return derived_count(f"{prefix}.exact.{'incorrect' if count == 'partial' else count}", stored)
    if count in ("correct", "incorrect"):
        return stored(name)
    if count == "partial":
        return np.zeros_like(stored("document.gold_spans"))
    claimed = stored(f"{family}.correct") + stored(f"{family}.incorrect")
    side = "document.gold_spans" if count == "missed" else "document.predicted_spans"
    return stored(side) - claimed
