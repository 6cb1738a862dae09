"""Celery tasks of the metrics app: thin, they fetch by id and call a service."""

from __future__ import annotations

import os
import time

from celery import shared_task

from evalproject.env import env_int
from metrics.services import scoring_run
from metrics.services.agreement import agreement_job_run

# Test hook: seconds to sleep after each chunk, so a test can kill a worker in the middle of a scoring.
DELAY_ENV = "EVALPROJECT_TEST_SCORING_DELAY"


@shared_task(name="metrics.score_run")
def score_run(job_id: int) -> str:
    delay = float(os.environ.get(DELAY_ENV) or 0)
    return scoring_run(
        job_id=job_id,
        chunk_documents=env_int("SCORING_CHUNK_DOCUMENTS", 500, minimum=1),
        after_chunk=(lambda: time.sleep(delay)) if delay > 0 else None,
    )


@shared_task(name="metrics.agreement_run")
def agreement_run_task(job_id: int) -> str:
    return agreement_job_run(job_id=job_id)
