"""`/runs/<id>/documents/<external_id>/`: one document as the run saw it, against its gold.

A held-back document is a 404, as in the API. The spans and rows shown are those of the run's latest
scoring (its gold version), so the page agrees with the run's comparison rows for this document.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from experiments.models import RunKind
from experiments.selectors import run_get_for_user
from metrics.selectors import comparison_row_list, scoring_get
from metrics.services.errors import ScoringNotFound
from web.highlighting import spans_html, value_marks_html
from web.pages import page
from web.selectors import (
    document_of_run,
    gold_spans_of_document,
    predicted_spans_of_document,
    predicted_values_of_document,
    run_document,
)


@page
def document_detail(request: HttpRequest, run_id: int, external_id: str) -> HttpResponse:
    run = run_get_for_user(user=request.user, run_id=run_id)
    document = document_of_run(run=run, external_id=external_id)
    try:
        scoring = scoring_get(run=run)
    except ScoringNotFound:
        scoring = None
    record = run_document(run=run, document=document)
    context = {"run": run, "document": document, "scoring": scoring, "record": record}
    gold_version = scoring.gold_version if scoring is not None else run.gold_version
    if run.kind == RunKind.SPANS:
        gold = gold_spans_of_document(gold_version=gold_version, document=document) if gold_version else []
        predicted = predicted_spans_of_document(run_document=record)
        context.update(
            is_spans=True,
            gold=gold,
            predicted=predicted,
            highlighted=spans_html(document.text, gold, predicted),
        )
    elif scoring is not None:
        rows = list(
            comparison_row_list(run=run, scoring=scoring, document=document.external_id)
            .select_related("attribute")
            .order_by("position")
        )
        marks = [
            (
                row.columns.get("attribute_id"),
                row.columns.get("attribute_label"),
                row.columns.get("human_extraction"),
            )
            for row in rows
        ]
        text = (record.context if record is not None and record.context else "") or document.text
        highlighted, found = value_marks_html(text, marks)
        context.update(
            rows=rows,
            highlighted=highlighted,
            found=found,
            context_source="the context the model read"
            if record is not None and record.context
            else "the document text",
            predictions=predicted_values_of_document(run_document=record),
        )
    return render(request, "web/document.html", context)
