"""Celery tasks of a scoring fanned out over the workers (see metrics.services.chunked_scoring):
thin, they call one service each, and a chunk task is retried alone on a transient database error."""

from __future__ import annotations

import os
import time

from celery import shared_task
from django.db import InterfaceError, OperationalError

from metrics.services.chunked_scoring import scoring_chunk_score, scoring_chunks_merge
from metrics.tasks import DELAY_ENV


@shared_task(
    name="metrics.score_chunk",
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def score_chunk(
    job_id: int, index: int, first_position: int, document_ids: list[str], allowed_types: list[str] | None
) -> int:
    documents = scoring_chunk_score(
        job_id=job_id,
        index=index,
        first_position=first_position,
        document_ids=document_ids,
        allowed_types=allowed_types,
    )
    delay = float(os.environ.get(DELAY_ENV) or 0)
    if delay > 0:  # test hook: a chunk stored but not yet acknowledged, for a worker to die in
        time.sleep(delay)
    return documents


@shared_task(name="metrics.merge_chunks")
def merge_chunks(chunk_results: list[int], *, job_id: int, chunks: int) -> str:
    return scoring_chunks_merge(job_id=job_id, chunks=chunks)
