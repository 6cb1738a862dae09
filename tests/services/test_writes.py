"""Comparison rows a chunk encodes as COPY text, written chunk by chunk in any order, are the rows
`comparison_rows_write` writes for the same rows: the same cells, the same positions, ids in position
order, whatever the text holds (tabs, newlines, backslashes, quotes, letters outside ASCII)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from annotations.models import Document, GoldVersion
from experiments.models import ExperimentRun
from metrics.models import ComparisonRow, Scoring
from metrics.services.results import ComparisonRowData
from metrics.services.writes import (
    chunk_rows_encode,
    chunk_rows_write,
    comparison_rows_write,
    row_ids_reserve,
)

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db]

AWKWARD = ["tab\there", "new\nline", "back\\slash \\N", 'quote "x"', "Jürgen Özlem ß", "cr\rend", ""]


def rows_of(document_ids: list[str]) -> list[ComparisonRowData]:
    return [
        ComparisonRowData(
            document_id=document_id,
            columns={"document_id": document_id, "text": text, "start": index, "types": [text], "none": None},
            entity_type=text[:20],
            match_status=("exact", "missed", "spurious")[index % 3],
            is_correct=(True, False, None)[index % 3],
        )
        for document_id in document_ids
        for index, text in enumerate(AWKWARD)
    ]


def stored(scoring: Scoring) -> list[tuple]:
    return list(
        ComparisonRow.objects.filter(scoring=scoring)
        .order_by("position")
        .values_list(
            "position",
            "run_id",
            "document_id",
            "attribute_id",
            "entity_type",
            "match_status",
            "attribute_presence",
            "is_correct",
            "columns",
        )
    )


def test_rows_encoded_per_chunk_are_stored_as_comparison_rows_write_stores_them(project, alice):
    if connection.vendor != "postgresql":
        pytest.fail("this test needs PostgreSQL (COPY): run the suite through scripts/test")
    documents = {
        external_id: Document.objects.create(project=project, external_id=external_id, text="x").pk
        for external_id in ("d1", "d2", "d3")
    }
    gold_version = GoldVersion.objects.create(project=project, kind="spans", number=1)
    run = ExperimentRun.objects.create(project=project, name="r", kind="spans")
    whole = Scoring.objects.create(run=run, number=1, gold_version=gold_version, is_complete=True)
    chunked = Scoring.objects.create(run=run, number=2, gold_version=gold_version, is_complete=True)
    rows = rows_of(["d1", "d2", "d3"])

    comparison_rows_write(scoring=whole, rows=rows, document_pks=documents, attribute_pks={})
    chunks = [
        chunk_rows_encode(rows[:3], document_pks=documents, attribute_pks={}),
        chunk_rows_encode([], document_pks=documents, attribute_pks={}),
        chunk_rows_encode(rows[3:], document_pks=documents, attribute_pks={}),
    ]
    first_id = row_ids_reserve(len(rows))
    # The later chunk first: chunks write side by side, in any order.
    written = chunk_rows_write(scoring=chunked, rows=chunks[2], first_position=3, first_id=first_id + 3)
    written += chunk_rows_write(scoring=chunked, rows=chunks[1], first_position=3, first_id=first_id + 3)
    written += chunk_rows_write(scoring=chunked, rows=chunks[0], first_position=0, first_id=first_id)

    assert written == len(rows)
    assert stored(chunked) == stored(whole)
    ids = ComparisonRow.objects.filter(scoring=chunked).order_by("position").values_list("id", flat=True)
    assert list(ids) == list(range(first_id, first_id + len(rows)))  # id order is position order
    assert [row[-1]["text"] for row in stored(chunked)][: len(AWKWARD)] == AWKWARD


def test_rows_written_into_a_scoring_deleted_meanwhile_are_refused_by_the_database(project, alice):
    """The scoring's key is the one the database checks per row: a chunk's write that raced a new
    claim of its job (which deletes the hidden scoring) must fail, not leave rows behind."""
    if connection.vendor != "postgresql":
        pytest.fail("this test needs PostgreSQL (COPY): run the suite through scripts/test")
    document = Document.objects.create(project=project, external_id="d1", text="x").pk
    gold_version = GoldVersion.objects.create(project=project, kind="spans", number=1)
    run = ExperimentRun.objects.create(project=project, name="r", kind="spans")
    gone = Scoring.objects.create(run=run, number=1, gold_version=gold_version)
    encoded = chunk_rows_encode(rows_of(["d1"]), document_pks={"d1": document}, attribute_pks={})
    Scoring.objects.filter(pk=gone.pk).delete()

    with pytest.raises(IntegrityError), transaction.atomic():
        chunk_rows_write(scoring=gone, rows=encoded, first_position=0, first_id=row_ids_reserve(len(AWKWARD)))
        with connection.cursor() as cursor:  # the checks a commit makes, made now
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    assert not ComparisonRow.objects.filter(scoring_id=gone.pk).exists()
