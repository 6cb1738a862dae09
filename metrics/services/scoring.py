"""Scoring jobs: requested by finalize or rescore, run on a worker, stored exactly once.

Fault tolerance, for a worker killed mid-scoring (acks_late + reject_on_worker_lost redeliver the task):
- the job is claimed with a conditional UPDATE that accepts `queued` and also a stale `running` left by
  a dead worker, so the redelivered task goes on;
- scoring reads only, and every result is written in ONE transaction at the end, which first locks the
  job row and goes on only while the job is still `running`: a second copy of the task that finishes
  later finds it `succeeded` and writes nothing. A unique constraint (one scoring per job) stands
  behind that, and an incomplete scoring of the job, should one exist, is deleted first.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from annotations.importers.errors import ImportProblem, InputValidationError
from annotations.models import Attribute, Document, GoldVersion, Job, JobKind, JobState
from annotations.selectors import gold_version_current
from annotations.signals import job_finished
from evalproject.tasks import enqueue_after_commit
from experiments.models import ExperimentRun, RunKind, RunStage, RunStatus
from experiments.splits import (
    SplitRuleViolation,
    split_check_can_score,
    split_document_ids_in_stage,
    split_on_run_scored,
)
from metrics.errors import ScoringNotAllowed
from metrics.models import Scoring
from metrics.services.attribute_scoring import score_attribute_run
from metrics.services.engine_inputs import run_totals
from metrics.services.results import ScoringResult
from metrics.services.span_scoring import score_span_run
from metrics.services.writes import comparison_rows_write, metric_values_write

logger = logging.getLogger("metrics.scoring")
DEFAULT_CHUNK_DOCUMENTS = 500


@transaction.atomic
def scoring_request(*, run: ExperimentRun, user: AbstractBaseUser | None, rescore: bool = False) -> Job:
    """Close the run (finalize) or ask for a new scoring (rescore) and queue the scoring job.

    Finalize takes an open run; rescore a scored or failed one (after a gold or settings change; the
    earlier scorings stay readable). The gold version is fixed now, in the job's parameters.
    Raises ScoringNotAllowed or SplitRuleViolation (409).
    """
    from metrics.tasks import score_run  # the task module imports this one

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
    enqueue_after_commit(score_run, job.pk)
    return job


def scoring_run(
    *,
    job_id: int,
    chunk_documents: int = DEFAULT_CHUNK_DOCUMENTS,
    after_chunk: Callable[[], None] | None = None,
) -> str:
    """Run one scoring job to its end; return the job's final state. Safe to run twice (see module doc)."""
    claimed = Job.objects.filter(
        pk=job_id, kind=JobKind.SCORING, state__in=[JobState.QUEUED, JobState.RUNNING]
    ).update(state=JobState.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now(), progress_done=0)
    if not claimed:
        return Job.objects.filter(pk=job_id).values_list("state", flat=True).first() or "missing"
    job = Job.objects.get(pk=job_id)
    run = ExperimentRun.objects.select_related("project").get(pk=job.params["run_id"])
    gold_version = GoldVersion.objects.get(pk=job.params["gold_version_id"])

    def progress(done: int, total: int) -> None:
        Job.objects.filter(pk=job_id, state=JobState.RUNNING).update(progress_done=done, progress_total=total)
        if after_chunk is not None and done:
            after_chunk()

    try:
        split_check_can_score(run=run)
        document_ids = None
        if run.stage != RunStage.ALL:
            pks = split_document_ids_in_stage(project=run.project, stage=run.stage)
            document_ids = set(Document.objects.filter(pk__in=pks).values_list("external_id", flat=True))
        score = score_span_run if run.kind == RunKind.SPANS else score_attribute_run
        result = score(
            run=run,
            gold_version=gold_version,
            document_ids=document_ids,
            chunk_size=chunk_documents,
            progress=progress,
        )
        return _store(job_id=job_id, run=run, gold_version=gold_version, result=result)
    except (InputValidationError, ValueError, SplitRuleViolation) as error:
        problems = error.problems if isinstance(error, InputValidationError) else [str(error)]
        _fail(job_id=job_id, run=run, errors=[str(problem) for problem in problems])
        return JobState.FAILED
    except Exception:
        logger.exception("scoring job %s failed", job_id)
        _fail(job_id=job_id, run=run, errors=[traceback.format_exc(limit=5)])
        return JobState.FAILED


@transaction.atomic
def _store(*, job_id: int, run: ExperimentRun, gold_version: GoldVersion, result: ScoringResult) -> str:
    job = Job.objects.select_for_update().get(pk=job_id)
    if job.state != JobState.RUNNING:
        return job.state  # another delivery of this task finished it first
    locked = ExperimentRun.objects.select_for_update().select_related("project").get(pk=run.pk)
    Scoring.objects.filter(job_id=job_id).delete()
    number = (Scoring.objects.filter(run=locked).aggregate(last=Max("number"))["last"] or 0) + 1
    scoring = Scoring.objects.create(
        run=locked,
        number=number,
        gold_version=gold_version,
        job_id=job_id,
        settings=result.settings,
        document_ids=result.document_ids,
        report=result.report,
        is_complete=True,
    )
    metric_values_write(scoring=scoring, values=result.metric_values)
    document_pks = dict(
        Document.objects.filter(
            project_id=locked.project_id, external_id__in=result.document_ids
        ).values_list("external_id", "pk")
    )
    attribute_pks = dict(
        Attribute.objects.filter(project_id=locked.project_id).values_list("attribute_id", "pk")
    )
    comparison_rows_write(
        scoring=scoring, rows=result.rows, document_pks=document_pks, attribute_pks=attribute_pks
    )
    for name, value in run_totals(locked).as_fields().items():
        setattr(locked, name, value)
    locked.status = RunStatus.SCORED
    locked.gold_version = gold_version
    locked.save()
    split_on_run_scored(run=locked)
    Job.objects.filter(pk=job_id).update(
        state=JobState.SUCCEEDED,
        finished_at=timezone.now(),
        progress_done=F("progress_total"),
        result={
            "run": locked.pk,
            "scoring": number,
            "gold_version": gold_version.number,
            "documents": len(result.document_ids),
            "comparison_rows": len(result.rows),
            "metric_values": len(result.metric_values),
        },
        warnings=_problem_dicts(result.warnings[:1000]),
    )
    job.refresh_from_db()
    transaction.on_commit(lambda: job_finished.send(sender=Job, job=job))
    return JobState.SUCCEEDED


@transaction.atomic
def _fail(*, job_id: int, run: ExperimentRun, errors: list[str]) -> None:
    updated = Job.objects.filter(pk=job_id, state=JobState.RUNNING).update(
        state=JobState.FAILED, finished_at=timezone.now(), errors=_problem_dicts(errors[:1000])
    )
    if updated:
        ExperimentRun.objects.filter(pk=run.pk, status=RunStatus.SCORING).update(status=RunStatus.FAILED)
        job = Job.objects.get(pk=job_id)
        transaction.on_commit(lambda: job_finished.send(sender=Job, job=job))


def _problem_dicts(problems: list) -> list[dict]:
    """Job problems in the one shape GET /jobs/{id}/ serialises (ImportProblem.as_dict); scorers give
    plain strings for some."""
    return [
        problem if isinstance(problem, dict) else ImportProblem(str(problem)).as_dict()
        for problem in problems
    ]
