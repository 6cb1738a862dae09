"""Celery tasks of the metrics app: thin, they fetch by id and call a service (annotations.tasks.run_job_task).

The tasks of a scoring fanned out over the workers (`metrics.services.chunked_scoring`) run inside the
scoring job's claim (`resume_token`, the claim token the scoring task passed on) and retry a database
error like every job's task; a chunk task is retried alone."""

from __future__ import annotations

import os
import time
from functools import partial

from celery import shared_task

from annotations.models import JobKind
from annotations.services.jobs import job_kind_register
from annotations.tasks import run_job_task
from evalproject.env import env_int
from metrics.services.agreement import agreement_job_run
from metrics.services.chunked_scoring import (
    scoring_chunk_rows_write,
    scoring_chunk_score,
    scoring_chunks_merge,
    scoring_job_resume,
    scoring_rows_dispatch,
    scoring_run,
)
from metrics.services.scoring import scoring_job_failed, scoring_job_retry_check

# Test hook: seconds a chunk task sleeps first, so a test can kill a worker in the middle of a scoring.
DELAY_ENV = "EVALPROJECT_TEST_SCORING_DELAY"


# ignore_result: the job row holds the outcome (see annotations.tasks.import_job_run_task).
@shared_task(bind=True, name="metrics.score_run", max_retries=None, ignore_result=True)
def score_run(self, job_id: int, resume_token: str | None = None) -> str:
    service = partial(scoring_run, chunk_documents=env_int("SCORING_CHUNK_DOCUMENTS", 500, minimum=1))
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


# Test hook: a file each chunk task appends its chunk's index to once it scored and stored the chunk,
# so a test with several worker processes can count how often each chunk was scored.
CHUNK_LOG_ENV = "EVALPROJECT_TEST_CHUNK_LOG"


@shared_task(bind=True, name="metrics.score_chunk", max_retries=None)
def score_chunk(self, index: int, allowed_types: list[str] | None, *, job_id: int, resume_token: str) -> int:
    delay = float(os.environ.get(DELAY_ENV) or 0)
    if delay > 0:  # test hook: a chunk task under way, nothing stored yet, for a worker to die in
        time.sleep(delay)
    log = os.environ.get(CHUNK_LOG_ENV)
    service = partial(
        scoring_chunk_score,
        index=index,
        allowed_types=allowed_types,
        after_store=(lambda: _append(log, f"{index}\n")) if log else None,
    )
    return run_job_task(self, service, job_id=job_id, resume_token=resume_token)


def _append(path: str, line: str) -> None:
    with open(path, "a", encoding="utf-8") as file:
        file.write(line)


# `chunk_results`: the chord's, unused (the services read the chunks' rows); empty when sent alone.
@shared_task(bind=True, name="metrics.write_rows", max_retries=None, ignore_result=True)
def write_rows(self, chunk_results: list[int] | None = None, *, job_id: int, resume_token: str) -> str:
    return run_job_task(self, scoring_rows_dispatch, job_id=job_id, resume_token=resume_token)


@shared_task(bind=True, name="metrics.write_chunk_rows", max_retries=None)
def write_chunk_rows(self, index: int, *, job_id: int, resume_token: str) -> int:
    service = partial(scoring_chunk_rows_write, index=index)
    return run_job_task(self, service, job_id=job_id, resume_token=resume_token)


# `chunk_results`: the chord's, unused (the merge reads the chunks' rows); empty when sent alone.
@shared_task(bind=True, name="metrics.merge_chunks", max_retries=None, ignore_result=True)
def merge_chunks(self, chunk_results: list[int] | None = None, *, job_id: int, resume_token: str) -> str:
    return run_job_task(self, scoring_chunks_merge, job_id=job_id, resume_token=resume_token)
