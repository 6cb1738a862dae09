"""An attribute chunk crosses to another process as columns and comes back as the same documents."""

from __future__ import annotations

import pickle
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.engine.attributes.types import (
    FullTextDetail,
    GoldAnnotation,
    GoldDocument,
    PredictedAnnotation,
    PredictionDocument,
)
from metrics.pipeline.attribute_columns import (
    gold_columns,
    gold_documents,
    prediction_columns,
    prediction_documents,
)
from metrics.pipeline.attributes import AttributeChunk
from tests.engine.attributes.test_fast_paths import SCHEMA, SETTINGS, random_inputs

EVERY_FIELD_GOLD = GoldDocument(
    "d1",
    name="Paper 1",
    external_id="E-1",
    text="full text",
    annotations={
        "a": GoldAnnotation(
            "12", "12 patients", (FullTextDetail("Page 2: 12", "77", "arm 1"), FullTextDetail("x"))
        ),
        "b": GoldAnnotation(True),
        "c": GoldAnnotation(["x", {"y": 1}], None, ()),
    },
)
EVERY_FIELD_PREDICTION = PredictionDocument(
    "d1",
    context=None,
    status="failed",
    error="timeout",
    annotations=(PredictedAnnotation("a", 12, "12 patients", "because"), PredictedAnnotation("b", None)),
    input_tokens=10,
    output_tokens=2,
    cost_usd=0.5,
    timings={"llm": 1.5},
)


def test_every_field_of_every_document_survives_the_columns():
    no_annotations = GoldDocument("d2")
    assert gold_documents(gold_columns([EVERY_FIELD_GOLD, no_annotations])) == [
        EVERY_FIELD_GOLD,
        no_annotations,
    ]
    predictions = {"d1": EVERY_FIELD_PREDICTION, "d2": PredictionDocument("d2")}
    assert prediction_documents(prediction_columns(predictions)) == predictions


def test_no_documents_make_empty_columns():
    assert gold_documents(gold_columns([])) == []
    assert prediction_documents(prediction_columns({})) == {}


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 30))
def test_a_chunk_crosses_a_process_boundary_unchanged(seed, documents):
    gold, predictions = random_inputs(random.Random(seed), documents)
    chunk = AttributeChunk("r", SCHEMA, SETTINGS[0], gold, predictions)
    copy = pickle.loads(pickle.dumps(chunk))
    assert copy == chunk
    assert list(copy.predictions) == list(predictions)
