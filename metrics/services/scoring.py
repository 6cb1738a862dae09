"""Scoring jobs: requested by finalize or rescore, scored as a chord of chunk tasks
(`metrics.services.chunked_scoring`), stored exactly once under the job's claim (docs/operations.md):
one scoring per job (a unique constraint), hidden until the final transaction (`scoring_store`)
completes it, so a retried job never leaves two, and readers see all of it or nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotations.importers.errors import InputValidationError
from annotations.models import Document, GoldVersion, Job, JobKind, JobState
from annotations.selectors import gold_version_current
from annotations.services.job_problems import internal_error
from annotations.services.jobs import (
    TRANSIENT_DATABASE_ERRORS,
    JobNotRetryable,
    job_enqueue,
    job_finish,
)
from experiments.models import ExperimentRun, RunDocument, RunKind, RunStage, RunStatus
from experiments.splits import (
    SplitRuleViolation,
    split_check_can_score,
    split_document_ids_in_stage,
    split_on_run_scored,
)
from metrics.models import Scoring, ScoringChunk
from metrics.services.attribute_scoring import AttributeScoringPlan, attribute_chunk_plan
from metrics.services.engine_inputs import gold_document_ids, run_totals
from metrics.services.errors import ScoringNotAllowed
from metrics.services.results import ScoringResult
from metrics.services.span_scoring import SpanScoringPlan, span_scoring_plan
from metrics.services.writes import comparison_rows_write, metric_values_write, row_keys

logger = logging.getLogger("metrics.scoring")
DEFAULT_CHUNK_DOCUMENTS = 500
Computed = TypeVar("Computed")


@transaction.atomic
def scoring_request(
    *, run: ExperimentRun, user: AbstractBaseUser | None, rescore: bool = False, allow_empty: bool = False
) -> Job:
    """Close the run (finalize) or ask for a new scoring (rescore) and queue the scoring job, its gold
    version fixed now in the job's parameters. Raises ScoringNotAllowed or SplitRuleViolation (409)."""
    run = ExperimentRun.objects.select_for_update().select_related("project").get(pk=run.pk)
    allowed = (RunStatus.SCORED, RunStatus.FAILED) if rescore else (RunStatus.OPEN,)
    if run.status not in allowed:
        action = "rescored" if rescore else "finalized"
        hint = " (finalize it first)" if rescore and run.status == RunStatus.OPEN else ""
        raise ScoringNotAllowed(
            f"Run {run.pk} is {run.status}: it cannot be {action}{hint}.",
            details={"run": run.pk, "status": run.status},
        )
    split_check_can_score(run=run)
    gold_version = gold_version_current(project=run.project, kind=run.kind)
    if gold_version is None:
        raise ScoringNotAllowed(
            f"Project {run.project.slug!r} has no {run.kind} gold yet: import gold, then finalize.",
            details={"run": run.pk, "kind": run.kind},
            code="no_gold",
        )
    if not rescore and not allow_empty and not RunDocument.objects.filter(run=run).exists():
        # An empty run scores recall 0 (and, for spans, 100% leakage): almost always a pipeline that
        # posted nowhere, not a result.
        raise ScoringNotAllowed(
            f"Run {run.pk} has no predictions: post them first, or finalize with allow_empty=true.",
            details={"run": run.pk},
            code="no_predictions",
        )
    job = Job.objects.create(
        kind=JobKind.SCORING,
        project=run.project,
        params={"run_id": run.pk, "gold_version_id": gold_version.pk, "rescore": rescore},
        created_by=user if user is not None and user.is_authenticated else None,
    )
    run.status = RunStatus.SCORING
    run.scoring_job = job
    if not rescore:
        run.finalized_at = timezone.now()
    run.save(update_fields=["status", "scoring_job", "finalized_at"])
    job_enqueue(job)
    return job


def job_state(job_id: int) -> str:
    return Job.objects.filter(pk=job_id).values_list("state", flat=True).first() or "missing"


def job_claimed(job_id: int, claim_token: str, *, lock: bool = False) -> Job | None:
    """The job while `claim_token` is its current claim (running); else None: the job ended, or the
    dispatcher gave this claim up for dead and the job went on without it."""
    jobs = Job.objects.select_for_update() if lock else Job.objects
    return jobs.filter(pk=job_id, state=JobState.RUNNING, claim_token=claim_token).first()


def scoring_job_inputs(job: Job) -> tuple[ExperimentRun, GoldVersion]:
    run = ExperimentRun.objects.select_related("project").get(pk=job.params["run_id"])
    return run, GoldVersion.objects.get(pk=job.params["gold_version_id"])


def scoring_stage_document_ids(run: ExperimentRun) -> set[str] | None:
    """The external ids of the documents a run scores (those of its stage); None for every document."""
    if run.stage == RunStage.ALL:
        return None
    pks = split_document_ids_in_stage(project=run.project, stage=run.stage)
    return set(Document.objects.filter(pk__in=pks).values_list("external_id", flat=True))


ScoringPlan = SpanScoringPlan | AttributeScoringPlan


def scoring_plan(*, run: ExperimentRun, gold_version: GoldVersion) -> ScoringPlan:
    """What every chunk of the run's scoring shares, on the documents of its stage."""
    document_ids = scoring_stage_document_ids(run)
    if run.kind == RunKind.SPANS:
        return span_scoring_plan(run=run, gold_version=gold_version, document_ids=document_ids)
    return attribute_chunk_plan(run=run, document_ids=gold_document_ids(gold_version, document_ids))


def scoring_chunk_plan(
    *, run: ExperimentRun, document_ids: list[str], chunk_argument: list | None
) -> ScoringPlan:
    """The plan a chunk task scores its `document_ids` with, given the whole plan's `chunk_argument`."""
    if run.kind == RunKind.SPANS:
        allowed = None if chunk_argument is None else frozenset(chunk_argument)
        return SpanScoringPlan(document_ids, restrict=allowed is not None, allowed_types=allowed)
    return attribute_chunk_plan(run=run, document_ids=document_ids)


def scoring_partials(plan: ScoringPlan, *, run: ExperimentRun, gold_version: GoldVersion) -> Iterator[Any]:
    """The partial results of the plan's chunks, scored in this process, in chunk order (a scoring
    compared again, `metrics.services.run_pair`)."""
    ids = plan.document_ids
    for start in range(0, len(ids), DEFAULT_CHUNK_DOCUMENTS):
        chunk = ids[start : start + DEFAULT_CHUNK_DOCUMENTS]
        yield plan.chunk_score(run=run, gold_version=gold_version, document_ids=chunk, first_position=start)


@transaction.atomic
def scoring_prepare(*, job: Job) -> tuple[Scoring | None, bool]:
    """The job's scoring, not complete (no reader sees it), for chunk tasks to write comparison rows
    into while the job runs, and whether this call made it (once per claim). None when `job`'s claim
    is not the job's any more."""
    if job_claimed(job.pk, job.claim_token, lock=True) is None:
        return None, False
    prepared = (
        Scoring.objects.defer("report", "document_ids").filter(job_id=job.pk, is_complete=False).first()
    )
    if prepared is not None:
        return prepared, False
    run = ExperimentRun.objects.select_for_update().get(pk=job.params["run_id"])
    Scoring.objects.filter(job_id=job.pk).delete()  # an earlier claim's, complete: one scoring per job
    number = (Scoring.objects.filter(run=run).aggregate(last=Max("number"))["last"] or 0) + 1
    made = Scoring.objects.create(
        run=run,
        number=number,
        job_id=job.pk,
        gold_version_id=job.params["gold_version_id"],
        is_complete=False,
    )
    return made, True


def job_or_fail(
    job: Job, compute: Callable[[], Computed], *, log: logging.Logger = logger
) -> Computed | None:
    """`compute()`, or None once its error failed the running `job` under its claim; a transient
    database error propagates instead, for the task to retry. Bad input fails it with its problems,
    anything else as an internal error (the traceback goes to `log` under an error id; the job, and a
    scoring's run, show the id only)."""
    try:
        return compute()
    except TRANSIENT_DATABASE_ERRORS:
        raise
    except InputValidationError as error:
        errors = error.problems
    except (ValueError, SplitRuleViolation) as error:
        errors = [str(error)]
    except Exception:
        errors = [internal_error(job.pk, log=log)]
    job_finish(job_id=job.pk, state=JobState.FAILED, claim_token=job.claim_token, errors=errors)
    return None


@transaction.atomic
def scoring_metrics_store(*, job: Job, result: ScoringResult) -> bool:
    """Store the metrics of a fanned-out job in its hidden scoring (`scoring_prepare`) while its rows
    are still being written, for the final task to complete (`scoring_store` without a result); the
    result's warnings wait in the job's result. False when `job`'s claim went, or they are stored."""
    if job_claimed(job.pk, job.claim_token, lock=True) is None:
        return False
    scoring = Scoring.objects.defer("report").filter(job_id=job.pk, is_complete=False).first()
    if scoring is None or scoring.metric_values.exists():
        return False
    _metrics_write(scoring, result)
    Job.objects.filter(pk=job.pk).update(result={"warnings": result.warnings})
    return True


def _metrics_write(scoring: Scoring, result: ScoringResult) -> None:
    scoring.settings, scoring.document_ids, scoring.report = (
        result.settings,
        result.document_ids,
        result.report,
    )
    scoring.save(update_fields=["settings", "document_ids", "report"])
    metric_values_write(scoring=scoring, values=result.metric_values)


@transaction.atomic
def scoring_store(
    *,
    job: Job,
    gold_version: GoldVersion,
    result: ScoringResult | None,
    rows: int | None = None,
) -> str:
    """Complete the job's hidden scoring (`scoring_prepare`) and finish the job, only under its claim,
    its chunks consumed; return the job's state. `rows`: how many comparison rows the chunks wrote into it (else `result`
    holds them); `result` None: its metrics are stored already (`scoring_metrics_store`)."""
    job_id = job.pk
    current = job_claimed(job_id, job.claim_token, lock=True)
    if current is None:
        return job_state(job_id)  # this worker was given up for dead, and the job went on without it
    locked = ExperimentRun.objects.select_for_update().select_related("project").get(pk=job.params["run_id"])
    scoring, _ = scoring_prepare(job=job)
    if not scoring.metric_values.exists():
        _metrics_write(scoring, result)
    scoring.gold_version, scoring.is_complete = gold_version, True
    scoring.save(update_fields=["gold_version", "is_complete"])
    if rows is None:
        document_pks, attribute_pks = row_keys(locked.project_id, result.document_ids)
        rows = comparison_rows_write(
            scoring=scoring, rows=result.rows, document_pks=document_pks, attribute_pks=attribute_pks
        )
    totals, total_problems = run_totals(locked)
    for name, value in totals.items():
        setattr(locked, name, value)
    locked.status = RunStatus.SCORED
    locked.gold_version = gold_version
    locked.save()
    split_on_run_scored(run=locked)
    notes = current.result.get("warnings", []) if result is None else result.warnings
    ScoringChunk.objects.filter(job_id=job_id).delete()
    job_finish(
        job_id=job_id,
        state=JobState.SUCCEEDED,
        claim_token=job.claim_token,
        complete_progress=0,
        result={
            "run": locked.pk,
            "scoring": scoring.number,
            "gold_version": gold_version.number,
            "documents": len(scoring.document_ids),
            "comparison_rows": rows,
            "metric_values": scoring.metric_values.count(),
        },
        warnings=[*total_problems, *notes],
    )
    return JobState.SUCCEEDED


def scoring_job_failed(job: Job) -> None:
    """A scoring job failed (job_finish calls this in its transaction): its run fails with it."""
    ExperimentRun.objects.filter(scoring_job_id=job.pk, status=RunStatus.SCORING).update(
        status=RunStatus.FAILED
    )
    ScoringChunk.objects.filter(job_id=job.pk).delete()  # the partial results of a chord, if any
    Scoring.objects.filter(job_id=job.pk, is_complete=False).delete()  # and the rows its chunks wrote


def scoring_job_retry_check(job: Job) -> None:
    """Before a retry of a scoring job (job_retry's transaction): its run is scoring again. Only the
    run's latest scoring job is retried; once the run was scored, a rescore is the way."""
    run = ExperimentRun.objects.select_for_update().filter(scoring_job_id=job.pk).first()
    if run is None or run.status not in (RunStatus.FAILED, RunStatus.SCORING):
        raise JobNotRetryable(
            f"Job {job.pk} is not the pending scoring of its run: rescore the run instead.",
        )
    split_check_can_score(run=run)
    if run.status != RunStatus.SCORING:
        run.status = RunStatus.SCORING
        run.save(update_fields=["status"])
