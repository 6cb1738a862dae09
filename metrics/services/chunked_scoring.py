"""Scoring a run over every running Celery worker: a chord of chunk tasks, merged by one final task.

`scoring_dispatch` (called by the scoring job once it has claimed the job) cuts the run's documents
into chunks and queues one task per chunk (`metrics.score_chunk`) and a final task
(`metrics.merge_chunks`). Each chunk task reads its own documents from the database by id, scores
them with the same functions as the in-process path (`span_chunk_score`, `attribute_chunk_score`)
and stores its partial result in a `ScoringChunk` row, keyed by (job, chunk): a lost chunk task is
delivered again (acks late) and rewrites only its own row. The final task merges the rows in chunk
order with the in-process path's merge and stores the scoring once (`scoring_store`), so the stored
result is the one a single process gives. Progress counts the documents of finished chunks.

Chosen with the setting SCORING_EXECUTOR=celery; the default (`process`) scores every chunk in the
worker that claimed the job.
"""

from __future__ import annotations

import logging
import pickle
import traceback

from celery import signature
from django.conf import settings
from django.db import transaction
from django.db.models import F

from annotations.importers.errors import InputValidationError
from annotations.models import Document, GoldVersion, Job, JobState
from experiments.models import ExperimentRun, RunKind, RunStage
from experiments.splits import split_document_ids_in_stage
from metrics.models import ScoringChunk
from metrics.pipeline.executors import CeleryChord
from metrics.services.attribute_scoring import (
    attribute_chunk_plan,
    attribute_chunk_score,
    attribute_scoring_plan,
    attribute_scoring_result,
)
from metrics.services.scoring import scoring_fail, scoring_store
from metrics.services.span_scoring import span_chunk_score, span_scoring_plan, span_scoring_result

logger = logging.getLogger("metrics.scoring")


def scoring_on_workers() -> bool:
    """True when scoring jobs fan out over the Celery workers (settings.SCORING_EXECUTOR)."""
    return settings.SCORING_EXECUTOR == "celery"


def scoring_dispatch(
    *,
    job_id: int,
    run: ExperimentRun,
    gold_version: GoldVersion,
    document_ids: set[str] | None,
    chunk_documents: int,
) -> None:
    """Queue the chord that scores the claimed job `job_id`: a task per chunk, then the merge."""
    ScoringChunk.objects.filter(job_id=job_id).delete()
    if run.kind == RunKind.SPANS:
        plan = span_scoring_plan(run=run, gold_version=gold_version, document_ids=document_ids)
        allowed = None if plan.allowed_types is None else sorted(plan.allowed_types)
    else:
        plan = attribute_scoring_plan(run=run, gold_version=gold_version, document_ids=document_ids)
        allowed = None
    ids = plan.document_ids
    Job.objects.filter(pk=job_id, state=JobState.RUNNING).update(progress_done=0, progress_total=len(ids))
    starts = range(0, len(ids), chunk_documents) if ids else [0]
    chunks = [
        signature(
            "metrics.score_chunk", args=(job_id, index, start, ids[start : start + chunk_documents], allowed)
        )
        for index, start in enumerate(starts)
    ]
    merge = signature("metrics.merge_chunks", kwargs={"job_id": job_id, "chunks": len(chunks)})
    CeleryChord().dispatch(chunks, merge)


def scoring_chunk_score(
    *, job_id: int, index: int, first_position: int, document_ids: list[str], allowed_types: list[str] | None
) -> int:
    """Score one chunk of a running job and store its partial result; return its document count.
    Bad input fails the job (its other chunks then stop at their first check)."""
    job = Job.objects.get(pk=job_id)
    if job.state != JobState.RUNNING:
        return 0  # the job failed, or another delivery finished it
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
        problems = error.problems if isinstance(error, InputValidationError) else [str(error)]
        _fail(job_id, run, [str(problem) for problem in problems])
        return 0
    with transaction.atomic():
        _, created = ScoringChunk.objects.update_or_create(
            job_id=job_id,
            index=index,
            defaults={"documents": len(document_ids), "partial": pickle.dumps(partial, protocol=5)},
        )
        if created:
            Job.objects.filter(pk=job_id, state=JobState.RUNNING).update(
                progress_done=F("progress_done") + len(document_ids)
            )
    return len(document_ids)


def scoring_chunks_merge(*, job_id: int, chunks: int) -> str:
    """Merge the stored partial results of a job's chunks and store its scoring (exactly once)."""
    job = Job.objects.get(pk=job_id)
    if job.state != JobState.RUNNING:
        return job.state
    run = ExperimentRun.objects.select_related("project").get(pk=job.params["run_id"])
    gold_version = GoldVersion.objects.get(pk=job.params["gold_version_id"])
    stored = ScoringChunk.objects.filter(job_id=job_id).order_by("index")
    if stored.count() != chunks:
        _fail(job_id, run, [f"{chunks - stored.count()} of {chunks} chunk(s) of the scoring were not scored"])
        return JobState.FAILED
    partials = (pickle.loads(partial) for partial in stored.values_list("partial", flat=True).iterator())
    try:
        document_ids = _stage_document_ids(run)
        if run.kind == RunKind.SPANS:
            plan = span_scoring_plan(run=run, gold_version=gold_version, document_ids=document_ids)
            result = span_scoring_result(run=run, gold_version=gold_version, plan=plan, partials=partials)
        else:
            plan = attribute_scoring_plan(run=run, gold_version=gold_version, document_ids=document_ids)
            result = attribute_scoring_result(
                run=run, gold_version=gold_version, plan=plan, partials=partials
            )
        state = scoring_store(job_id=job_id, run=run, gold_version=gold_version, result=result)
    except Exception:
        logger.exception("merging the chunks of scoring job %s failed", job_id)
        _fail(job_id, run, [traceback.format_exc(limit=5)])
        return JobState.FAILED
    ScoringChunk.objects.filter(job_id=job_id).delete()
    return state


def _stage_document_ids(run: ExperimentRun) -> set[str] | None:
    if run.stage == RunStage.ALL:
        return None
    pks = split_document_ids_in_stage(project=run.project, stage=run.stage)
    return set(Document.objects.filter(pk__in=pks).values_list("external_id", flat=True))


def _fail(job_id: int, run: ExperimentRun, errors: list[str]) -> None:
    scoring_fail(job_id=job_id, run=run, errors=errors)
