"""The attribute chunks merge to one pass: for any run and any chunk size, the merged chunks' rows
and warnings are `compare_documents`' over the whole run, field by field, in the same order; in
this process and in a process pool (rows cross it as columns)."""

from __future__ import annotations

import pickle
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics.pipeline.attributes import (
    AttributeChunk,
    compare_attribute_chunk,
    merge_attribute_partials,
)
from metrics.pipeline.executors import Executor, InProcess, ProcessPool
from tests.engine.attributes.test_fast_paths import SCHEMA, SETTINGS, random_inputs
from tests.engine.attributes.test_support import compare_documents, unscored_document_ids


def run_of(seed: int, documents: int):
    rng = random.Random(seed)
    gold, predictions = random_inputs(rng, documents)
    return dict(run_id="r", attributes=SCHEMA, gold_documents=gold, predictions=predictions)


def compare_in_chunks(run, evaluation_settings, chunk_documents: int, executor: Executor):
    """The run's rows and warnings from chunks of `chunk_documents` gold documents, merged."""
    gold = run["gold_documents"]
    chunks = [
        AttributeChunk(
            "r", SCHEMA, evaluation_settings, gold[start : start + chunk_documents], run["predictions"]
        )
        for start in range(0, len(gold), chunk_documents)
    ]
    merged = merge_attribute_partials(executor.map(compare_attribute_chunk, chunks))
    return merged.rows, merged.warnings


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(1, 40), st.integers(1, 45), st.sampled_from(SETTINGS))
def test_the_merge_of_any_chunking_equals_one_pass(seed, documents, chunk_documents, evaluation_settings):
    run = run_of(seed, documents)
    rows, warnings = compare_in_chunks(run, evaluation_settings, chunk_documents, InProcess())
    expected_rows, expected_warnings = compare_documents(**run, settings=evaluation_settings)
    assert rows == expected_rows
    assert warnings == expected_warnings


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 30))
def test_a_partial_result_crosses_a_process_boundary_unchanged(seed, documents):
    run = run_of(seed, documents)
    chunk = AttributeChunk(
        run["run_id"], run["attributes"], SETTINGS[0], run["gold_documents"], run["predictions"]
    )
    partial = compare_attribute_chunk(chunk)
    copy = pickle.loads(pickle.dumps(partial))
    assert copy == partial
    for row, original in zip(copy.rows, partial.rows, strict=True):
        assert type(row.human_extraction) is type(original.human_extraction)
        assert type(row.llm_extraction) is type(original.llm_extraction)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(1, 12))
def test_a_process_pool_gives_the_rows_and_warnings_of_one_pass(seed, chunk_documents):
    run = run_of(seed, 60)
    pooled = compare_in_chunks(run, SETTINGS[1], chunk_documents, ProcessPool(2))
    assert pooled == compare_documents(**run, settings=SETTINGS[1])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(1, 30), st.integers(1, 35))
def test_the_merge_lists_every_chunks_unscored_documents_in_gold_order(seed, documents, chunk_documents):
    run = run_of(seed, documents)
    gold = run["gold_documents"]
    chunks = [
        AttributeChunk("r", SCHEMA, SETTINGS[0], gold[start : start + chunk_documents], run["predictions"])
        for start in range(0, len(gold), chunk_documents)
    ]
    merged = merge_attribute_partials(map(compare_attribute_chunk, chunks))
    assert merged.unscored_documents == unscored_document_ids(gold, SCHEMA)
    assert merged.rows == compare_documents(**run, settings=SETTINGS[0])[0]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 30))
def test_a_chunk_crosses_a_process_boundary_unchanged(seed, documents):
    gold, predictions = random_inputs(random.Random(seed), documents)
    chunk = AttributeChunk("r", SCHEMA, SETTINGS[0], gold, predictions)
    copy = pickle.loads(pickle.dumps(chunk))
    assert copy == chunk
    assert list(copy.predictions) == list(predictions)
