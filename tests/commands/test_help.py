"""Each offline command's --help says what it does, its formats, its exit statuses, and gives an example."""

from __future__ import annotations

import pytest
from django.core.management import load_command_class


@pytest.mark.parametrize(
    ("command", "phrases"),
    [
        ("evaluate_spans", ["--gold GOLD", "former name", '"entities"', "--overwrite", "exit status 2"]),
        ("evaluate_extraction", ["EPPI Reviewer", "output_data_type", '"annotations"', "--overwrite"]),
        ("compare_runs", ["McNemar exact", "paired bootstrap", "--overwrite", "exit status 2"]),
        ("gate", ['{"checks": [', "lower_bound", "unknown metric", "1 a check fails"]),
    ],
)
def test_the_help_explains_the_command_with_an_example(command, phrases):
    text = load_command_class("metrics", command).create_parser("manage.py", command).format_help()
    assert "Example" in text and f"manage.py {command} " in text
    for phrase in phrases:
        assert phrase in text, phrase
