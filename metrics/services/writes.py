"""Writing a scoring's derived rows in bulk: COPY on PostgreSQL, bulk_create elsewhere (`bulk_insert`).

Encoding a row (its JSON columns above all) is most of what writing it costs, so on PostgreSQL each
chunk task encodes its own rows into COPY lines lacking only the cells known once every chunk is
scored (position, id, scoring, run); elsewhere the rows stay in the partial result. Ids follow
positions, because readers page in id order, which must be the export's: the scoring's ids are
reserved as one block before any chunk writes (`row_ids_reserve`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import fields

from django.db import connection

from annotations.models import Attribute, Document
from annotations.services.bulk import bulk_insert, copy_into
from metrics.models import ComparisonRow, MetricValue, Scoring
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
    """Rows in export order (`position`); COPY is several times faster than INSERT for 100,000s of rows.
    Return how many."""
    # COPY takes JSON columns as text; bulk_create (SQLite) as values. Decided once, not per row.
    as_text = rows_encoded_here()
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
                json.dumps(row.columns, ensure_ascii=False) if as_text else row.columns,
                position,
                scoring.pk,
                scoring.run_id,
            )
            for position, row in enumerate(rows)
        ),
    )


# The cells a chunk encodes, then those the store adds, in the order of the COPY's column list.
CHUNK_COLUMNS = (
    "document_id",
    "attribute_id",
    "entity_type",
    "match_status",
    "attribute_presence",
    "is_correct",
    "columns",
)
STORE_COLUMNS = ("position", "id", "scoring_id", "run_id")
_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_NULL = "\\N"


def rows_encoded_here() -> bool:
    """True when chunks encode their rows as COPY text (PostgreSQL)."""
    return connection.vendor == "postgresql"


def chunk_rows_encode(
    rows: Sequence[ComparisonRowData], *, document_pks: Mapping[str, int], attribute_pks: Mapping[str, int]
) -> bytes:
    """One COPY text line per row, each ending in a tab (the store appends its cells and the newline);
    the lines are joined by newlines."""
    lines = []
    for row in rows:
        cells = (
            str(document_pks[row.document_id]),
            _NULL if row.attribute_id is None else str(attribute_pks[row.attribute_id]),
            _text(row.entity_type),
            _text(row.match_status),
            _boolean(row.attribute_presence),
            _boolean(row.is_correct),
            _text(json.dumps(row.columns, ensure_ascii=False)),
        )
        lines.append("\t".join(cells))
    return "\n".join(lines).encode()


def row_ids_reserve(count: int) -> int:
    """The first of `count` consecutive comparison row ids that no other writer will take. Inside a
    transaction: the table is locked against other writers until it ends (they wait milliseconds)."""
    table = ComparisonRow._meta.db_table
    with connection.cursor() as cursor:
        # Other writers take ids from the sequence as they insert; the lock keeps them out meanwhile.
        cursor.execute(f"LOCK TABLE {connection.ops.quote_name(table)} IN SHARE ROW EXCLUSIVE MODE")
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
        (sequence,) = cursor.fetchone()
        cursor.execute("SELECT nextval(%s)", [sequence])
        (first,) = cursor.fetchone()
        if count > 1:
            cursor.execute("SELECT setval(%s, %s)", [sequence, first + count - 1])
    return first


def chunk_rows_write(*, scoring: Scoring, rows: bytes, first_position: int, first_id: int) -> int:
    """COPY a chunk's encoded `rows` as the rows of `scoring` from position `first_position` and id
    `first_id` on; return how many."""
    if not rows:
        return 0
    tail = f"\t{scoring.pk}\t{scoring.run_id}\n".encode()
    lines = rows.split(b"\n")
    with copy_into(ComparisonRow, (*CHUNK_COLUMNS, *STORE_COLUMNS)) as copy:
        copy.write(
            b"".join(
                b"%s\t%d\t%d%s" % (line, first_position + index, first_id + index, tail)
                for index, line in enumerate(lines)
            )
        )
    return len(lines)


def row_keys(project_id: int, document_ids: Collection[str]) -> tuple[dict[str, int], dict[str, int]]:
    """The keys rows are stored with: the pks of these documents by external id, and of the project's
    attributes by attribute id."""
    documents = Document.objects.filter(project_id=project_id, external_id__in=document_ids)
    attributes = Attribute.objects.filter(project_id=project_id)
    return (
        dict(documents.values_list("external_id", "pk")),
        dict(attributes.values_list("attribute_id", "pk")),
    )


def _text(value: str) -> str:
    return value.translate(_ESCAPES)


def _boolean(value: bool | None) -> str:
    return _NULL if value is None else ("t" if value else "f")
