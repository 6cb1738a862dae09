"""The intervals of a run scored in processes enough for two runs of resamples (two cores a run) are
summed in those processes, and are the intervals of one process to the last bit."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.engine.attributes.types import AttributeType
from metrics.engine.uncertainty.attribute_metrics import attribute_metric_definitions
from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.engine.uncertainty.measures import columns_read
from metrics.engine.uncertainty.resampling import pack_columns, resampled_words
from metrics.pipeline import intervals as intervals_module
from metrics.pipeline.executors import InProcess, ProcessPool
from metrics.pipeline.intervals import (
    IntervalSettings,
    extraction_intervals,
    pooled_word_sums,
    span_table_intervals,
    sums_in_pool,
    word_sums_of,
)


class CountingExecutor:
    """In this process, like InProcess, but claiming `processes` and recording what it maps."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self.mapped: list[object] = []

    def map(self, score, chunks):
        for chunk in chunks:
            self.mapped.append(chunk)
            yield score(chunk)


@pytest.fixture
def pooled_from_any_size(monkeypatch):
    monkeypatch.setattr(intervals_module, "_POOLED_FROM", 0)


def span_counts(n_documents: int, seed: int) -> DocumentCounts:
    rng = np.random.default_rng(seed)
    names = ["chars.all.tp", "chars.all.fp", "chars.all.fn", "document.gold_spans"]
    return DocumentCounts(
        [f"d{i:05d}" for i in range(n_documents)],
        {name: rng.integers(0, 40, size=n_documents).astype(float) for name in names},
    )


def test_up_to_three_processes_sum_here_and_four_or_more_sum_in_runs():
    assert word_sums_of(None) is resampled_words
    assert word_sums_of(InProcess()) is resampled_words
    assert word_sums_of(ProcessPool(2)) is resampled_words
    assert word_sums_of(ProcessPool(3)) is resampled_words
    assert word_sums_of(ProcessPool(4)) is not resampled_words
    assert [sums_in_pool(executor) for executor in (None, InProcess(), ProcessPool(3), ProcessPool(4))] == [
        False,
        False,
        False,
        True,
    ]


@pytest.mark.parametrize("processes", [4, 5, 10])
def test_runs_mapped_over_the_executor_give_the_sums_of_one_process(pooled_from_any_size, processes):
    rng = np.random.default_rng(processes)
    columns = [rng.integers(0, 50, size=3_000).astype(float) for _ in range(6)]
    packed = pack_columns(columns, 3_000)
    executor = CountingExecutor(processes)
    pooled = pooled_word_sums(executor, packed, 1_001, 7)
    assert pooled.tobytes() == resampled_words(packed, 1_001, 7).tobytes()
    assert 1 < len(executor.mapped) <= processes // 2


def test_small_runs_stay_in_this_process():
    packed = pack_columns([np.ones(100)], 100)
    executor = CountingExecutor(4)
    pooled_word_sums(executor, packed, 2_000, 7)
    assert executor.mapped == []


@pytest.mark.parametrize("processes", [2, 3])
def test_processes_for_one_run_leave_the_sums_to_this_process(pooled_from_any_size, processes):
    packed = pack_columns([np.arange(3_000, dtype=float) % 5], 3_000)
    executor = CountingExecutor(processes)
    pooled = pooled_word_sums(executor, packed, 500, 3)
    assert executor.mapped == []
    assert pooled.tobytes() == resampled_words(packed, 500, 3).tobytes()


def test_span_intervals_from_a_pool_are_those_of_one_process(pooled_from_any_size):
    settings = IntervalSettings(resamples=300)
    alone = span_table_intervals(span_counts(4_000, 1), settings)
    pooled = span_table_intervals(span_counts(4_000, 1), settings, ProcessPool(4))
    assert pooled == alone
    assert alone["micro.chars.all.f1"].low is not None


def test_extraction_intervals_from_a_pool_are_those_of_one_process(pooled_from_any_size):
    types = {"age": AttributeType.FLOAT, "smoker": AttributeType.BOOL}
    read = columns_read(attribute_metric_definitions(types).values())
    rng = np.random.default_rng(2)
    n = 2_500

    def column(name: str) -> np.ndarray:
        if name.endswith(".missing"):
            return np.zeros(n)
        if name.endswith(".abs_error"):  # fractional: its sums depend on the order they are added in
            return rng.random(n) * 3.7
        return rng.integers(0, 2, size=n).astype(float)

    counts = {name: column(name) for name in sorted(read)}
    settings = IntervalSettings(resamples=200)
    ids = [f"d{i}" for i in range(n)]
    alone = extraction_intervals(DocumentCounts(ids, counts), types, settings)
    pooled = extraction_intervals(DocumentCounts(ids, counts), types, settings, ProcessPool(4))
    assert pooled == alone
    assert alone["age"]["mean_absolute_error"].low is not None
