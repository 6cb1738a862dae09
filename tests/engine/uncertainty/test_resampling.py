"""Resamples summed in runs (`resample_runs`, `resample_run_sums`): each run starts where the one
generator is after the runs before it, and the runs' sums put back in order are the sums of one pass,
to the last bit, however the resamples are cut."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.engine.uncertainty.resampling import (
    block_rows,
    count_draws,
    pack_columns,
    resample_run_sums,
    resample_runs,
    resampled_column_sums,
    resampled_words,
    skip_draws,
)
from tests.engine.uncertainty.reference import reference_weights


def random_columns(rng: np.random.Generator, n_documents: int, n_columns: int, kind: str) -> list[np.ndarray]:
    """Counts (packed several to a word), or with a fractional column (every column a word of its own,
    sums that depend on the order they are added in)."""
    columns = [rng.integers(0, 300, size=n_documents).astype(np.float64) for _ in range(n_columns)]
    if kind == "fractional":
        columns.append(rng.random(n_documents) * 7.3)
    return columns


def summed_in_runs(
    columns: list[np.ndarray], n_documents: int, resamples: int, seed: int, parts: int
) -> np.ndarray:
    def word_sums(packed, resamples, seed):
        runs = list(resample_runs(packed, resamples, seed, parts))
        # Each run as another process gets it: a pickled copy.
        return np.concatenate([resample_run_sums(pickle.loads(pickle.dumps(run))) for run in runs])

    return resampled_column_sums(columns, n_documents, resamples, seed, word_sums=word_sums)


@settings(max_examples=40, deadline=None)
@given(
    n_documents=st.sampled_from([1, 9, 700, 2_048, 5_000]),
    n_columns=st.integers(min_value=1, max_value=7),
    kind=st.sampled_from(["counts", "fractional"]),
    resamples=st.integers(min_value=1, max_value=900),
    parts=st.integers(min_value=1, max_value=12),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_runs_summed_apart_give_the_sums_of_one_pass_bit_for_bit(
    n_documents, n_columns, kind, resamples, parts, seed
):
    columns = random_columns(np.random.default_rng(seed), n_documents, n_columns, kind)
    one_pass = resampled_column_sums(columns, n_documents, resamples, seed)
    in_runs = summed_in_runs(columns, n_documents, resamples, seed, parts)
    assert in_runs.tobytes() == one_pass.tobytes()


@pytest.mark.parametrize(
    ("n_documents", "rows"), [(1, 1_000_000), (20_000, 50), (25_000, 40), (100_000, 40), (1_000_000, 4)]
)
def test_blocks_hold_a_million_entries_or_40_resamples_up_to_4_million(n_documents, rows):
    assert block_rows(n_documents) == rows


@pytest.mark.parametrize(("n_documents", "resamples"), [(100, 450), (1_999, 600), (2_048, 600)])
def test_the_sums_of_each_document_alone_are_the_weights_by_their_definition(n_documents, resamples):
    # Blocks below 2,048 documents are drawn in one call, above it a resample at a time: the same
    # draws. 600 resamples are two blocks of 1,999 or 2,048 documents.
    identity = np.eye(n_documents)
    expected = reference_weights(n_documents, resamples, 4)
    assert np.array_equal(resampled_column_sums(list(identity.T), n_documents, resamples, 4), expected)
    assert np.all(expected.sum(axis=1) == n_documents)


@pytest.mark.parametrize(("n_documents", "resamples"), [(3_000, 130), (20_000, 401)])
def test_blocked_sums_equal_the_whole_weight_matrix_times_the_counts(n_documents, resamples):
    counts = np.random.default_rng(2).poisson(3, size=(n_documents, 4)).astype(float)
    counts[:, 2] = 0  # an all-zero column is skipped, and still sums to zero
    counts[:, 3] = counts[:, 0]  # a repeated column is summed once, and still equals its twin
    expected = reference_weights(n_documents, resamples, 9) @ counts
    assert np.array_equal(resampled_column_sums(list(counts.T), n_documents, resamples, seed=9), expected)


@settings(max_examples=30, deadline=None)
@given(
    n_documents=st.sampled_from([1, 50, 2_048, 30_000]),
    resamples=st.integers(min_value=1, max_value=2_000),
    parts=st.integers(min_value=1, max_value=8),
)
def test_runs_cover_every_resample_once_in_whole_weight_blocks(n_documents, resamples, parts):
    packed = pack_columns([np.ones(n_documents)], n_documents)
    rows = [run.rows for run in resample_runs(packed, resamples, 1, parts)]
    assert sum(rows) == resamples
    assert 1 <= len(rows) <= parts
    assert all(row % block_rows(n_documents) == 0 for row in rows[:-1])


def test_later_runs_are_smaller_as_they_start_once_the_draws_before_them_are_made():
    packed = pack_columns([np.ones(100_000)], 100_000)
    rows = [run.rows for run in resample_runs(packed, 2_000, 1, parts=2)]
    assert rows[0] > rows[1] > 0


def test_each_run_starts_where_the_draws_of_the_runs_before_it_leave_the_generator():
    packed = pack_columns([np.ones(5_000)], 5_000)
    first, second, third = resample_runs(packed, 1_000, 4, parts=3)
    generator = np.random.default_rng(4)
    assert first.state == generator.bit_generator.state
    for run in (first, second):
        for _ in range(run.rows):  # a resample draws n documents
            generator.integers(0, 5_000, size=5_000)
        assert (second if run is first else third).state == generator.bit_generator.state


def test_a_single_run_is_the_whole_pass():
    columns = random_columns(np.random.default_rng(5), 4_000, 4, "counts")
    packed = pack_columns(columns, 4_000)
    (run,) = resample_runs(packed, 333, 6)
    assert np.array_equal(resample_run_sums(run), resampled_words(packed, 333, 6))


@settings(max_examples=40, deadline=None)
@given(
    n_documents=st.integers(min_value=1, max_value=3_000),
    crowded=st.integers(min_value=0, max_value=1_000),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_draws_are_counted_exactly_even_when_a_document_is_drawn_over_255_times(n_documents, crowded, seed):
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_documents, size=n_documents + crowded)
    draws[:crowded] = n_documents - 1  # one document drawn `crowded` times more: its byte wraps at 256
    tally = np.empty(n_documents, dtype=np.uint8)
    exact = count_draws(draws, tally)
    counts = np.bincount(draws, minlength=n_documents)
    if counts.max() < 256:  # the bytes hold the counts
        assert exact is None and np.array_equal(tally, counts)
    else:
        assert np.array_equal(exact, counts.astype(np.float64))


@settings(max_examples=300, deadline=None)
@given(
    n_documents=st.one_of(
        st.sampled_from([1, 2, 3, 2_048, 100_000, 2**31 - 1, 2**31 + 1, 3 * 2**30 + 5, 2**32 - 3]),
        st.integers(min_value=1, max_value=2**32 - 1),
    ),
    before=st.integers(min_value=0, max_value=3),
    draws=st.lists(st.integers(min_value=0, max_value=2_000), min_size=1, max_size=3),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_skipped_draws_leave_the_generator_where_the_draws_would(n_documents, before, draws, seed):
    # Above 2**31 about half of numpy's 32-bit outputs are rejected; an odd number of 32-bit draws
    # before leaves half an output in the generator's buffer.
    drawn, skipped = np.random.default_rng(seed), np.random.default_rng(seed)
    for generator in (drawn, skipped):
        generator.integers(0, 2**32, size=before, dtype=np.uint32)
    for count in draws:
        drawn.integers(0, n_documents, size=count)
        skip_draws(skipped, count, n_documents)
        assert skipped.bit_generator.state == drawn.bit_generator.state


def test_skipped_draws_span_several_looks_at_the_generator():
    drawn, skipped = np.random.default_rng(11), np.random.default_rng(11)
    drawn.integers(0, 100_000, size=3_000_001)
    skip_draws(skipped, 3_000_001, 100_000)
    assert skipped.bit_generator.state == drawn.bit_generator.state


def test_a_numpy_that_draws_by_another_rule_gets_its_draws_made(monkeypatch):
    # Skipping copies numpy's rule for bounded draws; were a numpy to draw otherwise, the check made
    # once a process finds it, and the generator is moved on by drawing.
    from metrics.engine.uncertainty import resampling

    monkeypatch.setattr(resampling, "skip_accepted_draws", lambda rng, draws, n_documents: None)
    resampling.skipping_follows_numpy.cache_clear()
    try:
        assert not resampling.skipping_follows_numpy()
        drawn, skipped = np.random.default_rng(3), np.random.default_rng(3)
        drawn.integers(0, 100_000, size=5_000)
        skip_draws(skipped, 5_000, 100_000)
        assert skipped.bit_generator.state == drawn.bit_generator.state
    finally:
        resampling.skipping_follows_numpy.cache_clear()
