"""Writing a scoring's derived rows in bulk: COPY on PostgreSQL, bulk_create elsewhere (`bulk_insert`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

from annotations.services.bulk import bulk_insert
from metrics.models import ComparisonRow, MetricValue, Scoring
from metrics.services.chunk_rows import CHUNK_COLUMNS, chunk_rows_encode, chunk_rows_write, rows_encoded_here
from metrics.services.results import ComparisonRowData, MetricValueData

BATCH_SIZE = 5000


def metric_values_write(*, scoring: Scoring, values: Sequence[MetricValueData]) -> None:
    # MetricValueData's fields are the model's columns.
    names = [column.name for column in fields(MetricValueData)]
    MetricValue.objects.bulk_create(
        [
            MetricValue(
                scoring=scoring, run_id=scoring.run_id, **{name: getattr(value, name) for name in names}
            )
            for value in values
        ],
        batch_size=BATCH_SIZE,
    )


def comparison_rows_write(
    *,
    scoring: Scoring,
    rows: Sequence[ComparisonRowData],
    document_pks: dict[str, int],
    attribute_pks: dict[str, int],
) -> int:
    """Rows in export order (`position`), as a chunk encodes them on PostgreSQL (COPY is several times
    faster than INSERT for 100,000s of rows); return how many."""
    if rows_encoded_here():
        for start in range(0, len(rows), BATCH_SIZE):
            part = rows[start : start + BATCH_SIZE]
            encoded = chunk_rows_encode(part, document_pks=document_pks, attribute_pks=attribute_pks)
            chunk_rows_write(scoring=scoring, rows=encoded, first_position=start)
        return len(rows)
    return bulk_insert(
        ComparisonRow,
        (*CHUNK_COLUMNS, "position", "scoring_id", "run_id"),
        (
            (
                document_pks[row.document_id],
                None if row.attribute_id is None else attribute_pks[row.attribute_id],
                row.entity_type,
                row.match_status,
                row.attribute_presence,
                row.is_correct,
                row.columns,
                position,
                scoring.pk,
                scoring.run_id,
            )
            for position, row in enumerate(rows)
        ),
    )
