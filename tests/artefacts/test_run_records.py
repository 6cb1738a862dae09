"""The run's records: model output, cost and timing totals, config, prompts and log."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.artefacts.run_records import (
    json_items,
    json_value,
    llm_annotation_lines,
    llm_annotations_head,
    metadata_entries,
    metadata_head,
    metadata_totals,
    write_config_yaml,
    write_evaluation_log,
    write_json_list,
    write_prompts_used_csv,
)
from metrics.engine.attributes.types import (
    AttributeSpec,
    AttributeType,
    PredictedAnnotation,
    PredictionDocument,
)

PREDICTIONS = {
    "d1": PredictionDocument(
        document_id="d1",
        context="120 participants in Kenya",
        annotations=(PredictedAnnotation("a1", "Kenya", additional_text="in Kenya", reasoning="stated"),),
        input_tokens=900,
        output_tokens=40,
        cost_usd=0.1,
        timings={"llm_call_seconds": 1.25, "parsing_seconds": 0.5},
    ),
    "d2": PredictionDocument(
        document_id="d2",
        status="failed",
        error="timeout",
        input_tokens=100,
        cost_usd=0.2,
        timings={"llm_call_seconds": 60.0},
    ),
}


def extraction_metadata(run_id, predictions, gold_document_ids) -> str:
    entries = metadata_entries(predictions)
    head = metadata_head(
        run_id=run_id,
        totals=metadata_totals(entries),
        n_gold_documents=len(gold_document_ids),
        without_line=[document_id for document_id in gold_document_ids if document_id not in predictions],
    )
    destination = io.StringIO()
    write_json_list(head, "per_document", json_items(entries), destination)
    return destination.getvalue()


def llm_annotations(run_id, predictions, attributes, settings) -> str:
    head = llm_annotations_head(
        run_id,
        settings,
        n_gold_documents=len(predictions),
        n_prediction_lines=len(predictions),
        attributes=attributes,
    )
    destination = io.StringIO()
    write_json_list(head, "documents", llm_annotation_lines(predictions, attributes), destination)
    return destination.getvalue()


def test_llm_annotations_hold_every_document_with_context_annotations_and_run_metadata():
    country = AttributeSpec("a1", "Country", AttributeType.STRING, "Where?")

    record = json.loads(llm_annotations("run-1", PREDICTIONS, [country], {"model": "gpt-4o-mini"}))

    assert (record["extraction_run_id"], record["format_version"], record["run"]) == (
        "run-1",
        1,
        {
            "model": "gpt-4o-mini",
            "n_gold_documents": 2,
            "n_prediction_lines": 2,
            "attributes": [{"attribute_id": "a1", "attribute_label": "Country", "attribute_type": "STRING"}],
        },
    )
    first, second = record["documents"]
    assert first == {
        "document_id": "d1",
        "status": "ok",
        "error": None,
        "context": "120 participants in Kenya",
        "annotations": [
            {
                "attribute_id": "a1",
                "attribute_label": "Country",
                "output_data": "Kenya",
                "additional_text": "in Kenya",
                "reasoning": "stated",
            }
        ],
    }
    assert (second["status"], second["error"], second["annotations"]) == ("failed", "timeout", [])


def test_an_empty_run_is_still_valid_json():
    assert json.loads(llm_annotations("r", {}, [], {}))["documents"] == []


def test_metadata_sums_cost_tokens_and_stage_times_and_lists_each_document():
    metadata = json.loads(extraction_metadata("run-1", PREDICTIONS, ["d1", "d2", "d3"]))
    assert metadata["total_cost_usd"] == pytest.approx(0.3)
    assert (metadata["total_input_tokens"], metadata["total_output_tokens"]) == (1000, 40)
    assert metadata["stage_durations_seconds"] == {"llm_call_seconds": 61.25, "parsing_seconds": 0.5}
    assert metadata["total_pipeline_duration_seconds"] == 61.75
    assert metadata["documents_without_prediction_line"] == ["d3"]
    assert (metadata["n_failed_documents"], metadata["n_prediction_lines"], metadata["n_gold_documents"]) == (
        1,
        2,
        3,
    )
    # Only d1 reported output tokens; the total says how many documents entered it.
    assert metadata["n_documents_reporting"]["output_tokens"] == 1
    assert [entry["document_id"] for entry in metadata["per_document"]] == ["d1", "d2"]
    assert metadata["per_document"][1] == {
        "document_id": "d2",
        "status": "failed",
        "error": "timeout",
        "n_annotations": 0,
        "input_tokens": 100,
        "output_tokens": None,
        "cost_usd": 0.2,
        "timings": {"llm_call_seconds": 60.0},
    }


def test_a_total_nobody_reported_is_null_not_zero():
    silent = {"d1": PredictionDocument(document_id="d1", context="x")}

    metadata = json.loads(extraction_metadata("r", silent, ["d1"]))
    assert metadata["total_cost_usd"] is None
    assert metadata["total_input_tokens"] is None
    assert metadata["total_pipeline_duration_seconds"] is None


def test_config_snapshot_puts_the_effective_settings_first_and_keeps_key_order():
    destination = io.StringIO()

    write_config_yaml(
        {"edit_distance_match_threshold": 0.8, "number_format": "de"},
        {"model": "m", "number_format": "en"},
        destination,
    )

    assert destination.getvalue().splitlines()[0] == "edit_distance_match_threshold: 0.8"
    assert yaml.safe_load(destination.getvalue()) == {
        "edit_distance_match_threshold": 0.8,
        "number_format": "de",
        "model": "m",
    }


def test_prompts_used_are_written_in_the_prompt_csv_layout_with_formulas_escaped():
    destination = io.StringIO()

    write_prompts_used_csv(
        [
            AttributeSpec("a1", "Country", AttributeType.STRING, "Which country?"),
            AttributeSpec("a2", "Dose", AttributeType.FLOAT, "-Give the dose in mg"),
        ],
        destination,
    )

    assert list(csv.reader(io.StringIO(destination.getvalue(), newline=""))) == [
        ["prompt", "output_data_type", "attribute_id", "attribute_label"],
        ["Which country?", "string", "a1", "Country"],
        ["'-Give the dose in mg", "float", "a2", "Dose"],
    ]


def test_the_log_has_one_line_per_entry():
    destination = io.StringIO()

    write_evaluation_log(["INFO one", "WARNING two\n"], destination)

    assert destination.getvalue() == "INFO one\nWARNING two\n"


ATTRIBUTES = [
    AttributeSpec("a1", "Country", AttributeType.STRING, "Where?"),
    AttributeSpec("a2", 'A "quoted"\tlabel \u00e9', AttributeType.BOOL, "Is it?"),
]
# Values as the prediction reader can hand them over (any JSON, and NaN / infinities, which json
# reads), plus the str cases orjson refuses (lone surrogates) and subclasses.
_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40)
    | st.sampled_from(["\ud800", "a\udfffb", "\x00\x1f\x7f\u2028\u2029\ufeff", '"\\/', "\U0001f600"])
)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=10,
)


class _Text(str):
    pass


class _Number(int):
    pass


@settings(max_examples=400, deadline=None)
@given(_JSON_VALUES)
def test_json_value_is_json_dumps(value):
    assert json_value(value) == json.dumps(value, ensure_ascii=False)


def test_json_value_leaves_subclasses_to_json():
    assert json_value(_Text("a\nb")) == json.dumps(_Text("a\nb"), ensure_ascii=False)
    assert json_value(_Number(7)) == json.dumps(_Number(7), ensure_ascii=False)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(max_size=30),
            st.lists(st.tuples(st.sampled_from(["a1", "a2", "x"]), _JSON_VALUES, _JSON_SCALARS), max_size=3),
        ),
        max_size=3,
    )
)
def test_llm_annotations_lines_are_the_json_module_s(documents):
    # The file as the plain json encoder wrote it, one record per line (format of the first version).
    predictions = {}
    for index, (context, given_annotations) in enumerate(documents):
        predictions[f"d{index}"] = PredictionDocument(
            document_id=f"d{index}",
            context=context,
            annotations=tuple(
                PredictedAnnotation(
                    attribute_id,
                    output_data,
                    additional_text=text if isinstance(text, str) else None,
                    reasoning=None if isinstance(text, str) else "r",
                )
                for attribute_id, output_data, text in given_annotations
            ),
        )
    labels = {spec.attribute_id: spec.label for spec in ATTRIBUTES}
    lines = list(llm_annotation_lines(predictions, ATTRIBUTES))
    expected = [
        json.dumps(
            {
                "document_id": document.document_id,
                "status": document.status,
                "error": document.error,
                "context": document.context,
                "annotations": [
                    {
                        "attribute_id": annotation.attribute_id,
                        "attribute_label": labels.get(annotation.attribute_id),
                        "output_data": annotation.output_data,
                        "additional_text": annotation.additional_text,
                        "reasoning": annotation.reasoning,
                    }
                    for annotation in document.annotations
                ],
            },
            ensure_ascii=False,
        )
        for document in predictions.values()
    ]
    assert lines == expected
