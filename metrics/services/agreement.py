"""Agreement between the annotators of a project, on the server (docs/agreement.md, "On the server"):
the figures of `metrics.pipeline.agreement_evaluation` (the same as `manage.py evaluate_agreement`),
stored as the job's result; `agreement_latest` reads the newest one. Held-back documents are left out
of the computation altogether, so the stored result can be shown to every member.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotations.models import Document, GoldKind, Job, JobKind, JobState, Project
from annotations.selectors import attribute_specs, gold_attribute_documents, gold_span_documents
from annotations.selectors.gold import gold_version_current
from annotations.services.jobs import job_enqueue, job_finish, job_running
from experiments.models import ExperimentRun, RunSource
from experiments.splits import split_hidden_document_ids
from metrics.engine.agreement.attributes import attribute_agreement
from metrics.engine.agreement.spans import AnnotatedDocument, span_agreement
from metrics.pipeline.agreement_evaluation import FORMAT_VERSION, attribute_ratings, gold_values
from metrics.pipeline.intervals import DEFAULT_INTERVALS
from metrics.services.engine_inputs import predicted_span_documents, prediction_documents
from metrics.services.scoring import job_or_fail, job_state

logger = logging.getLogger("metrics.pipeline.agreement_evaluation")


@transaction.atomic
def agreement_job_create(*, project: Project, user: AbstractBaseUser | None) -> Job:
    """Queue an agreement job for the project (sent after this transaction commits)."""
    job = Job.objects.create(
        kind=JobKind.AGREEMENT,
        project=project,
        created_by=user if user is not None and user.is_authenticated else None,
    )
    job_enqueue(job)
    return job


def agreement_job_run(*, job_id: int, resume_token: str | None = None) -> str:
    """Run an agreement job to its end; return the job's final state (its current state when this
    caller did not claim it). A database error propagates as JobInterrupted, for the task to retry."""
    with job_running(job_id=job_id, kind=JobKind.AGREEMENT, resume_token=resume_token) as job:
        if job is None:
            return job_state(job_id)
        result = job_or_fail(job, lambda: project_agreement(project=job.project), log=logger)
        if result is None:
            return JobState.FAILED
        # The warnings stay in the result (agreement.json's contract) and are the job's warnings too.
        job_finish(
            job_id=job_id,
            state=JobState.SUCCEEDED,
            claim_token=job.claim_token,
            result=result,
            warnings=result.get("warnings", []),
        )
    return JobState.SUCCEEDED


def agreement_latest(*, project: Project) -> Job | None:
    """The project's newest successful agreement job."""
    return (
        Job.objects.filter(project=project, kind=JobKind.AGREEMENT, state=JobState.SUCCEEDED)
        .order_by("-finished_at", "-pk")
        .first()
    )


def human_runs_latest(*, project: Project, kind: str) -> list[ExperimentRun]:
    """The newest human run of each name, by name."""
    latest: dict[str, ExperimentRun] = {}
    for run in ExperimentRun.objects.filter(project=project, kind=kind, source=RunSource.HUMAN).order_by(
        "name", "-created_at", "-pk"
    ):
        latest.setdefault(run.name, run)
    return list(latest.values())


def project_agreement(*, project: Project) -> dict[str, Any]:
    """agreement.json for the project's current gold and human runs, without held-back documents."""
    intervals = DEFAULT_INTERVALS
    hidden = set(
        Document.objects.filter(pk__in=split_hidden_document_ids(project=project)).values_list(
            "external_id", flat=True
        )
    )
    result: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "documents_held_back": len(hidden),
        "config": {"intervals": intervals.as_config()},
    }
    spans_gold = gold_version_current(project=project, kind=GoldKind.SPANS)
    humans = human_runs_latest(project=project, kind=GoldKind.SPANS)
    if spans_gold is not None and humans:
        documents = list(_span_documents(spans_gold, humans, hidden))
        result["spans"] = span_agreement(documents, settings=intervals)
        result["spans"]["gold_version"] = spans_gold.number
    attributes_gold = gold_version_current(project=project, kind=GoldKind.ATTRIBUTES)
    humans = human_runs_latest(project=project, kind=GoldKind.ATTRIBUTES)
    if attributes_gold is not None and humans:
        ratings, warnings = attribute_ratings(
            _attribute_rows(attributes_gold, humans, hidden),
            attribute_specs(project=project),
            number_format=project.number_format,
        )
        result["attributes"] = attribute_agreement(ratings, settings=intervals)
        result["attributes_gold_version"] = attributes_gold.number
        result["warnings"] = [problem.as_dict() for problem in warnings]
    if "spans" not in result and "attributes" not in result:
        raise ValueError(
            f"Project {project.slug!r} has no gold with human runs to compare it with: import an export with "
            "several annotators (choose the gold one), or post a run with source human."
        )
    return result


def _annotator_names(gold_version, humans: list[ExperimentRun]) -> tuple[str, dict[int, str]]:
    """The gold's annotator and each human run's (by pk), told apart where their names clash."""
    name = gold_version.annotator or "gold"
    gold_name = f"{name} (gold)" if any(run.name == name for run in humans) else name
    return gold_name, {
        run.pk: (run.name if run.name != gold_name else f"{run.name} (run {run.pk})") for run in humans
    }


def _span_documents(
    gold_version, humans: list[ExperimentRun], hidden: set[str]
) -> Iterator[AnnotatedDocument]:
    gold_name, names = _annotator_names(gold_version, humans)
    gold = {document.document_id: document for document in gold_span_documents(gold_version=gold_version)}
    annotations: dict[str, dict[str, list]] = {
        document_id: {gold_name: [(s.start, s.end, s.entity_type) for s in document.spans]}
        for document_id, document in gold.items()
        if document_id not in hidden
    }
    for run in humans:
        run_documents = list(run.run_documents.values_list("pk", flat=True))
        for document in predicted_span_documents(run_documents):
            if document.document_id in annotations:
                annotations[document.document_id][names[run.pk]] = [
                    (s.start, s.end, s.entity_type) for s in document.spans
                ]
    for document_id, by_annotator in sorted(annotations.items()):
        yield AnnotatedDocument(document_id, gold[document_id].text or "", by_annotator)


def _attribute_rows(
    gold_version, humans: list[ExperimentRun], hidden: set[str]
) -> Iterator[tuple[str, str, dict]]:
    gold_name, names = _annotator_names(gold_version, humans)
    gold_ids = set()
    for document in gold_attribute_documents(gold_version=gold_version):
        if document.document_id in hidden or not document.annotations:
            continue
        gold_ids.add(document.document_id)
        yield document.document_id, gold_name, gold_values(document)
    for run in humans:
        run_documents = list(run.run_documents.values_list("pk", flat=True))
        for document_id, prediction in prediction_documents(run_documents).items():
            if document_id not in gold_ids or prediction.status != "ok":
                continue
            values: dict[str, Any] = {}
            for annotation in prediction.annotations:
                values.setdefault(annotation.attribute_id, annotation.output_data)
            yield document_id, names[run.pk], values
