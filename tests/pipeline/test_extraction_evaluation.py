"""`evaluate_extraction_inputs`, the paired report's scoring of inputs read whole: the offline route's
chunks compared in this process or a process pool (rows sent back as columns) give the evaluation
of one pass (`evaluate_extraction`), field by field."""

from __future__ import annotations

import random

import pytest

from annotations.importers.attribute_jsonl import GoldSet
from annotations.importers.extraction_predictions import PredictionSet
from annotations.importers.prompts_csv import PromptSet
from metrics.engine.attributes import evaluate_extraction
from metrics.pipeline import extraction_files
from metrics.pipeline.extraction_evaluation import ExtractionInputs, evaluate_extraction_inputs
from tests.engine.attributes.test_fast_paths import SCHEMA, SETTINGS, random_inputs


@pytest.mark.parametrize(("processes", "chunk_documents"), [(1, 33), (2, 70), (3, 70)])
def test_chunks_in_any_number_of_processes_give_the_evaluation_of_one_pass(
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
    one = evaluate_extraction(
        run_id="r", attributes=SCHEMA, gold_documents=documents, predictions=predictions, settings=SETTINGS[0]
    )
    several = evaluate_extraction_inputs(inputs, run_id="r", settings=SETTINGS[0], processes=processes)
    evaluation = several.evaluation
    assert evaluation.rows == one.rows
    assert evaluation.warnings == one.warnings
    assert evaluation.attributes == one.attributes
    assert evaluation.unscored_documents == one.unscored_documents
    assert several.n_rows == len(one.rows)
    # the same counts of ignored predicted values as one pass (merged, not one warning per chunk)
    assert sum("is not in the schema" in warning for warning in evaluation.warnings) == 1
