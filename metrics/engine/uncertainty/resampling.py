"""The resampling core: bootstrap weights for documents, and the count sums they give.

A cluster bootstrap resample draws n of the n documents with replacement (a document's spans and values
are correlated, so they travel together). Drawing document i `w_i` times makes every summed count
`sum_i w_i * c_i`, so the summed counts of B resamples are `W @ C` (W: B x n draw counts; C: n x k
per-document counts). Resample r draws `numpy.random.default_rng(seed).integers(0, n, size=n)`, one
resample after the other from the one generator, so (n, B, seed) fixes W. W is built a block of rows at
a time (n = 100,000 and B = 2,000 would be 1.6 GB as one matrix). Runs of resamples summed apart, each
from the generator's state where it starts (`resample_runs`), give in order the sums of one pass to the
last bit: the same draws meet the same counts in the same products.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

# Entries of one weight block (8 MB). Neither the draws nor the sums depend on it, only memory does:
# it is small because a run scored in several processes may resample beside the others' work.
_BLOCK_ENTRIES = 1_000_000
# But at least this many resamples a block, up to 4 million entries: each block's product reads the
# whole count table once (bench/spans/README.md).
_MIN_BLOCK_ROWS = 40
_MAX_BLOCK_ENTRIES = 4_000_000
# Above this many documents each resample is tallied on its own (its tally stays in the CPU cache);
# below it one tally for the whole block avoids a Python loop over thousands of tiny rows.
_ROW_BY_ROW_FROM = 2_048
# The share of a resample's work (draws, tally, product) that skipping its draws costs: it sizes the
# runs `resample_runs` plans, never their sums (bench/spans/README.md).
_SKIP_SHARE = 0.2
# 32-bit outputs of the generator looked at a time when draws are skipped (2 MB).
_SKIPPED_AT_ONCE = 1 << 19
# Weight blocks tallied ahead of the one multiplied, in a thread (`weight_blocks`).
_TALLIED_AHEAD = 2


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


def _tally(rng: np.random.Generator, counts: np.ndarray) -> dict[int, np.ndarray]:
    """Fill `counts` (resamples x n) with how often each document is drawn in each resample, in the
    generator's order: a resample at a time into bytes (`count_draws`) from `_ROW_BY_ROW_FROM`
    documents, else the whole block by one `bincount`. Returns the resamples counted in floats."""
    rows, n_documents = counts.shape
    if n_documents >= _ROW_BY_ROW_FROM:
        wrapped: dict[int, np.ndarray] = {}
        for row, tally in enumerate(counts):
            exact = count_draws(rng.integers(0, n_documents, size=n_documents), tally)
            if exact is not None:
                wrapped[row] = exact
        return wrapped
    block = rng.integers(0, n_documents, size=(rows, n_documents))
    offsets = (np.arange(rows, dtype=np.int64) * n_documents)[:, None]
    flat = np.bincount(
        (block + offsets).ravel(), weights=np.ones(block.size, dtype=np.float64), minlength=rows * n_documents
    )
    counts[:] = flat.reshape(rows, n_documents)
    return {}


def count_draws(draws: np.ndarray, tally: np.ndarray) -> np.ndarray | None:
    """Set `tally[i]` (bytes) to how often document i is among the `draws`: a byte a document stays in
    the CPU cache, where eight did not. A document drawn 256 times or more wraps its byte, and the
    tally sums to less than the draws: the counts are then returned in floats (else None)."""
    tally.fill(0)
    np.add.at(tally, draws, tally.dtype.type(1))  # a Python 1 took ufunc.at's slow, casting path
    if tally.sum(dtype=np.int64) == draws.size:
        return None
    return np.bincount(draws, minlength=len(tally)).astype(np.float64)


# A float64 holds every integer below 2**53 exactly, and every sum of them that stays below it.
_EXACT_BITS = 53
# A product of fractional columns adds in an order that depends on BLAS's kernel, and OpenBLAS takes
# another kernel for a small product (resamples x documents x words up to 100**3, or a single row or
# column): fractional columns share a narrower product with packed counts only when every weight
# block's product stays well above that, so their sums keep the bits of one word a column.
_LARGE_PRODUCT = 4 * 100**3


def _packing(
    columns: list[np.ndarray], n_documents: int, smallest_block: int
) -> tuple[list[list[tuple[int, int]]], bool]:
    """Words of the product, each a list of (column position, bit shift), and whether its sums are exact.

    A resample's sum of a non-negative integer column is at most n times its largest value (its
    weights sum to n), so it needs a known number of bits. Columns whose bits fit together in 53
    share one float64 word, each shifted past the others: every sum in the product is then still an
    integer below 2**53, computed exactly, and each column's sum comes back exactly by shifting and
    masking. Exact sums are the same numbers whatever the packing, and fewer words make the product
    less work. A column of other values (negative, fractional) is a word of its own, first; beside
    it the others are packed only when the product of `smallest_block` resamples stays large
    (`_LARGE_PRODUCT`), else every column is a word of its own.
    """
    bits: dict[int, int] = {}
    alone: list[list[tuple[int, int]]] = []
    for position, column in enumerate(columns):
        values = np.asarray(column, dtype=np.float64)
        largest = float(values.max())
        if (
            values.min() < 0
            or not np.array_equal(values, np.floor(values))
            or largest * n_documents >= 2.0**_EXACT_BITS
        ):
            alone.append([(position, 0)])
        else:
            bits[position] = int(largest * n_documents).bit_length()
    words: list[list[tuple[int, int]]] = []
    used: list[int] = []
    for position in sorted(bits, key=lambda k: (-bits[k], k)):
        for word, taken in enumerate(used):
            if taken + bits[position] <= _EXACT_BITS:
                words[word].append((position, taken))
                used[word] += bits[position]
                break
        else:
            words.append([(position, 0)])
            used.append(bits[position])
    width = len(alone) + len(words)
    if alone and (width < 2 or smallest_block < 2 or smallest_block * n_documents * width <= _LARGE_PRODUCT):
        return [[(position, 0)] for position in range(len(columns))], False
    return alone + words, not alone


def _unpacked(word: np.ndarray, shift: int, packed: list[tuple[int, int]]) -> np.ndarray:
    """One column's sums out of its word: the bits from `shift` up to the next column's shift."""
    if len(packed) == 1:
        return word
    above = np.floor(np.ldexp(word, -shift))
    higher = [other_shift for _, other_shift in packed if other_shift > shift]
    if not higher:
        return above
    width = min(higher) - shift
    return above - np.ldexp(np.floor(np.ldexp(above, -width)), width)


@dataclass(frozen=True, slots=True)
class PackedColumns:
    """A count table's distinct non-zero columns packed into float64 words (`words`, n x w). `exact`:
    all are non-negative integer counts, so every sum of the product is exact in any order of addition."""

    n_columns: int
    source: np.ndarray  # each column's first equal column (-1: all zero)
    distinct: np.ndarray  # the columns the words hold, in order
    layout: list[list[tuple[int, int]]]
    words: np.ndarray
    exact: bool

    def column_sums(self, word_sums: np.ndarray) -> np.ndarray:
        """Every column's sums (B x k) from the words' sums (B x w)."""
        sums = np.zeros((word_sums.shape[0], self.n_columns), dtype=np.float64)
        for word, packed in enumerate(self.layout):
            for position, shift in packed:
                sums[:, self.distinct[position]] = _unpacked(word_sums[:, word], shift, packed)
        copies = np.flatnonzero((self.source >= 0) & (self.source != np.arange(self.n_columns)))
        sums[:, copies] = sums[:, self.source[copies]]
        return sums


def pack_columns(
    columns: list[np.ndarray], n_documents: int, *, consume: bool = False, resamples: int = 0
) -> PackedColumns:
    """The packed words of these columns, without stacking them (a 100,000-document table of 60
    columns is 48 MB a copy). `resamples`: how many the words will be summed for (0: not known).
    `consume`: each entry of `columns` is let go (set to None) once it is no longer read, so that the
    columns and their packed copy are not all held at once.
    """
    n_columns = len(columns)
    # Columns are told apart by a digest of their bytes, checked by comparing the arrays: keeping the
    # bytes themselves as keys held a second copy of the table.
    first_of: dict[bytes, list[int]] = {}
    source = np.full(n_columns, -1)
    earlier = None
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
    if consume:
        # A column may be a view that keeps a whole table alive.
        values = column = earlier = None  # type: ignore[assignment]
        for j in np.flatnonzero(source != np.arange(n_columns)).tolist():
            columns[j] = None  # type: ignore[call-overload]
    smallest_block = (resamples % block_rows(n_documents) or block_rows(n_documents)) if resamples else 0
    layout, exact = _packing([columns[j] for j in distinct.tolist()], n_documents, smallest_block)
    words = np.zeros((n_documents, len(layout)), dtype=np.float64)
    for word, packed in enumerate(layout):
        for position, shift in packed:
            words[:, word] += np.ldexp(np.asarray(columns[distinct[position]], dtype=np.float64), shift)
            if consume:
                columns[distinct[position]] = None  # type: ignore[call-overload]
    return PackedColumns(n_columns, source, distinct, layout, words, exact)


@dataclass(frozen=True, slots=True)
class ResampleRun:
    """A run of `rows` consecutive resamples of the packed `words`, and `state`: the state of the
    generator (`default_rng(seed)`, drawn resample after resample) where the run starts."""

    rows: int
    state: dict[str, Any]
    words: np.ndarray
    exact: bool


def resample_runs(packed: PackedColumns, resamples: int, seed: int, parts: int = 1) -> Iterator[ResampleRun]:
    """The resamples cut into at most `parts` runs of whole weight blocks, in order. A run's start is
    skipped to (`skip_draws`) when it is asked for, so a consumer can sum the runs before it meanwhile;
    the runs shrink by `_SKIP_SHARE` each, so that runs started one after the other end together."""
    n_documents = packed.words.shape[0]
    rng = np.random.default_rng(seed)
    per_block = block_rows(n_documents)
    n_blocks, keep = -(-resamples // per_block), 1.0 - _SKIP_SHARE
    bounds = sorted({round(n_blocks * (1.0 - keep**k) / (1.0 - keep**parts)) for k in range(parts + 1)})
    for first, last in pairwise(bounds):
        rows = min(last * per_block, resamples) - first * per_block
        yield ResampleRun(rows, rng.bit_generator.state, packed.words, packed.exact)
        if first * per_block + rows < resamples:
            skip_draws(rng, rows * n_documents, n_documents)


def skip_draws(rng: np.random.Generator, draws: int, n_documents: int) -> None:
    """Move `rng` on as `rng.integers(0, n_documents, size=draws)` would, in about two thirds of the
    time: the runs after the first need only the state the draws before them leave.

    numpy draws an integer below n < 2**32 from the generator's 32-bit outputs (the low half of each
    64-bit output, then its high half, kept in the state's buffer meanwhile): x gives floor(x * n /
    2**32), unless (x * n) mod 2**32 < 2**32 mod n, when x is rejected and the next output tried.
    So the draws end at the output that is the draws-th accepted one: the outputs are made raw and
    only the rejections are looked for. That rule is numpy's, not a promise of its API: a numpy that
    draws otherwise (`skipping_follows_numpy`) gets its draws made.
    """
    if n_documents >= 1 << 32 or not skipping_follows_numpy():
        rng.integers(0, n_documents, size=draws)
        return
    skip_accepted_draws(rng, draws, n_documents)


@cache
def skipping_follows_numpy() -> bool:
    """Whether skipping leaves a generator where this numpy's draws do: checked once a process, on
    draws with many rejections (n near 2**32 * 0.7) from a buffered half, in a millisecond."""
    drawn, skipped = np.random.default_rng(1), np.random.default_rng(1)
    for generator in (drawn, skipped):
        generator.integers(0, 1_000, size=1)  # leaves a high half in the buffer
    drawn.integers(0, 3_000_000_000, size=4_097)
    skip_accepted_draws(skipped, 4_097, 3_000_000_000)
    return drawn.bit_generator.state == skipped.bit_generator.state


def skip_accepted_draws(rng: np.random.Generator, draws: int, n_documents: int) -> None:
    """`skip_draws` by numpy's rule for n < 2**32."""
    needed = draws if n_documents > 1 else 0  # below 1 numpy draws nothing
    scale, threshold = np.uint32(n_documents), np.uint32((1 << 32) % n_documents)
    state = rng.bit_generator.state
    if needed and state["has_uint32"]:
        needed -= (state["uinteger"] * n_documents) % (1 << 32) >= threshold
        rng.bit_generator.state = {**state, "has_uint32": 0}
    while needed > 0:
        halves = rng.bit_generator.random_raw(min(needed + 1, _SKIPPED_AT_ONCE) // 2).view(np.uint32)
        rejected = np.flatnonzero(halves * scale < threshold).tolist()
        if len(halves) - len(rejected) < needed:
            needed -= len(halves) - len(rejected)
            continue
        last = needed - 1  # the needed-th accepted output: pushed on by each rejection up to it
        for position in rejected:
            last += position <= last
        # After a low half its high half waits in the buffer; after a high half the buffer is spent,
        # and keeps its value.
        state = rng.bit_generator.state
        rng.bit_generator.state = {
            **state,
            "has_uint32": int(last % 2 == 0),
            "uinteger": int(halves[last | 1]),
        }
        return


def resample_run_sums(run: ResampleRun) -> np.ndarray:
    """The sums of the packed words in each resample of the run (rows x words), in resample order.
    The next weight blocks are tallied in a thread while one is multiplied (both release the GIL)."""
    n_documents, n_words = run.words.shape
    bit_generator = np.random.PCG64()
    bit_generator.state = run.state
    blocks = weight_blocks(np.random.Generator(bit_generator), run.rows, n_documents)
    sums = np.empty((run.rows, n_words), dtype=np.float64)
    start = 0
    # One BLAS thread: scoring runs beside other work (web, Celery workers), and OpenBLAS threads that
    # wait for a busy core made this product many times slower (bench/spans/README.md).
    with _thread_pools().limit(limits=1, user_api="blas"):
        for weights in blocks:
            if run.exact:
                # Exact sums are the same numbers in any order, and this order is the faster product;
                # np.dot lets go of the GIL at any size (`@` not up to 500 outputs: the tally waited).
                sums[start : start + weights.shape[0]] = np.dot(run.words.T, weights.T).T
            else:
                # Other sums depend on the order BLAS adds in: they keep the product they always had.
                sums[start : start + weights.shape[0]] = weights @ run.words
            start += weights.shape[0]
    return sums


def weight_blocks(rng: np.random.Generator, rows: int, n_documents: int) -> Iterator[np.ndarray]:
    """The weight blocks of `rows` resamples, in order, each valid until the next is asked for. The
    next blocks are tallied in a thread meanwhile (`_TALLIED_AHEAD`), in bytes from `_ROW_BY_ROW_FROM`
    documents (an eighth of their weights), and cast to floats here."""
    per_block = block_rows(n_documents)
    starts = range(0, rows, per_block)
    shape = (min(per_block, rows), n_documents)
    weights = np.empty(shape, dtype=np.float64)
    tally_type = np.uint8 if n_documents >= _ROW_BY_ROW_FROM else np.float64
    tallies = [np.empty(shape, dtype=tally_type) for _ in range(_TALLIED_AHEAD + 1)]

    def tallied(block: int) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        counts = tallies[block % len(tallies)][: min(per_block, rows - starts[block])]
        return counts, _tally(rng, counts)

    with ThreadPoolExecutor(max_workers=1) as tallier:
        pending = deque(tallier.submit(tallied, block) for block in range(min(_TALLIED_AHEAD, len(starts))))
        for block in range(len(starts)):
            counts, wrapped = pending.popleft().result()
            if block + _TALLIED_AHEAD < len(starts):
                pending.append(tallier.submit(tallied, block + _TALLIED_AHEAD))
            weighted = weights[: len(counts)]
            weighted[:] = counts
            for row, exact in wrapped.items():
                weighted[row] = exact
            yield weighted


def resampled_words(packed: PackedColumns, resamples: int, seed: int) -> np.ndarray:
    """The packed words' sums in every resample (B x w), in this process: all resamples as one run."""
    first = np.random.default_rng(seed).bit_generator.state
    return resample_run_sums(ResampleRun(resamples, first, packed.words, packed.exact))


# How the words' sums are made: `resampled_words`, or runs of `resample_runs` summed elsewhere.
WordSums = Callable[[PackedColumns, int, int], np.ndarray]


def resampled_column_sums(
    columns: list[np.ndarray],
    n_documents: int,
    resamples: int,
    seed: int,
    *,
    consume: bool = False,
    word_sums: WordSums = resampled_words,
) -> np.ndarray:
    """Summed counts of every resample: `W @ C` (B x k) for the count matrix C whose columns these are,
    without building C (`pack_columns`). Only distinct non-zero columns are multiplied: equal columns (a
    count both compared runs share) are summed once and copied, so identical runs give bit-identical
    resampled metrics, and wide, sparse count tables stay cheap.
    """
    packed = pack_columns(columns, n_documents, consume=consume, resamples=resamples)
    if not packed.layout:
        return np.zeros((resamples, packed.n_columns), dtype=np.float64)
    return packed.column_sums(word_sums(packed, resamples, seed))
