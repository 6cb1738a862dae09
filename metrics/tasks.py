"""Celery tasks of the metrics app: thin, they fetch by id and call a service (annotations.tasks.run_job_task)."""

from __future__ import annotations

import os
import time

from celery import shared_task

from annotations.models import JobKind
from annotations.services.jobs import job_kind_register
from annotations.tasks import run_job_task
from evalproject.env import env_int
from metrics.services.agreement import agreement_job_run
from metrics.services.chunked_scoring import scoring_dispatch, scoring_job_resume, scoring_on_workers
from metrics.services.scoring import scoring_job_failed, scoring_job_retry_check, scoring_run

# Test hook: seconds to sleep after each chunk, so a test can kill a worker in the middle of a scoring.
DELAY_ENV = "EVALPROJECT_TEST_SCORING_DELAY"


# ignore_result: the job row holds the outcome (see annotations.tasks.import_job_run_task).
@shared_task(bind=True, name="metrics.score_run", max_retries=None, ignore_result=True)
def score_run(self, job_id: int, resume_token: str | None = None) -> str:
    delay = float(os.environ.get(DELAY_ENV) or 0)

    def service(*, job_id: int, resume_token: str | None) -> str:
        return scoring_run(
            job_id=job_id,
            resume_token=resume_token,
            chunk_documents=env_int("SCORING_CHUNK_DOCUMENTS", 500, minimum=1),
            after_chunk=(lambda: time.sleep(delay)) if delay > 0 else None,
            fan_out=scoring_dispatch if scoring_on_workers() else None,
        )

    return run_job_task(self, service, job_id=job_id, resume_token=resume_token)


job_kind_register(
    JobKind.SCORING,
    task=score_run,
    on_failed=scoring_job_failed,
    on_retry=scoring_job_retry_check,
    on_silent=scoring_job_resume,
)


@shared_task(bind=True, name="metrics.agreement_run", max_retries=None, ignore_result=True)
def agreement_run_task(self, job_id: int, resume_token: str | None = None) -> str:
    return run_job_task(self, agreement_job_run, job_id=job_id, resume_token=resume_token)


job_kind_register(JobKind.AGREEMENT, task=agreement_run_task)
