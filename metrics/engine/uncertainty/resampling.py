"""The resampling core: bootstrap weights for documents, and the count sums they give.

A cluster bootstrap resample draws n documents with replacement from the n documents (documents are
the clusters: the spans and attribute values of one document are correlated, so they travel together).
Drawing document i `w_i` times makes every summed count `sum_i w_i * c_i`, so for B resamples the
summed counts are `W @ C`, with W the B x n matrix of draw counts and C the n x k per-document count
matrix. W is built a block of rows at a time, so memory stays near `_BLOCK_ENTRIES` floats whatever
n and B are (n = 100,000 and B = 2,000 would be 1.6 GB as one matrix).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from functools import cache

import numpy as np
from threadpoolctl import ThreadpoolController

# Entries of one weight block: about 8 MB as 64-bit floats (the draws are made a row at a time). The
# draws do not depend on the block size (one generator, drawn block after block), only memory does;
# the sums did not either, to the last bit (20,000 documents with float columns; blocks of 4, 2, 1.5,
# 1 and 0.5 million entries compared). 1 million, not 4: a run scored in several processes
# (--processes) may resample beside the others' work, and the block is part of their joint peak.
_BLOCK_ENTRIES = 1_000_000
# But at least this many resamples a block, up to 4 million entries: each block's product reads the
# whole count table, and on 100,000 documents blocks of 20 resamples made it 15% slower than 40.
_MIN_BLOCK_ROWS = 40
_MAX_BLOCK_ENTRIES = 4_000_000
# Above this many documents each resample is tallied on its own (its tally stays in the CPU cache);
# below it one tally for the whole block avoids a Python loop over thousands of tiny rows.
_ROW_BY_ROW_FROM = 2_048


@cache
def _thread_pools() -> ThreadpoolController:
    """Found once: looking up the loaded BLAS libraries costs milliseconds, more than a small bootstrap."""
    return ThreadpoolController()


def block_rows(n_documents: int) -> int:
    """Resamples per weight block. It depends on n only, so results never depend on memory settings."""
    n_documents = max(n_documents, 1)
    rows = _BLOCK_ENTRIES // n_documents
    if rows < _MIN_BLOCK_ROWS:
        rows = min(_MIN_BLOCK_ROWS, _MAX_BLOCK_ENTRIES // n_documents)
    return max(1, rows)


def weight_blocks(n_documents: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Yield bootstrap weights in blocks of rows: entry [r, i] = times document i is drawn in resample r.

    Draws are `numpy.random.default_rng(seed).integers(0, n, size=n)`, resample after resample, so the
    same (n, resamples, seed) always yields the same weights (one generator drawn in sequence: how the
    draws are cut into blocks changes nothing). Every row sums to n.
    """
    if n_documents < 1:
        raise ValueError("resampling needs at least one document")
    rng = np.random.default_rng(seed)
    per_block = block_rows(n_documents)
    for start in range(0, resamples, per_block):
        rows = min(per_block, resamples - start)
        yield _tally(rng, rows, n_documents)


def _tally(rng: np.random.Generator, rows: int, n_documents: int) -> np.ndarray:
    """Draw `rows` resamples of n documents and count how often each document was drawn."""
    if n_documents >= _ROW_BY_ROW_FROM:
        # One resample at a time: its draws (n integers) stay in the CPU cache while they are counted,
        # and a block never holds its draws and its weights at once.
        weights = np.empty((rows, n_documents), dtype=np.float64)
        for row in range(rows):
            weights[row] = np.bincount(rng.integers(0, n_documents, size=n_documents), minlength=n_documents)
        return weights
    draws = rng.integers(0, n_documents, size=(rows, n_documents))
    offsets = (np.arange(rows, dtype=np.int64) * n_documents)[:, None]
    flat = np.bincount((draws + offsets).ravel(), minlength=rows * n_documents)
    return flat.reshape(rows, n_documents).astype(np.float64)


def resampled_sums(matrix: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Summed counts of every resample: the B x k matrix `W @ C` for the n x k count matrix C.

    Only distinct non-zero columns are multiplied: an all-zero column sums to zero in every resample,
    and equal columns (a count both compared runs share, `rows` of attributes scored on the same
    documents) are summed once and copied, so their sums are bit-identical. That keeps wide, sparse
    count tables cheap, and makes identical runs give exactly identical resampled metrics.
    """
    return resampled_column_sums(
        [matrix[:, j] for j in range(matrix.shape[1])], matrix.shape[0], resamples, seed
    )


def resampled_column_sums(
    columns: list[np.ndarray], n_documents: int, resamples: int, seed: int
) -> np.ndarray:
    """`resampled_sums` of the matrix whose columns these are, without building that matrix: only the
    distinct non-zero columns are stacked (a 100,000-document table of 60 columns is 48 MB a copy)."""
    n_columns = len(columns)
    sums = np.zeros((resamples, n_columns), dtype=np.float64)
    # Columns are told apart by a digest of their bytes, checked by comparing the arrays: keeping the
    # bytes themselves as keys held a second copy of the table.
    first_of: dict[bytes, list[int]] = {}
    source = np.full(n_columns, -1)
    for j, values in enumerate(columns):
        column = np.ascontiguousarray(values, dtype=np.float64)
        if not np.any(column != 0):
            continue
        candidates = first_of.setdefault(hashlib.blake2b(column.data, digest_size=16).digest(), [])
        for k in candidates:
            earlier = np.ascontiguousarray(columns[k], dtype=np.float64)
            if np.array_equal(earlier.view(np.uint8), column.view(np.uint8)):  # the same bytes
                source[j] = k
                break
        else:
            candidates.append(j)
            source[j] = j
    distinct = np.array(sorted(k for candidates in first_of.values() for k in candidates), dtype=np.intp)
    if distinct.size == 0:
        return sums
    dense = np.empty((n_documents, distinct.size), dtype=np.float64)
    for position, j in enumerate(distinct.tolist()):
        dense[:, position] = columns[j]
    start = 0
    # One BLAS thread: scoring runs beside other work (web, Celery workers), and OpenBLAS threads that
    # wait for a busy core made this product 50x slower than one thread in a measurement on a shared
    # two-core machine. threadpoolctl comes with scikit-learn, a dependency of the project.
    with _thread_pools().limit(limits=1, user_api="blas"):
        for weights in weight_blocks(n_documents, resamples, seed):
            stop = start + weights.shape[0]
            sums[start:stop, distinct] = weights @ dense
            start = stop
            # Let go of this block before the next one is built: the loop variable would otherwise
            # keep it alive beside its successor (two blocks at the peak instead of one).
            del weights
    copies = np.flatnonzero((source >= 0) & (source != np.arange(n_columns)))
    sums[:, copies] = sums[:, source[copies]]
    return sums
