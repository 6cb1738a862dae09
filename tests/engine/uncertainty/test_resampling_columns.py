"""`resampled_column_sums` (columns in, no stacked matrix, digests instead of byte copies to find
equal columns) gives exactly the sums of the straightforward stacked-matrix computation."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.engine.uncertainty.resampling import (
    pack_columns,
    resampled_column_sums,
    resampled_words,
)
from tests.engine.uncertainty.reference import reference_weights


def reference_sums(matrix: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The former implementation: stack, key distinct non-zero columns by their bytes, multiply."""
    n_documents, n_columns = matrix.shape
    sums = np.zeros((resamples, n_columns), dtype=np.float64)
    first_of: dict[bytes, int] = {}
    source = np.full(n_columns, -1)
    for j in range(n_columns):
        column = np.ascontiguousarray(matrix[:, j], dtype=np.float64)
        if np.any(column != 0):
            source[j] = first_of.setdefault(column.tobytes(), j)
    distinct = np.array(sorted(set(first_of.values())), dtype=np.intp)
    if distinct.size == 0:
        return sums
    dense = np.ascontiguousarray(matrix[:, distinct], dtype=np.float64)
    sums[:, distinct] = reference_weights(n_documents, resamples, seed) @ dense
    copies = np.flatnonzero((source >= 0) & (source != np.arange(n_columns)))
    sums[:, copies] = sums[:, source[copies]]
    return sums


@settings(max_examples=60, deadline=None)
@given(
    n_documents=st.sampled_from([1, 5, 300, 2_100]),
    n_columns=st.integers(min_value=0, max_value=6),
    resamples=st.integers(min_value=1, max_value=40),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_column_sums_equal_the_reference_sums_of_the_stacked_matrix(n_documents, n_columns, resamples, seed):
    rng = np.random.default_rng(seed)
    columns = [rng.integers(0, 4, size=n_documents).astype(np.float64) for _ in range(n_columns)]
    if n_columns >= 3:
        columns[1] = np.zeros(n_documents)  # all zero: skipped
        columns[2] = columns[0].copy()  # a duplicate: summed once, copied
    matrix = np.column_stack(columns) if columns else np.zeros((n_documents, 0))
    expected = reference_sums(matrix, resamples, seed)
    assert np.array_equal(resampled_column_sums(columns, n_documents, resamples, seed), expected)


@settings(max_examples=40, deadline=None)
@given(
    n_documents=st.sampled_from([1, 7, 2_100]),
    widths=st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=7),
    other=st.sampled_from([None, -1.0, 0.5]),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_integer_columns_packed_into_shared_words_sum_exactly(n_documents, widths, other, seed):
    """Counts of any size (up to 40 bits a document) come back as the unpacked product gives them,
    also beside a negative or fractional column (a word of its own)."""
    rng = np.random.default_rng(seed)
    columns = [rng.integers(0, 2**width + 1, size=n_documents).astype(np.float64) for width in widths]
    if other is not None:
        columns.append(np.full(n_documents, other))
    matrix = np.column_stack(columns)
    expected = reference_sums(matrix, 12, seed)
    assert np.array_equal(resampled_column_sums(columns, n_documents, 12, seed), expected)


@settings(max_examples=30, deadline=None)
@given(
    n_documents=st.sampled_from([2_100, 20_000]),
    resamples=st.sampled_from([60, 120]),
    n_fractional=st.integers(min_value=1, max_value=9),
    n_integer=st.sampled_from([0, 1, 2, 5, 17, 60, 101]),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_fractional_sums_beside_packed_counts_keep_the_bits_of_one_word_a_column(
    n_documents, resamples, n_fractional, n_integer, seed
):
    """Fractional sums depend on the order BLAS adds in: packing the integer columns beside them
    (a narrower product) leaves every bit of them as the product of every column gives it, for
    narrow and wide tables, large and small weight blocks."""
    rng = np.random.default_rng(seed)
    fractional = [
        rng.exponential(3.0, size=n_documents) * (rng.random(n_documents) < 0.6) for _ in range(n_fractional)
    ]
    counts = [rng.integers(0, 2, size=n_documents).astype(np.float64) for _ in range(n_integer)]
    columns = counts[: n_integer // 2] + fractional + counts[n_integer // 2 :]
    # Packed without knowing the resamples, every column is a word of its own, as before packing.
    one_word_a_column = pack_columns(columns, n_documents)
    assert one_word_a_column.layout == [[(position, 0)] for position in range(len(columns))]
    expected = one_word_a_column.column_sums(resampled_words(one_word_a_column, resamples, seed))
    assert np.array_equal(resampled_column_sums(columns, n_documents, resamples, seed), expected)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_consumed_columns_give_the_same_sums_and_are_let_go(n_documents, n_columns, seed):
    rng = np.random.default_rng(seed)
    matrix = rng.integers(0, 3, size=(n_documents, n_columns)).astype(np.float64)
    matrix[:, 0] = matrix[:, -1]  # a repeated column, let go as soon as it is found equal
    table = np.asfortranarray(matrix)
    columns = [table[:, j] for j in range(n_columns)]
    sums = resampled_column_sums(columns, n_documents, 50, seed, consume=True)
    assert np.array_equal(sums, reference_sums(matrix, 50, seed))
    assert columns == [None] * n_columns
