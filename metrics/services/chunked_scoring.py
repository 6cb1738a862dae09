"""Scoring a run as a chord of chunk tasks merged by one final task, one service here per task of
`metrics.tasks` (docs/operations.md, "Scoring over every worker", tells a job's life and recovery).
Rows are written per chunk, side by side: writing them is most of what storing a scoring costs.
"""

from __future__ import annotations

import logging
import pickle
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from celery import Signature, signature
from django.db import transaction
from django.db.models import F, QuerySet, Sum
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from annotations.models import GoldVersion, Job, JobKind, JobState
from annotations.services.jobs import job_heartbeat, job_running
from experiments.models import ExperimentRun
from experiments.splits import split_check_can_score
from metrics.models import MetricValue, Scoring, ScoringChunk
from metrics.pipeline.executors import CeleryChord
from metrics.services.results import ScoringResult
from metrics.services.scoring import (
    DEFAULT_CHUNK_DOCUMENTS,
    ScoringPlan,
    job_claimed,
    job_or_fail,
    job_state,
    scoring_chunk_plan,
    scoring_job_inputs,
    scoring_metrics_store,
    scoring_plan,
    scoring_prepare,
    scoring_store,
)
from metrics.services.writes import (
    chunk_rows_encode,
    chunk_rows_write,
    row_ids_reserve,
    row_keys,
    rows_encoded_here,
)

logger = logging.getLogger("metrics.scoring")


@contextmanager
def _phase(job_id: int, phase: str) -> Iterator[None]:
    """Log how long a step of a fanned-out scoring took: what does not spread over the workers is
    found from these lines (bench/server/README.md)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        logger.info("scoring job %s: %s took %.3f s", job_id, phase, time.perf_counter() - start)


def scoring_run(
    *, job_id: int, resume_token: str | None = None, chunk_documents: int = DEFAULT_CHUNK_DOCUMENTS
) -> str:
    """Claim a scoring job and fan its chunks out; return the job's state (its end when the chord ran
    in this process). A database error propagates as JobInterrupted, for the task to retry."""
    with job_running(job_id=job_id, kind=JobKind.SCORING, resume_token=resume_token) as job:
        if job is None:
            return job_state(job_id)
        state = job_or_fail(job, lambda: scoring_dispatch(job=job, chunk_documents=chunk_documents))
        return state or JobState.FAILED


def scoring_dispatch(*, job: Job, chunk_documents: int) -> str:
    """Write the pending chunks of the claimed `job` and queue the chord that scores them: a task per
    chunk, then the merge, all under the job's current claim; return the job's state. The rows of any
    earlier claim go first: they must not count twice."""
    run, gold_version = scoring_job_inputs(job)
    split_check_can_score(run=run)
    with _phase(job.pk, "planning the chunks"):
        plan = scoring_plan(run=run, gold_version=gold_version)
    ids = plan.document_ids
    starts = range(0, len(ids), chunk_documents) if ids else [0]
    with _phase(job.pk, f"writing {len(starts)} pending chunks"), transaction.atomic():
        if job_claimed(job.pk, job.claim_token, lock=True) is None:
            return job_state(job.pk)
        ScoringChunk.objects.filter(job_id=job.pk).delete()
        Scoring.objects.filter(job_id=job.pk, is_complete=False).delete()
        ScoringChunk.objects.bulk_create(
            (
                ScoringChunk(
                    job_id=job.pk,
                    claim_token=job.claim_token,
                    index=index,
                    first_position=start,
                    document_ids=ids[start : start + chunk_documents],
                    documents=len(ids[start : start + chunk_documents]),
                    partial=None,
                )
                for index, start in enumerate(starts)
            ),
            batch_size=1000,
        )
        Job.objects.filter(pk=job.pk).update(
            progress_done=0, progress_total=len(ids), chunks_done=0, chunks_total=len(starts)
        )
    # Sent after the commit: a chunk task reads its row. Should this worker die before sending, the
    # job falls silent with every chunk pending, and the dispatcher sends them (scoring_job_resume).
    with _phase(job.pk, "sending the chunks"):
        _chunks_send(job, chunk_argument=plan.chunk_argument, indexes=range(len(starts)))
    return job_state(job.pk)  # running; finished already when the chord ran in this process


def scoring_job_resume(job: Job) -> bool:
    """The dispatcher found the running scoring `job` silent: when its claim fanned out, send the tasks
    of its pending chunks again (and a final merge) once the dispatcher's transaction commits, and
    return True; False when it did not fan out (the job is then queued again)."""
    chunks = ScoringChunk.objects.filter(job_id=job.pk, claim_token=job.claim_token)
    if not chunks.exists():
        return False
    pending = list(chunks.filter(partial__isnull=True).order_by("index").values_list("index", flat=True))

    def send() -> None:
        run, gold_version = scoring_job_inputs(job)
        plan = scoring_plan(run=run, gold_version=gold_version)
        _chunks_send(job, chunk_argument=plan.chunk_argument, indexes=pending)

    transaction.on_commit(send)
    return True


def _chunks_send(job: Job, *, chunk_argument: list | None, indexes: Iterable[int]) -> None:
    claim = {"job_id": job.pk, "resume_token": job.claim_token}
    chunks = [
        signature("metrics.score_chunk", args=(index, chunk_argument), kwargs=claim) for index in indexes
    ]
    _chord_send(job.pk, chunks, signature("metrics.write_rows", kwargs=claim), "chunks")


def _chord_send(job_id: int, tasks: list, then: Signature, what: str) -> bool:
    """Send `tasks` then `then` (at once when there are none); False when the broker did not take
    them: the job stays running and falls silent, and the dispatcher sends them again once it is back."""
    try:
        if tasks:
            CeleryChord().dispatch(tasks, then)
        else:
            then.delay([])
    except BrokerError as error:
        logger.warning(
            "scoring job %s: could not send its %s (%r); they will be sent again", job_id, what, error
        )
        return False
    return True


def scoring_chunk_score(
    *,
    job_id: int,
    resume_token: str,
    index: int,
    allowed_types: list[str] | None,
    after_store: Callable[[], None] | None = None,
) -> int:
    """Score chunk `index` under the claim `resume_token` and store its partial result, once; return its
    document count (0 when the claim or the chunk is not current). Bad input fails the job (its other
    chunks then stop at their first check). `after_store`: called once this call stored the chunk."""
    job = job_claimed(job_id, resume_token)
    if job is None:
        return 0
    rows = ScoringChunk.objects.filter(job_id=job_id, claim_token=resume_token, index=index)
    chunk = rows.filter(partial__isnull=True).values("first_position", "document_ids", "documents").first()
    if chunk is None:  # stored already (a task delivered twice), or not this claim's chunk
        return rows.values_list("documents", flat=True).first() or 0
    with job_heartbeat(job), _phase(job_id, f"chunk {index}"):
        run, gold_version = scoring_job_inputs(job)
        document_ids = chunk["document_ids"]
        plan = scoring_chunk_plan(run=run, document_ids=document_ids, chunk_argument=allowed_types)
        partial = job_or_fail(
            job,
            lambda: plan.chunk_score(
                run=run,
                gold_version=gold_version,
                document_ids=document_ids,
                first_position=chunk["first_position"],
            ),
        )
        if partial is None:
            return 0
        rows = _rows_encoded(run, plan, partial, document_ids)
        if (
            _chunk_store(job, index=index, documents=chunk["documents"], partial=partial, rows=rows)
            and after_store
        ):
            after_store()
        return chunk["documents"]


@transaction.atomic
def _chunk_store(job: Job, *, index: int, documents: int, partial: object, rows: bytes | None) -> bool:
    """Store the chunk's partial result unless stored already; True when this call stored it."""
    # The job row locked: the claim cannot change between the check and the write.
    if job_claimed(job.pk, job.claim_token, lock=True) is None:
        return False
    stored = ScoringChunk.objects.filter(
        job_id=job.pk, claim_token=job.claim_token, index=index, partial__isnull=True
    ).update(
        partial=pickle.dumps(partial, protocol=5),
        rows=rows,
        row_count=0 if not rows else rows.count(b"\n") + 1,
    )
    if stored:
        Job.objects.filter(pk=job.pk).update(
            progress_done=F("progress_done") + documents,
            chunks_done=F("chunks_done") + 1,
            heartbeat_at=timezone.now(),
        )
    return bool(stored)


def _rows_encoded(
    run: ExperimentRun, plan: ScoringPlan, partial: Any, document_ids: list[str]
) -> bytes | None:
    """The chunk's comparison rows as COPY text (PostgreSQL only)."""
    if not rows_encoded_here():
        return None
    document_pks, attribute_pks = row_keys(run.project_id, document_ids)
    rows = plan.stored_rows(partial)
    return chunk_rows_encode(rows, document_pks=document_pks, attribute_pks=attribute_pks)


def scoring_chunks_merge(*, job_id: int, resume_token: str) -> str:
    """Merge the stored partial results of the job's chunks and store its scoring, finishing the job
    under `resume_token` (exactly once); return the job's state. While a chunk is pending (its task was
    lost, and the dispatcher sends it again with another merge) the job stays running."""
    job = job_claimed(job_id, resume_token)
    if job is None:
        return job_state(job_id)
    chunks = _scored_chunks(job)
    if chunks is None or chunks.filter(rows__isnull=False, written=False).exists():
        return JobState.RUNNING
    with job_heartbeat(job):
        run, gold_version = scoring_job_inputs(job)
        # Rows the chunks wrote into the prepared scoring; None: they encoded none (the result holds them).
        rows = (
            chunks.aggregate(rows=Sum("row_count"))["rows"] if chunks.filter(written=True).exists() else None
        )
        result = None
        if not MetricValue.objects.filter(scoring__job_id=job_id, scoring__is_complete=False).exists():
            result = _merged(job, run=run, gold_version=gold_version, chunks=chunks, with_rows=rows is None)
            if result is None:
                return JobState.FAILED
        with _phase(job_id, "the final transaction"):
            return scoring_store(job=job, gold_version=gold_version, result=result, rows=rows)


def _scored_chunks(job: Job) -> QuerySet[ScoringChunk] | None:
    """The chunks of `job`'s claim once every one of them is scored; None while one is pending."""
    chunks = ScoringChunk.objects.filter(job_id=job.pk, claim_token=job.claim_token)
    if not chunks.exists() or chunks.filter(partial__isnull=True).exists():
        return None
    return chunks


def _metrics_ahead(job: Job, chunks: QuerySet[ScoringChunk]) -> None:
    """While the other workers write the rows, merge the chunks here and store the metrics in the
    hidden scoring: the merge waits for no row, and the final task is left only to complete it. When
    this task is lost, or slower than the writes, the final task merges itself."""
    if job_claimed(job.pk, job.claim_token) is None:
        return
    run, gold_version = scoring_job_inputs(job)
    with job_heartbeat(job):
        result = _merged(job, run=run, gold_version=gold_version, chunks=chunks, with_rows=False)
        if result is None:
            return
        with _phase(job.pk, "storing the metrics"):
            scoring_metrics_store(job=job, result=result)


def scoring_rows_dispatch(*, job_id: int, resume_token: str) -> str:
    """Once every chunk is scored: when the chunks encoded comparison rows, prepare the job's scoring
    (not complete, so no reader sees it) and queue a task per chunk that writes its rows into it, then
    the merge; else queue the merge. Return the job's state."""
    job = job_claimed(job_id, resume_token)
    if job is None:
        return job_state(job_id)
    chunks = _scored_chunks(job)
    if chunks is None:
        return JobState.RUNNING  # a chunk was lost: the dispatcher sends it again, then this again
    unwritten = list(
        chunks.filter(rows__isnull=False, written=False).order_by("index").values_list("index", flat=True)
    )
    with _phase(job_id, "preparing the scoring for the rows"):
        if unwritten and _prepare(job, chunks) is None:
            return JobState.RUNNING  # the claim went meanwhile
    claim = {"job_id": job_id, "resume_token": resume_token}
    merge = signature("metrics.merge_chunks", kwargs=claim)
    writes = [signature("metrics.write_chunk_rows", args=(index,), kwargs=claim) for index in unwritten]
    if _chord_send(job_id, writes, merge, "writes") and writes:
        _metrics_ahead(job, chunks)
    return JobState.RUNNING


@transaction.atomic
def _prepare(job: Job, chunks: QuerySet[ScoringChunk]) -> Scoring | None:
    """The job's hidden scoring, made once, with the block of row ids its chunks write with."""
    scoring, made = scoring_prepare(job=job)
    if made:
        counts = list(chunks.order_by("index").values_list("pk", "row_count"))
        row_id = row_ids_reserve(sum(count for _, count in counts))
        assigned = []
        for pk, count in counts:
            assigned.append(ScoringChunk(pk=pk, first_row_id=row_id))
            row_id += count
        ScoringChunk.objects.bulk_update(assigned, ["first_row_id"], batch_size=1000)
    return scoring


def scoring_chunk_rows_write(*, job_id: int, resume_token: str, index: int) -> int:
    """Write the comparison rows chunk `index` encoded into the job's prepared scoring, at their
    positions in the whole scoring, once; return how many this call wrote. The chunk's row is locked,
    not the job's: the chunks of one job write side by side."""
    job = job_claimed(job_id, resume_token)
    if job is None:
        return 0
    with job_heartbeat(job), _phase(job_id, f"rows of chunk {index}"), transaction.atomic():
        chunks = ScoringChunk.objects.filter(job_id=job_id, claim_token=resume_token)
        chunk = chunks.select_for_update().filter(index=index, written=False, rows__isnull=False).first()
        scoring = Scoring.objects.filter(job_id=job_id, is_complete=False).only("pk", "run_id").first()
        if chunk is None or scoring is None:
            return 0
        before = chunks.filter(index__lt=index).aggregate(rows=Sum("row_count"))["rows"] or 0
        written = chunk_rows_write(
            scoring=scoring, rows=bytes(chunk.rows), first_position=before, first_id=chunk.first_row_id
        )
        ScoringChunk.objects.filter(pk=chunk.pk).update(written=True, rows=None)
        return written


def _merged(
    job: Job,
    *,
    run: ExperimentRun,
    gold_version: GoldVersion,
    chunks: QuerySet[ScoringChunk],
    with_rows: bool,
) -> ScoringResult | None:
    """The scoring of the whole run from the chunks' partial results, read in chunk order; None once
    its error failed the job (`job_or_fail`)."""
    stored = chunks.order_by("index").values_list("partial", flat=True)
    partials = (pickle.loads(partial) for partial in stored.iterator())

    def merge() -> ScoringResult:
        with _phase(job.pk, "the merge, metrics and intervals"):
            plan = scoring_plan(run=run, gold_version=gold_version)
            return plan.result(run=run, gold_version=gold_version, partials=partials, with_rows=with_rows)

    return job_or_fail(job, merge)
