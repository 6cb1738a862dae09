"""Weight blocks tallied in a thread ahead of their products (`tallied_ahead_words`,
`resample_run_sums(ahead=True)`): the same blocks meet the same products, so the sums are those of
`resampled_words` to the last bit, whatever the table, the number of resamples and the last block."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.engine.uncertainty.resampling import (
    ResampleRun,
    block_rows,
    pack_columns,
    resample_run_sums,
    resampled_words,
    tallied_ahead_words,
)


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
    assert (
        tallied_ahead_words(packed, resamples, seed).tobytes()
        == resampled_words(packed, resamples, seed).tobytes()
    )


@pytest.mark.parametrize("kind", ["counts", "fractional"])
@pytest.mark.parametrize("resamples", [50, 120, 2_000])
def test_the_extraction_benchs_size_gives_the_bits_of_one_pass(kind, resamples):
    # 20,000 documents: blocks of 50 resamples, two held at once; 120 ends on a partial block.
    columns = random_columns(np.random.default_rng(resamples), 20_000, kind)
    packed = pack_columns(columns, 20_000, resamples=resamples)
    assert (
        tallied_ahead_words(packed, resamples, 8).tobytes() == resampled_words(packed, resamples, 8).tobytes()
    )


def test_a_run_from_the_middle_of_the_generator_gives_its_sums():
    columns = random_columns(np.random.default_rng(3), 3_000, "fractional")
    packed = pack_columns(columns, 3_000, resamples=400)
    generator = np.random.default_rng(11)
    generator.integers(0, 3_000, size=3_000)
    run = ResampleRun(400, generator.bit_generator.state, packed.words, packed.exact)
    assert resample_run_sums(run, ahead=True).tobytes() == resample_run_sums(run).tobytes()


@pytest.mark.parametrize("kind", ["counts", "fractional"])
def test_a_table_whose_block_is_over_a_million_entries_is_summed_as_one_pass_sums_it(kind):
    # Exact sums are tallied ahead in half blocks (90 resamples: four of 20, then 10); fractional
    # ones keep whole blocks, one at a time.
    assert block_rows(100_000) * 100_000 > 1_000_000
    columns = random_columns(np.random.default_rng(4), 100_000, kind)
    packed = pack_columns(columns, 100_000, resamples=90)
    assert packed.exact == (kind == "counts")
    assert tallied_ahead_words(packed, 90, 2).tobytes() == resampled_words(packed, 90, 2).tobytes()
