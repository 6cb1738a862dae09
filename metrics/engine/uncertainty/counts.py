"""Per-document counts: the only input the uncertainty statistics need, since every metric is a function
of counts summed over documents: a resample of documents re-weights the rows, and nothing is re-scored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np


class DocumentCounts:
    """Named count columns, one value per document, in ascending `document_id` order.

    Documents are sorted by id on construction, so the same documents in any order give the same
    resamples under the same seed (results never depend on input order). Values are floats so that
    sums of non-integer quantities (absolute errors) fit beside integer counts; they must be finite.
    """

    __slots__ = ("document_ids", "columns")

    def __init__(self, document_ids: Sequence[str], columns: Mapping[str, Sequence[float] | np.ndarray]):
        ids = [str(document_id) for document_id in document_ids]
        if len(set(ids)) != len(ids):
            duplicates = sorted(document_id for document_id, seen in Counter(ids).items() if seen > 1)
            raise ValueError(f"duplicate document ids: {', '.join(duplicates[:10])}")
        order = np.argsort(np.array(ids, dtype=object), kind="stable") if ids else np.arange(0)
        # Columns given in id order are kept as they are: a sorted copy of a 100,000-document table is
        # tens of megabytes held twice.
        in_order = bool(np.array_equal(order, np.arange(len(ids))))
        self.document_ids: tuple[str, ...] = tuple(ids) if in_order else tuple(ids[i] for i in order)
        self.columns: dict[str, np.ndarray] = {}
        for name, values in columns.items():
            array = np.asarray(values, dtype=np.float64)
            if array.shape != (len(ids),):
                raise ValueError(f"column {name!r} has shape {array.shape}; expected ({len(ids)},)")
            if not np.all(np.isfinite(array)):
                raise ValueError(f"column {name!r} holds a value that is not a finite number")
            self.columns[name] = array if in_order else array[order]
        self.columns = dict(sorted(self.columns.items()))

    @classmethod
    def from_rows(
        cls, rows: Mapping[str, Mapping[str, float]], columns: Iterable[str] | None = None
    ) -> DocumentCounts:
        """Build from `{document_id: {column: value}}`.

        A column absent from a document's row is 0 for that document: these are counts, and a count
        that never occurred is zero (a document without a PERSON_NAME span has no PERSON_NAME counts).
        `columns` adds columns that may be absent from every row (they are then all zero).
        """
        names = set(columns or ())
        for row in rows.values():
            names.update(row)
        ids = list(rows)
        table = {name: [float(rows[document_id].get(name, 0.0)) for document_id in ids] for name in names}
        return cls(ids, table)

    @classmethod
    def joined(cls, parts: Sequence[DocumentCounts], *, consume: bool = False) -> DocumentCounts:
        """The counts of documents counted in separate parts (no document in two), as if counted at
        once. `consume`: the parts give up each column as it is joined, so that the parts and the
        whole are never all held at once."""
        ids = [document_id for part in parts for document_id in part.document_ids]
        names = sorted({name for part in parts for name in part.columns})
        columns: dict[str, np.ndarray] = {}
        for name in names:
            columns[name] = np.concatenate([part.column(name) for part in parts])
            if consume:
                for part in parts:
                    part.columns.pop(name, None)
        return cls(ids, columns)

    @property
    def n_documents(self) -> int:
        return len(self.document_ids)

    def column(self, name: str) -> np.ndarray:
        """The column, or zeros when this run never produced that count (see `from_rows`)."""
        found = self.columns.get(name)
        return found if found is not None else np.zeros(self.n_documents)

    def totals(self) -> dict[str, np.ndarray]:
        """Column sums over all documents, each as a length-1 array (the shape metrics take)."""
        return {name: np.array([values.sum()]) for name, values in self.columns.items()}

    def with_columns(self, names: Iterable[str]) -> DocumentCounts:
        """The same documents with only the named columns (absent names are skipped: they are zero)."""
        selected = object.__new__(DocumentCounts)
        selected.document_ids = self.document_ids
        selected.columns = {name: self.columns[name] for name in sorted(set(names)) if name in self.columns}
        return selected

    def restricted_to(self, document_ids: Iterable[str]) -> DocumentCounts:
        """The same columns for the given documents only (which must all be present)."""
        position = {document_id: i for i, document_id in enumerate(self.document_ids)}
        wanted = sorted(set(document_ids))
        missing = [document_id for document_id in wanted if document_id not in position]
        if missing:
            raise KeyError(f"documents not in these counts: {', '.join(missing[:10])}")
        index = np.array([position[document_id] for document_id in wanted], dtype=np.intp)
        return DocumentCounts(wanted, {name: values[index] for name, values in self.columns.items()})
