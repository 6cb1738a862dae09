"""The scores of many documents as columns: what the batch scorer gives, the merge joins and
`aggregate` and the intervals read. No Python object per document: 100,000 documents are a few arrays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from metrics.engine.spans.score import N_STORED, N_TYPE_STORED

# The groups of columns keyed by document (`<group>_document`), each column named for its group.
DOCUMENT_GROUPS = ("row", "leaked", "dropped")
# Type rows summed at a time by `type_totals`.
_TYPE_BLOCK_ROWS = 4096


def _empty(dtype: type = np.int64, width: int | None = None) -> np.ndarray:
    return np.zeros((0,) if width is None else (0, width), dtype=dtype)


@dataclass(frozen=True, slots=True, eq=False)
class SpanScores:
    """One row of STORED_FIELDS per document (`counts`); one row of TYPE_STORED_FIELDS per (document,
    type) the document holds (`rows`); the leaked gold spans and the dropped predictions as columns
    keyed by document. `type_names` are sorted; `row_type`, `leaked_type` and `dropped_type` index them.
    """

    document_ids: list[str]
    counts: np.ndarray  # int32, documents x N_STORED
    type_names: tuple[str, ...]
    row_document: np.ndarray  # int64, non-decreasing
    row_type: np.ndarray  # int64, increasing within a document
    rows: np.ndarray  # int32, type rows x N_TYPE_STORED
    leaked_document: np.ndarray  # int64, non-decreasing; spans of a document sorted by (start, end, type)
    leaked_start: np.ndarray
    leaked_end: np.ndarray
    leaked_type: np.ndarray
    leaked_condition: np.ndarray  # int8: 2 * any_char_scored + entity_missed
    leaked_text: list[str]
    dropped_document: np.ndarray  # int64, non-decreasing; types of a document in name order
    dropped_type: np.ndarray
    dropped_count: np.ndarray

    def __len__(self) -> int:
        return len(self.document_ids)

    @classmethod
    def empty(cls) -> SpanScores:
        return cls(
            [], _empty(np.int32, N_STORED), (), _empty(), _empty(), _empty(np.int32, N_TYPE_STORED),
            _empty(), _empty(), _empty(), _empty(), _empty(np.int8), [], _empty(), _empty(), _empty(),
        )  # fmt: skip

    def dropped_by_type(self) -> Counter[str]:
        """Predictions dropped by restrict_to_gt_types, summed per type over the documents."""
        totals = np.bincount(self.dropped_type, weights=self.dropped_count, minlength=len(self.type_names))
        return Counter(
            {self.type_names[code]: int(totals[code]) for code in np.unique(self.dropped_type).tolist()}
        )

    def with_type_rows_summed(self, *, keep_leaked: bool) -> SpanScores:
        """These documents with each type's rows summed into one row (given to the first document),
        and the leaked spans dropped unless `keep_leaked`: all that `aggregate` reads of them (it sums
        a type's rows over the documents, and lists leaked spans only with their text), in a fraction
        of the memory. Not for per-document use: the summed rows belong to no one document. The
        columns stay as they are when a sum would not fit the rows' int32.
        """
        present, totals = self.type_totals()
        if len(self) == 0 or np.any(totals > np.iinfo(np.int32).max):
            summed = self
        else:
            summed = replace(
                self,
                row_document=np.zeros(len(present), dtype=self.row_document.dtype),
                row_type=present.astype(self.row_type.dtype),
                rows=totals.astype(self.rows.dtype),
            )
        if keep_leaked:
            return summed
        no_leaks = SpanScores.empty()
        leaked = [field.name for field in fields(SpanScores) if field.name.startswith("leaked_")]
        return replace(summed, **{name: getattr(no_leaks, name) for name in leaked})

    def type_totals(self) -> tuple[np.ndarray, np.ndarray]:
        """The types some row holds (codes, increasing) and each one's rows summed (int64, types x
        N_TYPE_STORED). A type at a time, in blocks of rows: memory stays flat for any corpus, and
        each row is read once, whole (a column at a time read all the rows' memory once a column)."""
        present = np.flatnonzero(np.bincount(self.row_type, minlength=len(self.type_names)))
        totals = np.zeros((len(present), N_TYPE_STORED), dtype=np.int64)
        for k, code in enumerate(present.tolist()):
            selected = np.flatnonzero(self.row_type == code)
            for first in range(0, len(selected), _TYPE_BLOCK_ROWS):
                totals[k] += self.rows[selected[first : first + _TYPE_BLOCK_ROWS]].sum(axis=0, dtype=np.int64)
        return present, totals

    def take(self, order: Sequence[int] | np.ndarray) -> SpanScores:
        """The documents at these indices, in this order (each at most once)."""
        order = np.asarray(order, dtype=np.int64)
        new_index = np.full(len(self) + 1, -1, dtype=np.int64)
        new_index[order] = np.arange(len(order))
        ids = self.document_ids
        taken: dict[str, Any] = {
            "document_ids": [ids[i] for i in order.tolist()],
            "type_names": self.type_names,
        }
        taken["counts"] = self.counts[order]
        # Each group of columns keyed by document (`<group>_document`): its entries of the documents
        # taken, in their new order.
        for group in DOCUMENT_GROUPS:
            moved = new_index[getattr(self, f"{group}_document")]
            kept = np.flatnonzero(moved >= 0)
            picked = kept[np.argsort(moved[kept], kind="stable")]
            for name in (field.name for field in fields(SpanScores) if field.name.startswith(group)):
                values = getattr(self, name)
                taken[name] = (
                    [values[k] for k in picked.tolist()] if isinstance(values, list) else values[picked]
                )
            taken[f"{group}_document"] = moved[picked]
        return SpanScores(**taken)

    def followed_by(self, other: SpanScores) -> SpanScores:
        """These documents, then `other`'s, both scored with the same type names (two halves of a
        batch); chunks with their own type names meet in the pipeline's merge instead."""
        joined: dict[str, Any] = {"type_names": self.type_names}
        for field in fields(SpanScores):
            ours, theirs = getattr(self, field.name), getattr(other, field.name)
            if isinstance(ours, list):
                joined[field.name] = ours + theirs
            elif isinstance(ours, np.ndarray):
                shifted = theirs + len(self) if field.name.endswith("_document") else theirs
                joined[field.name] = np.concatenate((ours, shifted))
        return SpanScores(**joined)
