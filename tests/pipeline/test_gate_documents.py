"""Where a gate's documents come from: a threshold file is read, parsed and validated, or refused
naming the file and what is wrong with it."""

from __future__ import annotations

import json

import pytest

from metrics.pipeline.gate_documents import GateInputError, read_threshold_file


def test_a_threshold_file_that_is_not_json_is_refused_with_its_position(tmp_path):
    path = tmp_path / "gate.json"
    path.write_text('{"checks": [}', encoding="utf-8")
    with pytest.raises(GateInputError, match=r"gate\.json: not valid JSON: .* at line 1 column 13$"):
        read_threshold_file(path)


def test_a_threshold_file_is_read_into_checks(tmp_path):
    path = tmp_path / "gate.json"
    path.write_text(
        json.dumps(
            {"checks": [{"metric": "accuracy", "attribute": "5001", "min": 0.8, "on": "lower_bound"}]}
        ),
        encoding="utf-8",
    )
    (check,) = read_threshold_file(path)
    assert (check.index, check.metric, check.attribute, check.at_least, check.limit, check.on) == (
        0,
        "accuracy",
        "5001",
        True,
        0.8,
        "lower_bound",
    )


def test_every_problem_of_a_threshold_file_is_named_with_the_file(tmp_path):
    path = tmp_path / "gate.json"
    path.write_text(json.dumps({"checks": [{"metric": "f1", "min": "high", "max": 1}]}), encoding="utf-8")
    with pytest.raises(GateInputError) as caught:
        read_threshold_file(path)
    assert str(caught.value) == (
        f"{path}: checks[0]: needs exactly one of min, max, baseline (found min, max); "
        "checks[0].min: must be a number"
    )
