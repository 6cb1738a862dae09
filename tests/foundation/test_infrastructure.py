"""The suite runs on the real services that scripts/test starts, and a real worker reaches the database."""

import pytest
from django.db import connection

from annotations.models import Job, JobState
from annotations.tasks import job_worker_probe


@pytest.mark.postgresql
def test_the_suite_runs_on_postgresql_as_scripts_test_sets_it_up(db):
    assert connection.vendor == "postgresql"


@pytest.mark.worker
def test_a_real_worker_runs_a_task_that_writes_a_committed_row(celery_worker_process):
    job = Job.objects.create(kind="import")
    result = job_worker_probe.delay(job.pk)
    hostname = result.get(timeout=30)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED
    assert job.result == {"worker": hostname}
