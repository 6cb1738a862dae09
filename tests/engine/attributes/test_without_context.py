"""A prediction whose context is null (the pipeline had no text for the document) is scored: its rows
have no source check and no verbatim scores, it is in neither source stratum, and a warning counts
such documents (docs/semantics.md section 2)."""

from __future__ import annotations

import csv
import io

from metrics.artefacts.comparison import comparison_csv
from metrics.engine.attributes.types import AttributeType, MatchStatus
from metrics.engine.uncertainty.attribute_metrics import attribute_document_counts
from tests.engine.attributes.test_support import evaluate, gold, predicted, result_of, spec

SCHEMA = [
    spec("randomised", AttributeType.BOOL),
    spec("city", AttributeType.STRING),
    spec("n_enrolled", AttributeType.INTEGER),
]
CONTEXT = "A randomised trial of 120 adults in Leeds."
GOLD = [
    gold(
        "d1", {"randomised": True, "city": "Leeds", "n_enrolled": 120}, additional_text={"city": "in Leeds"}
    ),
    gold(
        "d2", {"randomised": True, "city": "Leeds", "n_enrolled": 120}, additional_text={"city": "in Leeds"}
    ),
    gold("d3", {"randomised": True, "city": "York", "n_enrolled": 80}),
]


def run():
    return evaluate(
        SCHEMA,
        GOLD,
        [
            predicted("d1", {"randomised": True, "city": "Leeds", "n_enrolled": 120}, context=CONTEXT),
            predicted(
                "d2",
                {"randomised": True, "city": "Leeds", "n_enrolled": 12},
                context=None,
                verbatim={"city": "Leeds"},
            ),
            predicted("d3", {"randomised": False, "city": "Leeds", "n_enrolled": 80}, context=None),
        ],
    )


def test_the_rows_of_a_document_without_context_have_blank_source_and_verbatim_cells():
    evaluation = run()

    for row in evaluation.rows:
        if row.document_id == "d1":
            assert row.human_verbatim_fuzzy_match_pct is not None
            continue
        assert row.gold_value_in_context is None
        assert row.human_verbatim_fuzzy_match_pct is None
        assert row.llm_verbatim_fuzzy_match_pct is None


def test_a_document_without_context_is_still_scored_and_gets_a_match_status():
    evaluation = run()
    statuses = {(row.document_id, row.attribute_id): row.match_status for row in evaluation.rows}

    assert statuses["d2", "city"] is MatchStatus.EXACT_MATCH
    assert statuses["d2", "n_enrolled"] is MatchStatus.EXTRACTION_ERROR_BAD_SOURCE
    assert statuses["d3", "n_enrolled"] is MatchStatus.EXACT_MATCH
    assert result_of(evaluation, "city").counts["n_gold_instances"] == 3
    assert result_of(evaluation, "randomised").metrics["accuracy"] == 2 / 3


def test_it_is_in_neither_source_stratum():
    evaluation = run()
    city = result_of(evaluation, "city")
    enrolled = result_of(evaluation, "n_enrolled")

    # Only d1 had a context, and its gold is in it: the good stratum is d1, the bad one empty.
    assert city.counts["n_good_source_instances"] == 1
    assert city.metrics["accuracy_given_good_source"] == 1.0
    assert city.metrics["accuracy_given_bad_source"] is None
    assert enrolled.metrics["accuracy_given_bad_source"] is None
    counts = attribute_document_counts(evaluation.rows)
    assert counts.column("city.given_bad_source.rows").sum() == 0
    assert counts.column("city.given_good_source.rows").sum() == 1


def test_a_warning_counts_the_documents_without_context():
    warnings = [warning for warning in run().warnings if "without a context" in warning]

    assert len(warnings) == 1
    assert warnings[0].startswith("2 document(s)")
    assert "'d2', 'd3'" in warnings[0]


def test_the_comparison_file_leaves_the_cells_blank():
    text = "".join(comparison_csv(run().rows))

    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    d1_city, d2_city = (row for row in rows if row["attribute_id"] == "city" and row["document_id"] != "d3")
    assert d2_city["human_verbatim_fuzzy_match_pct"] == d2_city["llm_verbatim_fuzzy_match_pct"] == ""
    assert d2_city["gold_value_in_context"] == ""
    assert d2_city["match_status"] == "exact_match"
    assert d1_city["human_verbatim_fuzzy_match_pct"] == "100.00"
    assert d1_city["gold_value_in_context"] == "True"
