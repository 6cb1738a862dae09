"""A span run's comparison rows (metrics.services.span_scoring): one per gold span with its outcome, one
per spurious prediction, their cells in the comparison export's column order; a plan that needs no
rows (a run compared again) scores without them."""

from __future__ import annotations

import pytest

from annotations.models import GoldVersion
from experiments.models import ExperimentRun
from metrics.engine.spans.aggregate import aggregate
from metrics.engine.spans.types import DocumentSpans, Span
from metrics.services.span_scoring import ROW_COLUMNS, span_rows, span_scoring_plan
from tests.api.runs_support import SPANS, create_run, load_span_gold, post_documents, read_jsonl


def test_each_gold_span_gets_its_outcome_and_each_untouched_prediction_a_spurious_row():
    document = DocumentSpans(
        "letter-1",
        "Anna Meier lives in Bern; Dr. Graf saw her.",
        gold=[Span(0, 10, "PERSON"), Span(20, 24, "PLACE"), Span(30, 34, "PERSON")],
        predicted=[Span(0, 10, "PLACE"), Span(21, 24, "PLACE"), Span(36, 39, "PERSON")],
    )

    rows = span_rows(document, allowed=None)

    assert [(row.columns["side"], row.match_status, row.is_correct) for row in rows] == [
        ("gold", "exact", False),  # same bounds, another type
        ("gold", "overlap", False),
        ("gold", "missed", False),
        ("predicted", "spurious", False),
    ]
    assert [list(row.columns) for row in rows] == [list(ROW_COLUMNS)] * 4
    assert rows[0].columns["predicted_types"] == ["PLACE"] and not rows[0].columns["type_match"]
    assert rows[1].columns["type_match"] and not rows[1].columns["fully_covered"]
    assert rows[3].columns["fully_covered"] is None and rows[3].entity_type == "PERSON"


@pytest.mark.django_db
def test_a_plan_without_rows_scores_a_chunk_the_same_and_keeps_no_rows(project, alice_client):
    load_span_gold(project)
    posted = create_run(alice_client, kind="spans")
    documents = read_jsonl(SPANS / "spans_predictions.jsonl")
    assert post_documents(alice_client, posted["id"], documents).status_code == 201
    run = ExperimentRun.objects.select_related("project").get(pk=posted["id"])
    gold_version = GoldVersion.objects.get(project=project, kind="spans")
    plans = [
        span_scoring_plan(run=run, gold_version=gold_version, document_ids=None, rows=rows)
        for rows in (True, False)
    ]
    chunk = {"document_ids": plans[0].document_ids, "first_position": 0}

    full, bare = (plan.chunk_score(run=run, gold_version=gold_version, **chunk) for plan in plans)

    assert full.rows and bare.rows == []
    assert aggregate(bare.scores) == aggregate(full.scores)
