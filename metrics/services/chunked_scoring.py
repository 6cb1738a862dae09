"""Scoring a run over every running Celery worker: a chord of chunk tasks, merged by one final task.

The job's life is that of every job (`annotations.services.jobs`): the scoring task claims it
(`metrics.services.scoring.scoring_run`), then `scoring_dispatch` cuts the run's documents into
chunks and queues one task per chunk (`metrics.score_chunk`) and a final task (`metrics.merge_chunks`),
each given the job's claim token. Each chunk task beats the job's heartbeat while it runs, reads its
own documents from the database by id, scores them with the same functions as the in-process path
(`span_chunk_score`, `attribute_chunk_score`) and stores its partial result in a `ScoringChunk` row,
keyed by (job, chunk), under that claim: a lost chunk task is delivered again (acks late) and rewrites
only its own row. The final task merges the rows in chunk order with the in-process path's merge and
stores the scoring once, finishing the job through `job_finish` with the claim token, so the stored
result is the one a single process gives. Progress counts the documents of stored chunks.

A task of a claim that is no longer the job's (the dispatcher reclaimed a silent job, and a new claim
fans out again) writes nothing; the new claim deletes the earlier claim's rows before it fans out, so
no chunk counts twice. A database error is retried like any job's (`annotations.tasks.run_job_task`),
resuming the same claim.

Chosen with the setting SCORING_EXECUTOR=celery; the default (`process`) scores every chunk in the
worker that claimed the job.
"""

from __future__ import annotations

import logging
import pickle

from celery import signature
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from annotations.importers.errors import InputValidationError
from annotations.models import GoldVersion, Job, JobState
from annotations.services.job_problems import internal_error
from annotations.services.jobs import TRANSIENT_DATABASE_ERRORS, job_heartbeat
from experiments.models import ExperimentRun, RunKind
from metrics.models import ScoringChunk
from metrics.pipeline.executors import CeleryChord
from metrics.services.attribute_scoring import (
    attribute_chunk_plan,
    attribute_chunk_score,
    attribute_scoring_plan,
    attribute_scoring_result,
)
from metrics.services.results import ScoringResult
from metrics.services.scoring import scoring_fail, scoring_stage_document_ids, scoring_store
from metrics.services.span_scoring import span_chunk_score, span_scoring_plan, span_scoring_result

logger = logging.getLogger("metrics.scoring")


def scoring_on_workers() -> bool:
    """True when scoring jobs fan out over the Celery workers (settings.SCORING_EXECUTOR)."""
    return settings.SCORING_EXECUTOR == "celery"


def scoring_dispatch(
    *,
    job: Job,
    run: ExperimentRun,
    gold_version: GoldVersion,
    document_ids: set[str] | None,
    chunk_documents: int,
) -> None:
    """Queue the chord that scores the claimed `job`: a task per chunk, then the merge, all under the
    job's current claim. The rows of any earlier claim go first: they must not count twice."""
    ScoringChunk.objects.filter(job_id=job.pk).delete()
    if run.kind == RunKind.SPANS:
        plan = span_scoring_plan(run=run, gold_version=gold_version, document_ids=document_ids)
        allowed = None if plan.allowed_types is None else sorted(plan.allowed_types)
    else:
        plan = attribute_scoring_plan(run=run, gold_version=gold_version, document_ids=document_ids)
        allowed = None
    ids = plan.document_ids
    Job.objects.filter(pk=job.pk, state=JobState.RUNNING, claim_token=job.claim_token).update(
        progress_done=0, progress_total=len(ids)
    )
    claim = {"job_id": job.pk, "resume_token": job.claim_token}
    starts = range(0, len(ids), chunk_documents) if ids else [0]
    chunks = [
        signature(
            "metrics.score_chunk",
            args=(index, start, ids[start : start + chunk_documents], allowed),
            kwargs=claim,
        )
        for index, start in enumerate(starts)
    ]
    # Sent last: nothing after it can fail and make the scoring task send the chord a second time.
    try:
        CeleryChord().dispatch(chunks, signature("metrics.merge_chunks", kwargs=claim))
    except BrokerError as error:
        # The job stays running and falls silent: the dispatcher reclaims it once the broker is back.
        logger.warning(
            "scoring job %s: could not send its chunks (%r); it will be claimed again", job.pk, error
        )


def scoring_chunk_score(
    *,
    job_id: int,
    claim_token: str,
    index: int,
    first_position: int,
    document_ids: list[str],
    allowed_types: list[str] | None,
) -> int:
    """Score one chunk of the job claimed by `claim_token` and store its partial result; return its
    document count (0 when the claim is not the job's any more). Bad input fails the job (its other
    chunks then stop at their first check)."""
    job = _claimed(job_id, claim_token)
    if job is None:
        return 0
    with job_heartbeat(job):
        run = ExperimentRun.objects.select_related("project").get(pk=job.params["run_id"])
        gold_version = GoldVersion.objects.get(pk=job.params["gold_version_id"])
        try:
            if run.kind == RunKind.SPANS:
                partial = span_chunk_score(
                    run=run,
                    gold_version=gold_version,
                    document_ids=document_ids,
                    first_position=first_position,
                    allowed_types=None if allowed_types is None else frozenset(allowed_types),
                )
            else:
                plan = attribute_chunk_plan(run=run, document_ids=document_ids)
                partial = attribute_chunk_score(
                    run=run, gold_version=gold_version, plan=plan, document_ids=document_ids
                )
        except (InputValidationError, ValueError) as error:
            scoring_fail(
                job=job, errors=error.problems if isinstance(error, InputValidationError) else [str(error)]
            )
            return 0
        except TRANSIENT_DATABASE_ERRORS:
            raise
        except Exception:
            scoring_fail(job=job, errors=[internal_error(job_id, log=logger)])
            return 0
        return _chunk_store(job, index=index, documents=len(document_ids), partial=partial)


@transaction.atomic
def _chunk_store(job: Job, *, index: int, documents: int, partial: object) -> int:
    # The job row locked: the claim cannot change between the check and the write.
    if _claimed(job.pk, job.claim_token, lock=True) is None:
        return 0
    _, created = ScoringChunk.objects.update_or_create(
        job_id=job.pk,
        index=index,
        defaults={
            "claim_token": job.claim_token,
            "documents": documents,
            "partial": pickle.dumps(partial, protocol=5),
        },
    )
    if created:
        Job.objects.filter(pk=job.pk).update(
            progress_done=F("progress_done") + documents, heartbeat_at=timezone.now()
        )
    return documents


def scoring_chunks_merge(*, job_id: int, claim_token: str, chunks: int) -> str:
    """Merge the stored partial results of the job's `chunks` chunks and store its scoring, finishing
    the job under `claim_token` (exactly once); return the job's state."""
    job = _claimed(job_id, claim_token)
    if job is None:
        return Job.objects.filter(pk=job_id).values_list("state", flat=True).first() or "missing"
    with job_heartbeat(job):
        stored = ScoringChunk.objects.filter(job_id=job_id, claim_token=claim_token).order_by("index")
        if stored.count() != chunks:
            missing = chunks - stored.count()
            scoring_fail(job=job, errors=[f"{missing} of {chunks} chunk(s) of the scoring were not scored"])
            return JobState.FAILED
        run = ExperimentRun.objects.select_related("project").get(pk=job.params["run_id"])
        gold_version = GoldVersion.objects.get(pk=job.params["gold_version_id"])
        partials = (pickle.loads(partial) for partial in stored.values_list("partial", flat=True).iterator())
        try:
            result = _merged(run=run, gold_version=gold_version, partials=partials)
        except (InputValidationError, ValueError) as error:
            scoring_fail(
                job=job, errors=error.problems if isinstance(error, InputValidationError) else [str(error)]
            )
            return JobState.FAILED
        except TRANSIENT_DATABASE_ERRORS:
            raise
        except Exception:
            scoring_fail(job=job, errors=[internal_error(job_id, log=logger)])
            return JobState.FAILED
        with transaction.atomic():
            state = scoring_store(job=job, run=run, gold_version=gold_version, result=result)
            if state == JobState.SUCCEEDED:
                ScoringChunk.objects.filter(job_id=job_id).delete()
        return state


def _merged(*, run: ExperimentRun, gold_version: GoldVersion, partials) -> ScoringResult:
    document_ids = scoring_stage_document_ids(run)
    if run.kind == RunKind.SPANS:
        plan = span_scoring_plan(run=run, gold_version=gold_version, document_ids=document_ids)
        return span_scoring_result(run=run, gold_version=gold_version, plan=plan, partials=partials)
    plan = attribute_scoring_plan(run=run, gold_version=gold_version, document_ids=document_ids)
    return attribute_scoring_result(run=run, gold_version=gold_version, plan=plan, partials=partials)


def _claimed(job_id: int, claim_token: str, *, lock: bool = False) -> Job | None:
    """The job while `claim_token` is its current claim (running); else None: the job ended, or the
    dispatcher gave this claim up for dead and the job went on without it."""
    jobs = Job.objects.select_for_update() if lock else Job.objects
    return jobs.filter(pk=job_id, state=JobState.RUNNING, claim_token=claim_token).first()
