"""Job progress is visible to the API while the import's write transaction is still open."""

from __future__ import annotations

import pytest
from django.db import transaction

from annotations.models import Job
from annotations.services.bulk import JobProgress


class RolledBack(Exception):
    pass


@pytest.mark.postgresql
def test_progress_written_inside_a_transaction_is_seen_at_once_and_survives_its_rollback(transactional_db):
    job = Job.objects.create(kind="import")
    progress = JobProgress(job.pk)

    with pytest.raises(RolledBack), transaction.atomic():
        progress.set(5, 10, force=True)
        # Read committed: this statement sees what the progress connection committed.
        assert Job.objects.values_list("progress_done", "progress_total").get(pk=job.pk) == (5, 10)
        raise RolledBack
    progress.close()

    assert Job.objects.values_list("progress_done", "progress_total").get(pk=job.pk) == (5, 10)


def test_progress_updates_are_throttled(transactional_db):
    job = Job.objects.create(kind="import")
    progress = JobProgress(job.pk, interval_seconds=3600)

    progress.set(1, 10, force=True)
    progress.set(2, 10)

    assert Job.objects.values_list("progress_done", flat=True).get(pk=job.pk) == 1
    assert (progress.done, progress.total) == (2, 10)
