"""Comparison rows of a whole run on several cores: the documents are split in contiguous slices, the
calling process scores the first slice while forked worker processes score the others.

The result is the same as one sequential pass: rows in gold-document order then attribute order,
warnings in the same order, the per-attribute counts of predictions outside the schema merged
before their warnings are written. Workers are forked (they read the inputs from the parent's memory,
nothing is pickled on the way in) and send their rows back as plain tuples, the cheapest form to
pickle; the parent rebuilds the ComparisonRow objects.

Only where forking is safe and useful: Linux, a process that may have children (a Celery
prefork worker is daemonic and may not), a single thread (forking a threaded process can deadlock a
child on a lock another thread held), enough documents to repay starting a process, and by default
a machine with an idle core (on a busy one a second process is slower, see `has_idle_core`).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
from collections.abc import Iterator, Mapping, Sequence
from itertools import starmap
from operator import attrgetter
from typing import Any

from metrics.engine.attributes.comparison import (
    _AttributePlan,
    _ChunkState,
    _compare_chunk,
    add_unknown_counts,
    check_schema,
    documents_to_compare,
    unknown_attribute_warnings,
    validate_settings,
)
from metrics.engine.attributes.types import (
    AttributeSpec,
    ComparisonRow,
    EvaluationSettings,
    GoldDocument,
    PredictionDocument,
)
from metrics.engine.forking import ForkedWork, can_fork

# Below this many documents (x attributes: rows) one process is faster than starting another.
PARALLEL_MIN_DOCUMENTS = 2_000
MAX_DEFAULT_WORKERS = 2
# Each worker sends its rows back in this many pieces, so the parent unpickles one piece while the
# worker scores the next, and never holds all of a worker's pickled rows at once.
PIECES_PER_WORKER = 4
# The calling process scores this fraction of an equal share (it also rebuilds the workers' rows).
OWN_SHARE_FACTOR = 0.95

_ROW_FIELDS = tuple(field.name for field in dataclasses.fields(ComparisonRow))
_row_values = attrgetter(*_ROW_FIELDS)

# The inputs, set by the parent just before it forks its workers and cleared after: the workers
# inherit them in their copy of memory.
_FORKED_INPUTS: tuple[Any, ...] | None = None


def can_fork_workers() -> bool:
    """True when this process may fork scoring workers: Linux with one thread (`can_fork`), and not a
    daemonic process (a Celery prefork child, whose pool manages its processes)."""
    return can_fork() and not multiprocessing.current_process().daemon


def has_idle_core() -> bool:
    """True when the machine has a core to spare: a 1-minute load average of at most CPU count - 1.

    On a machine busy with other work a second process only competes for the same cores: measured on
    two cores at a load average of 3, scoring in two processes took longer (wall) than in one, and
    the forked process's copy-on-write page faults cost CPU time besides.
    """
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this system: assume nothing else runs
        return True
    return load <= (os.cpu_count() or 1) - 1


def resolve_workers(workers: int | None, n_documents: int) -> int:
    """How many processes score: `workers` when given (1 where forking is not possible), else
    min(2, CPU count) for a run of at least PARALLEL_MIN_DOCUMENTS documents on a machine with an
    idle core (`has_idle_core`), and 1 otherwise."""
    if workers is None:
        if n_documents < PARALLEL_MIN_DOCUMENTS or not has_idle_core():
            return 1
        workers = min(MAX_DEFAULT_WORKERS, os.cpu_count() or 1)
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    workers = min(workers, max(n_documents, 1))
    if workers > 1 and not can_fork_workers():
        return 1
    return workers


def _score_slice(start: int, stop: int) -> tuple[list[tuple[Any, ...]], list[str], dict[str, int]]:
    """In a worker: the rows of documents[start:stop] as tuples, their warnings, unknown attributes."""
    if _FORKED_INPUTS is None:  # pragma: no cover - only a spawned (not forked) worker gets here
        raise RuntimeError("scoring workers must be forked from the evaluating process")
    run_id, settings, specs, schema_ids, documents, predictions = _FORKED_INPUTS
    state = _ChunkState(run_id, settings)
    plans = [_AttributePlan(spec, settings, state.coerce) for spec in specs]
    rows, warnings, unknown = _compare_chunk(state, plans, schema_ids, documents[start:stop], predictions)
    # Equal texts made one object: pickle sends an object once however often it recurs, so the parent
    # gets one copy of a repeated reasoning, value or citation instead of one per row.
    strings: dict[str | None, str | None] = {}
    keep = strings.setdefault
    for row in rows:
        row.human_additional_text = keep(row.human_additional_text, row.human_additional_text)
        row.item_attribute_full_text_details = keep(
            row.item_attribute_full_text_details, row.item_attribute_full_text_details
        )
        row.citation_highlight_text = keep(row.citation_highlight_text, row.citation_highlight_text)
        row.llm_reasoning = keep(row.llm_reasoning, row.llm_reasoning)
        row.llm_verbatim_text = keep(row.llm_verbatim_text, row.llm_verbatim_text)
        if row.human_extraction.__class__ is str:
            row.human_extraction = keep(row.human_extraction, row.human_extraction)
        if row.llm_extraction.__class__ is str:
            row.llm_extraction = keep(row.llm_extraction, row.llm_extraction)
    return list(map(_row_values, rows)), warnings, unknown


def _score_slices(
    slices: list[tuple[int, int]],
) -> Iterator[tuple[list[tuple[Any, ...]], list[str], dict[str, int]]]:
    """In a worker: each slice's rows, one piece at a time, so the parent unpickles while it scores."""
    for start, stop in slices:
        yield _score_slice(start, stop)


def _slices(n_documents: int, workers: int) -> list[tuple[int, int]]:
    """The parent's slice, then each worker's pieces: contiguous, in order, covering every document."""
    # The parent also unpickles and rebuilds the workers' rows, so it takes a little less.
    own_stop = int(n_documents * OWN_SHARE_FACTOR / workers)
    bounds = [(0, own_stop)]
    pieces = (workers - 1) * PIECES_PER_WORKER
    edges = [own_stop + (n_documents - own_stop) * index // pieces for index in range(pieces + 1)]
    bounds.extend(
        (edges[index], edges[index + 1]) for index in range(pieces) if edges[index] < edges[index + 1]
    )
    return bounds


def compare_all_documents(
    *,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    gold_documents: Sequence[GoldDocument],
    predictions: Mapping[str, PredictionDocument],
    settings: EvaluationSettings,
    workers: int | None = None,
) -> tuple[list[ComparisonRow], list[str]]:
    """What `compare_documents` returns for all of `gold_documents`, computed by `workers` processes
    (see `resolve_workers`); the same rows and warnings, in the same order, whatever the number."""
    global _FORKED_INPUTS
    validate_settings(settings)
    check_schema(attributes)
    documents = documents_to_compare(gold_documents, attributes)
    specs = [spec for spec in attributes if spec.is_scored]
    schema_ids = {spec.attribute_id for spec in attributes}
    workers = resolve_workers(workers, len(documents))

    state = _ChunkState(run_id, settings)
    plans = [_AttributePlan(spec, settings, state.coerce) for spec in specs]
    if workers == 1:
        rows, warnings, unknown = _compare_chunk(state, plans, schema_ids, documents, predictions)
        warnings.extend(unknown_attribute_warnings(unknown))
        return rows, warnings

    (own_start, own_stop), *worker_slices = _slices(len(documents), workers)
    pieces_per_child = -(-len(worker_slices) // (workers - 1))
    child_slices = [
        worker_slices[index : index + pieces_per_child]
        for index in range(0, len(worker_slices), pieces_per_child)
    ]
    _FORKED_INPUTS = (run_id, settings, specs, schema_ids, documents, predictions)
    try:
        children = [ForkedWork(_score_slices, slices) for slices in child_slices]
        rows, warnings, unknown = _compare_chunk(
            state, plans, schema_ids, documents[own_start:own_stop], predictions
        )
        for child, slices in zip(children, child_slices, strict=True):
            received = 0
            try:
                # Each piece is turned into rows as it comes, and its tuples dropped.
                for piece_rows, piece_warnings, piece_unknown in child.results():
                    rows.extend(starmap(ComparisonRow, piece_rows))
                    warnings.extend(piece_warnings)
                    add_unknown_counts(unknown, piece_unknown)
                    received += 1
            except RuntimeError:
                # A worker died without a word (killed for memory, say): score what it did not
                # send here instead. Its own exceptions are raised as they are.
                for start, stop in slices[received:]:
                    piece_rows, piece_warnings, piece_unknown = _compare_chunk(
                        state, plans, schema_ids, documents[start:stop], predictions
                    )
                    rows.extend(piece_rows)
                    warnings.extend(piece_warnings)
                    add_unknown_counts(unknown, piece_unknown)
    finally:
        _FORKED_INPUTS = None
    warnings.extend(unknown_attribute_warnings(unknown))
    return rows, warnings
