"""`compare_extraction_inputs`, the paired report's comparison of inputs read whole: the offline
route's chunks compared in this process or in a process pool (rows sent back as columns) give the
rows, warnings and unscored documents of one pass, field by field, in the same order."""

from __future__ import annotations

import random

import pytest

from annotations.importers.attribute_jsonl import GoldSet
from annotations.importers.extraction_predictions import PredictionSet
from annotations.importers.prompts_csv import PromptSet
from metrics.pipeline import extraction_files
from metrics.pipeline.extraction_evaluation import compare_extraction_inputs
from metrics.pipeline.extraction_files import ExtractionInputs
from tests.engine.attributes.test_fast_paths import SCHEMA, SETTINGS, random_inputs
from tests.engine.attributes.test_support import compare_documents, unscored_document_ids


@pytest.mark.parametrize(("processes", "chunk_documents"), [(1, 33), (2, 70), (3, 70)])
def test_chunks_in_any_number_of_processes_give_the_comparison_of_one_pass(
    processes, chunk_documents, monkeypatch
):
    monkeypatch.setattr(extraction_files, "CHUNK_DOCUMENTS", chunk_documents)
    documents, predictions = random_inputs(random.Random(100 + processes), 400)
    inputs = ExtractionInputs(
        prompts=PromptSet(attributes=SCHEMA),
        gold=GoldSet(documents=documents),
        predictions=PredictionSet(documents=predictions),
        gold_format="jsonl",
        names={},
    )
    rows, warnings = compare_documents(
        run_id="r", attributes=SCHEMA, gold_documents=documents, predictions=predictions, settings=SETTINGS[0]
    )

    merged = compare_extraction_inputs(inputs, run_id="r", settings=SETTINGS[0], processes=processes)

    assert merged.rows == rows
    for row, reference in zip(merged.rows, rows, strict=True):
        assert type(row.llm_extraction) is type(reference.llm_extraction)
    assert merged.warnings == warnings
    assert merged.unscored_documents == unscored_document_ids(documents, SCHEMA)
    # the same counts of ignored predicted values as one pass (merged, not one warning per chunk)
    assert sum("is not in the schema" in warning for warning in merged.warnings) == 1
    assert merged.unknown_predicted == {}


def test_an_unknown_custom_metric_fails_before_any_comparison():
    inputs = ExtractionInputs(
        prompts=PromptSet(attributes=SCHEMA),
        gold=GoldSet(documents=[]),
        predictions=PredictionSet(documents={}),
        gold_format="jsonl",
        names={},
    )
    settings = SETTINGS[0].__class__(custom_metrics=("no_such_metric",))

    with pytest.raises(ValueError, match="no_such_metric"):
        compare_extraction_inputs(inputs, run_id="r", settings=settings)
