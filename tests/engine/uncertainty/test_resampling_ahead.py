"""Weight blocks tallied in a thread ahead of their products, in bytes (`resample_run_sums`): the same
blocks meet the same products, so the sums are those of one plain pass to the last bit, whatever the
table, the number of resamples and the last block."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

from metrics.engine.uncertainty.resampling import (
    PackedColumns,
    ResampleRun,
    block_rows,
    pack_columns,
    resample_run_sums,
    resampled_words,
    weight_blocks,
)


def one_pass(packed: PackedColumns, resamples: int, seed: int, before: int = 0) -> np.ndarray:
    """Every resample's sums, each weight block counted by `bincount` just before its product, after
    `before` resamples' draws: the product `resample_run_sums` makes, on one BLAS thread (the bits of
    fractional sums depend on the block and on how BLAS splits the product)."""
    rng = np.random.default_rng(seed)
    n_documents = packed.words.shape[0]
    for _ in range(before):
        rng.integers(0, n_documents, size=n_documents)
    per_block = block_rows(n_documents)
    sums = []
    for start in range(0, resamples, per_block):
        draws = [
            rng.integers(0, n_documents, size=n_documents) for _ in range(min(per_block, resamples - start))
        ]
        weights = np.array([np.bincount(drawn, minlength=n_documents) for drawn in draws], dtype=np.float64)
        with threadpool_limits(1, user_api="blas"):
            sums.append(np.dot(packed.words.T, weights.T).T if packed.exact else weights @ packed.words)
    return np.concatenate(sums)


def random_columns(rng: np.random.Generator, n_documents: int, kind: str) -> list[np.ndarray]:
    """Counts packed several to a word, or beside fractional columns (sums whose bits depend on the
    order they are added in)."""
    columns = [rng.integers(0, 3, size=n_documents).astype(np.float64) for _ in range(12)]
    if kind == "fractional":
        columns += [rng.random(n_documents) * rng.integers(0, 2, size=n_documents) for _ in range(3)]
    return columns


@settings(max_examples=30, deadline=None)
@given(
    n_documents=st.sampled_from([1, 9, 700, 2_048, 5_000]),
    kind=st.sampled_from(["counts", "fractional"]),
    resamples=st.integers(min_value=1, max_value=900),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_sums_tallied_ahead_are_the_sums_of_one_pass_bit_for_bit(n_documents, kind, resamples, seed):
    columns = random_columns(np.random.default_rng(seed), n_documents, kind)
    packed = pack_columns(columns, n_documents, resamples=resamples)
    assert resampled_words(packed, resamples, seed).tobytes() == one_pass(packed, resamples, seed).tobytes()


@pytest.mark.parametrize("kind", ["counts", "fractional"])
@pytest.mark.parametrize("resamples", [50, 120, 2_000])
def test_the_extraction_benchs_size_gives_the_bits_of_one_pass(kind, resamples):
    # 20,000 documents: blocks of 50 resamples, three tallied at once; 120 ends on a partial block.
    columns = random_columns(np.random.default_rng(resamples), 20_000, kind)
    packed = pack_columns(columns, 20_000, resamples=resamples)
    assert resampled_words(packed, resamples, 8).tobytes() == one_pass(packed, resamples, 8).tobytes()


def test_a_run_from_the_middle_of_the_generator_gives_its_sums():
    columns = random_columns(np.random.default_rng(3), 3_000, "fractional")
    packed = pack_columns(columns, 3_000, resamples=400)
    generator = np.random.default_rng(11)
    generator.integers(0, 3_000, size=3_000)
    run = ResampleRun(400, generator.bit_generator.state, packed.words, packed.exact)
    assert resample_run_sums(run).tobytes() == one_pass(packed, 400, 11, before=1).tobytes()


@pytest.mark.parametrize("kind", ["counts", "fractional"])
def test_a_table_whose_block_is_over_a_million_entries_is_summed_as_one_pass_sums_it(kind):
    # 90 resamples: blocks of 40, 40 and 10, tallied ahead in bytes.
    assert block_rows(100_000) * 100_000 > 1_000_000
    columns = random_columns(np.random.default_rng(4), 100_000, kind)
    packed = pack_columns(columns, 100_000, resamples=90)
    assert packed.exact == (kind == "counts")
    assert resampled_words(packed, 90, 2).tobytes() == one_pass(packed, 90, 2).tobytes()


class CrowdedDraws:
    """A generator stand-in whose every resample draws document 0 three hundred times: its byte wraps."""

    def __init__(self) -> None:
        self.drawn: list[np.ndarray] = []

    def integers(self, low: int, high: int, size: int) -> np.ndarray:
        draws = np.random.default_rng(len(self.drawn)).integers(low, high, size=size)
        draws[:300] = 0
        self.drawn.append(draws)
        return draws


def test_a_resample_whose_byte_tally_wraps_is_weighted_by_its_exact_counts():
    draws = CrowdedDraws()
    blocks = [block.copy() for block in weight_blocks(draws, 5, 2_048)]
    expected = np.array([np.bincount(drawn, minlength=2_048) for drawn in draws.drawn], dtype=np.float64)
    assert np.array_equal(np.concatenate(blocks), expected)
    assert expected[:, 0].min() >= 300
