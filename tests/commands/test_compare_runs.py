"""`manage.py compare_runs`: a reviewer asks whether run B beats run A on the same gold, or is luck."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.pipeline.intervals.factories import (
    extraction_inputs,
    extraction_predictions,
    span_gold,
    span_predictions,
    write_jsonl,
)

DOCUMENTS = 30


def compare(tmp_path: Path, *arguments: str) -> tuple[dict, str]:
    stdout = io.StringIO()
    output = tmp_path / "comparison.json"
    call_command("compare_runs", *arguments, "--output", str(output), stdout=stdout, stderr=io.StringIO())
    return json.loads(output.read_text()), stdout.getvalue()


def misses_every_other_phone(index: int, entity_type: str) -> bool:
    return not (entity_type == "PHONE" and index % 2)


@pytest.fixture
def spans(tmp_path: Path) -> dict[str, Path]:
    return {
        "gold": span_gold(tmp_path, DOCUMENTS),
        "weak": span_predictions(tmp_path, "weak", DOCUMENTS, keeps=misses_every_other_phone),
        "weak_again": span_predictions(tmp_path, "weak_again", DOCUMENTS, keeps=misses_every_other_phone),
        "strong": span_predictions(tmp_path, "strong", DOCUMENTS),
    }


def span_arguments(spans: dict[str, Path], a: str, b: str, *extra: str) -> list[str]:
    return [
        "--kind",
        "spans",
        "--gold",
        str(spans["gold"]),
        "--a",
        str(spans[a]),
        "--b",
        str(spans[b]),
        *extra,
    ]


def test_identical_span_runs_give_delta_zero_and_p_one(spans, tmp_path):
    report, _ = compare(tmp_path, *span_arguments(spans, "weak", "weak_again", "--resamples", "500"))

    f1 = report["metrics"]["micro.chars.all.f1"]
    assert f1["a"] == f1["b"] and f1["delta"] == 0
    assert f1["p_value"] == f1["p_adjusted"] == 1.0
    assert report["documents_compared"] == DOCUMENTS


def test_a_clearly_better_span_run_gets_a_small_p_and_a_readable_table(spans, tmp_path):
    report, table = compare(tmp_path, *span_arguments(spans, "weak", "strong", "--resamples", "1000"))

    recall = report["metrics"]["micro.chars.all.recall"]
    assert recall["delta"] > 0 and recall["ci_low"] > 0 and recall["p_value"] < 0.01
    assert report["metrics"]["leakage.any_char.rate_all_documents"]["delta"] == -0.5
    assert (report["level"], report["resamples"], report["seed"]) == (0.95, 1000, 20260808)
    header = table.splitlines()[0].split()
    assert header[:4] == ["metric", "a", "b", "delta"]
    assert "micro.chars.all.recall" in table and "p (Holm)" in table
    assert "Comparison written to" in table


def test_the_same_seed_gives_the_same_comparison(spans, tmp_path):
    first, _ = compare(
        tmp_path, *span_arguments(spans, "weak", "strong", "--resamples", "300", "--seed", "4")
    )
    second, _ = compare(
        tmp_path,
        *span_arguments(spans, "weak", "strong", "--resamples", "300", "--seed", "4", "--overwrite"),
    )

    assert first == second


def test_a_human_run_is_reported_as_the_human_ceiling(spans, tmp_path):
    report, table = compare(
        tmp_path, *span_arguments(spans, "weak", "strong", "--b-source", "human", "--resamples", "200")
    )

    assert report["b"] == {"label": str(spans["strong"]), "source": "human"}
    assert report["human_ceiling"]["runs"] == [{"run": "b", "label": str(spans["strong"])}]
    assert "Human ceiling: run b" in table


def test_documents_only_one_run_predicted_are_listed(spans, tmp_path):
    partial = span_predictions(tmp_path, "partial", DOCUMENTS, skip=[2, 7])

    report, table = compare(
        tmp_path,
        "--kind", "spans", "--gold", str(spans["gold"]), "--a", str(spans["strong"]), "--b", str(partial),
        "--resamples", "200",
    )  # fmt: skip

    assert report["only_in_a"] == ["doc-002", "doc-007"]
    assert report["documents_compared"] == DOCUMENTS - 2
    assert "2 document(s) only run a predicted, left out: doc-002, doc-007" in table


def test_attribute_runs_are_compared_per_attribute(tmp_path):
    gold, prompts = extraction_inputs(tmp_path, DOCUMENTS)
    sloppy = extraction_predictions(
        tmp_path,
        "sloppy",
        DOCUMENTS,
        wrong=lambda index, attribute_id: attribute_id == "101" and index % 2 == 0,
    )
    careful = extraction_predictions(tmp_path, "careful", DOCUMENTS)

    report, table = compare(
        tmp_path,
        "--kind", "attributes", "--gold", str(gold), "--prompts", str(prompts),
        "--a", str(sloppy), "--b", str(careful), "--resamples", "300",
    )  # fmt: skip

    randomised = next(attribute for attribute in report["attributes"] if attribute["attribute_id"] == "101")
    assert (randomised["label"], randomised["type"]) == ("Randomised", "BOOL")
    accuracy = randomised["metrics"]["accuracy"]
    assert accuracy["delta"] == 0.5 and accuracy["p_value"] < 0.001
    assert accuracy["p_adjusted"] >= accuracy["p_value"]
    assert "Randomised (101): accuracy" in table


def test_bad_predictions_exit_2_naming_file_line_and_field(spans, tmp_path):
    broken = write_jsonl(
        tmp_path / "broken.jsonl",
        [{"document_id": "doc-000", "entities": [{"start": 5, "end": 999, "entity_type": "PERSON_NAME"}]}],
    )

    with pytest.raises(CommandError) as error:
        compare(
            tmp_path,
            "--kind",
            "spans",
            "--gold",
            str(spans["gold"]),
            "--a",
            str(spans["weak"]),
            "--b",
            str(broken),
        )

    assert error.value.returncode == 2
    message = str(error.value)
    assert "broken.jsonl:1" in message and "entities[0].end" in message
    assert not (tmp_path / "comparison.json").exists()


def test_attributes_need_a_prompt_file(tmp_path):
    gold, _ = extraction_inputs(tmp_path, 3)
    predictions = extraction_predictions(tmp_path, "llm", 3)

    with pytest.raises(CommandError) as error:
        compare(
            tmp_path,
            "--kind",
            "attributes",
            "--gold",
            str(gold),
            "--a",
            str(predictions),
            "--b",
            str(predictions),
        )

    assert error.value.returncode == 2
    assert "--prompts is required" in str(error.value)


def test_a_comparison_needs_at_least_one_resample(spans, tmp_path):
    with pytest.raises(CommandError) as error:
        compare(tmp_path, *span_arguments(spans, "weak", "strong", "--resamples", "0"))

    assert error.value.returncode == 2


def test_the_table_names_the_test_behind_each_p_value(spans, tmp_path):
    report, table = compare(tmp_path, *span_arguments(spans, "weak", "strong", "--resamples", "200"))

    assert table.splitlines()[0].split()[-1] == "test"
    rows = {line.split()[0]: line for line in table.splitlines()[2:] if line.strip()}
    assert rows["leakage.any_char.rate_all_documents"].endswith("McNemar exact")
    assert rows["micro.chars.all.recall"].endswith("paired bootstrap")
    assert report["p_value_methods"]["micro.chars.all.recall"] == "paired_bootstrap"


def test_a_prompt_file_that_is_not_there_is_bad_input_in_the_systems_words(tmp_path):
    gold, _ = extraction_inputs(tmp_path, 3)
    predictions = extraction_predictions(tmp_path, "llm", 3)
    missing = tmp_path / "nowhere.csv"

    with pytest.raises(CommandError) as error:
        compare(
            tmp_path,
            *("--kind", "attributes", "--gold", str(gold), "--prompts", str(missing)),
            *("--a", str(predictions), "--b", str(predictions)),
        )

    assert error.value.returncode == 2
    assert str(error.value) == f"[Errno 2] No such file or directory: '{missing}'; nothing written"
    assert not (tmp_path / "comparison.json").exists()
