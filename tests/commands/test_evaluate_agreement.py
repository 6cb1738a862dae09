"""`manage.py evaluate_agreement`: files in, agreement.json out, exit status 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.agreement.export import export_zip


def _run(*args: str) -> None:
    call_command("evaluate_agreement", *args, "--resamples", "50")


def test_it_writes_the_contract_for_an_inception_export(tmp_path: Path):
    export = tmp_path / "export.zip"
    export.write_bytes(export_zip())
    output = tmp_path / "agreement.json"
    _run("--input", str(export), "--output", str(output))
    report = json.loads(output.read_text())
    pair = report["spans"]["pairs"][0]
    assert set(pair) >= {
        "a",
        "b",
        "f1_exact",
        "f1_exact_ci",
        "f1_overlap",
        "f1_overlap_ci",
        "f1_typed",
        "f1_typed_ci",
        "cohen_kappa_chars",
        "cohen_kappa_chars_ci",
    }
    assert set(report["spans"]["overall"]) >= {"krippendorff_alpha_chars", "annotators", "documents"}
    assert report["spans"]["single_annotator_documents"] == ["doc-3"]


def test_jsonl_lines_with_an_annotator_field_are_annotators(tmp_path: Path):
    lines = [
        {
            "document_id": "d",
            "text": "Anna",
            "annotator": "x",
            "entities": [{"start": 0, "end": 4, "entity_type": "PERSON_NAME"}],
        },
        {"document_id": "d", "text": "Anna", "annotator": "y", "entities": []},
    ]
    source = tmp_path / "spans.jsonl"
    source.write_text("\n".join(json.dumps(line) for line in lines))
    output = tmp_path / "agreement.json"
    _run("--input", str(source), "--output", str(output))
    pair = json.loads(output.read_text())["spans"]["pairs"][0]
    assert (pair["a"], pair["b"], pair["f1_exact"]) == ("x", "y", 0.0)


def test_attribute_gold_with_annotators_and_a_prompt_csv(tmp_path: Path):
    prompts = tmp_path / "prompts.csv"
    prompts.write_text(
        "prompt,output_data_type,attribute_id,attribute_label\nDoes the patient smoke?,bool,smoker,Smoker\n"
    )
    gold = tmp_path / "gold.jsonl"
    rows = [
        ("d1", "a", True),
        ("d1", "b", True),
        ("d2", "a", False),
        ("d2", "b", True),
        ("d3", "a", False),
        ("d3", "b", False),
    ]
    gold.write_text(
        "\n".join(
            json.dumps({"document_id": d, "annotator": a, "attributes": {"smoker": {"output_data": v}}})
            for d, a, v in rows
        )
    )
    output = tmp_path / "agreement.json"
    _run("--gold", str(gold), "--prompts", str(prompts), "--output", str(output))
    (entry,) = json.loads(output.read_text())["attributes"]
    assert (entry["attribute_id"], entry["measure"]) == ("smoker", "cohen_kappa")
    assert entry["percent_agreement"] == pytest.approx(2 / 3)


def test_it_refuses_an_existing_output_unless_overwrite(tmp_path: Path):
    export = tmp_path / "export.zip"
    export.write_bytes(export_zip())
    output = tmp_path / "agreement.json"
    output.write_text("keep me")
    with pytest.raises(CommandError) as refused:
        _run("--input", str(export), "--output", str(output))
    assert refused.value.returncode == 2 and "--overwrite" in str(refused.value)
    assert output.read_text() == "keep me"
    _run("--input", str(export), "--output", str(output), "--overwrite")
    assert "spans" in json.loads(output.read_text())


def test_input_without_annotators_is_one_message_and_exit_2(tmp_path: Path):
    source = tmp_path / "spans.jsonl"
    source.write_text(json.dumps({"document_id": "d", "text": "Anna", "entities": []}))
    output = tmp_path / "agreement.json"
    with pytest.raises(CommandError) as refused:
        _run("--input", str(source), "--output", str(output))
    assert refused.value.returncode == 2 and "annotator" in str(refused.value)
    assert not output.exists()


def test_spans_and_attributes_together_are_refused(tmp_path: Path):
    with pytest.raises(CommandError) as refused:
        _run("--input", "x", "--gold", "y", "--prompts", "z", "--output", str(tmp_path / "a.json"))
    assert refused.value.returncode == 2


def test_a_missing_attribute_file_is_one_line_and_exit_2(tmp_path: Path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text("")
    with pytest.raises(CommandError) as refused:
        _run(
            "--gold",
            str(gold),
            "--prompts",
            str(tmp_path / "missing.csv"),
            "--output",
            str(tmp_path / "a.json"),
        )
    assert refused.value.returncode == 2
    assert str(refused.value) == f"--prompts {tmp_path / 'missing.csv'}: no such file"


def test_a_file_of_the_wrong_kind_is_named_in_one_line_and_exit_2(tmp_path: Path):
    attribute_gold = tmp_path / "gold.jsonl"
    attribute_gold.write_text(json.dumps({"document_id": "d", "annotator": "anna", "attributes": {}}) + "\n")
    output = tmp_path / "agreement.json"
    with pytest.raises(CommandError) as refused:
        _run("--input", str(attribute_gold), "--output", str(output))
    assert refused.value.returncode == 2
    assert str(refused.value).startswith(f"--input {attribute_gold}: this is an attribute gold JSONL file")
    assert not output.exists()


def test_help_explains_the_formats_with_an_example(capsys):
    with pytest.raises(SystemExit):
        call_command("evaluate_agreement", "--help")
    text = capsys.readouterr().out
    assert "Example:" in text and "--overwrite" in text and "evaluate_agreement --input" in text
