"""Bulk writes (COPY on PostgreSQL, batched INSERTs elsewhere) and job progress that others can see.

An import writes hundreds of thousands of rows in one transaction. On PostgreSQL they go through
`COPY ... FROM STDIN` (psycopg 3), which streams rows without a statement per row or per batch;
SQLite (the embedded default) gets `bulk_create` in batches. Either way, never one query per row.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import psycopg
from django.db import connection, models

from annotations.models import Job

BATCH_SIZE = 2000


def bulk_insert(model: type[models.Model], columns: Sequence[str], rows: Iterable[tuple]) -> int:
    """Insert `rows` (tuples of column values, attnames such as `document_id`) into `model`'s table.

    JSON columns take already-encoded JSON text on PostgreSQL (COPY passes text through) and Python
    values elsewhere; callers use `json_cell` to get this right. Returns the number of rows written.
    """
    if connection.vendor == "postgresql":
        count = 0
        with copy_into(model, columns) as copy:
            for row in rows:
                copy.write_row(row)
                count += 1
        return count
    count = 0
    batch: list[models.Model] = []
    for row in rows:
        batch.append(model(**dict(zip(columns, row, strict=True))))
        if len(batch) >= BATCH_SIZE:
            model.objects.bulk_create(batch, batch_size=BATCH_SIZE)
            count += len(batch)
            batch = []
    model.objects.bulk_create(batch, batch_size=BATCH_SIZE)
    return count + len(batch)


@contextmanager
def copy_into(model: type[models.Model], columns: Sequence[str]) -> Iterator[psycopg.Copy]:
    """A `COPY <model's table> (<columns>) FROM STDIN` on the current connection (PostgreSQL only):
    write rows (`write_row`) or ready COPY text (`write`) to what it yields."""
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(column) for column in columns)
    with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        yield copy


def json_cell(value, encoded: str):
    """The cell for a JSON column: its JSON text for COPY, the value itself for bulk_create.

    SQL NULL stays None on both paths (JSONField(null=True) stores Python None as SQL NULL).
    """
    if value is None:
        return None
    return encoded if connection.vendor == "postgresql" else value


class JobProgress:
    """Writes a job's progress so that the API shows it while the job runs.

    Inside the import's write transaction an UPDATE of the job row would stay invisible until the
    commit, so on PostgreSQL progress goes through a second, autocommit connection. Writes are
    throttled: a progress bar needs a few updates a second, not one per batch.
    """

    def __init__(self, job_id: int, *, interval_seconds: float = 0.5):
        self.job_id = job_id
        self.interval_seconds = interval_seconds
        self._last = 0.0
        self.done = 0
        self.total = 0
        self._side: psycopg.Connection | None = None

    def set(self, done: int, total: int, *, force: bool = False) -> None:
        self.done, self.total = done, total
        now = time.monotonic()
        if not force and now - self._last < self.interval_seconds:
            return
        self._last = now
        done = min(done, total) if total else done
        if connection.in_atomic_block and connection.vendor == "postgresql":
            self._side_connection().execute(
                f"UPDATE {connection.ops.quote_name(Job._meta.db_table)} "
                "SET progress_done = %s, progress_total = %s WHERE id = %s",
                (done, total, self.job_id),
            )
        else:
            Job.objects.filter(pk=self.job_id).update(progress_done=done, progress_total=total)

    def _side_connection(self) -> psycopg.Connection:
        if self._side is None:
            params = {
                key: value
                for key, value in connection.get_connection_params().items()
                if key not in ("cursor_factory", "context", "prepare_threshold")
            }
            self._side = psycopg.connect(**params, autocommit=True)
        return self._side

    def close(self) -> None:
        if self._side is not None:
            self._side.close()
            self._side = None
