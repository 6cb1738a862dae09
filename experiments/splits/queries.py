"""Reads for the splits API: status, the documents a pipeline should run on now, and the event log."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from annotations.models import Document, EvaluationStrategy, Project
from experiments.models import ExperimentRun, RunStage, Split, SplitAssignment, SplitEvent
from experiments.splits.access import split_hides_documents, split_log_refused_access
from experiments.splits.audit import split_counts
from experiments.splits.errors import SplitAccessRefused, SplitRuleViolation
from experiments.splits.rules import (
    ALLOWED_STAGES_BY_PHASE,
    DEFAULT_STAGE_BY_PHASE,
    split_document_ids_in_stage,
)

CURRENT = "current"


def split_status(*, project: Project) -> dict:
    """The strategy, its phase, the chosen configuration and the documents per split."""
    dev_val_test = project.strategy == EvaluationStrategy.DEV_VAL_TEST
    return {
        "strategy": project.strategy,
        "phase": project.phase or None,
        "chosen_config_hash": project.chosen_config_hash or None,
        "current_stage": DEFAULT_STAGE_BY_PHASE[project.phase] if dev_val_test else RunStage.ALL.value,
        "counts": split_counts(project=project) if dev_val_test else {},
        "documents": Document.objects.filter(project=project).count(),
    }


def split_current_documents(
    *, project: Project, stage: str = CURRENT, user: AbstractBaseUser | None = None, request_id: str = ""
) -> QuerySet[Document]:
    """The documents a pipeline should run on for `stage` ("current": the stage the phase opens).

    Only stages a new run may have now are served. Asking for the test documents before acceptance is
    an attempt to see what is held back: it is refused (403) and logged.
    """
    if stage == RunStage.TEST:
        _refuse_held_back_test_documents(project=project, user=user, request_id=request_id)
    if project.strategy == EvaluationStrategy.NULL:
        allowed = {RunStage.ALL.value}
        default = RunStage.ALL.value
    else:
        allowed = ALLOWED_STAGES_BY_PHASE[project.phase]
        default = DEFAULT_STAGE_BY_PHASE[project.phase]
    stage = default if stage in ("", CURRENT) else stage
    if stage not in allowed:
        raise SplitRuleViolation(
            f"There is no {stage!r} stage to run on in project {project.slug!r} now.",
            details={"stage": stage, "allowed_stages": sorted(allowed | {CURRENT})},
            code="stage_not_open",
        )
    ids = split_document_ids_in_stage(project=project, stage=stage)
    return Document.objects.filter(project=project, pk__in=ids).only("pk", "external_id", "name", "text")


def split_documents_in(
    *, project: Project, split: str, user: AbstractBaseUser | None = None, request_id: str = ""
) -> QuerySet[Document]:
    """The project's documents assigned to `split` (development, validation or test).

    As for `split_current_documents`, asking for the test documents while they are held back is refused
    (403) and logged. A project without splits (the null strategy) has none to filter by: a 400.
    """
    if split == Split.TEST:
        _refuse_held_back_test_documents(project=project, user=user, request_id=request_id)
    if project.strategy == EvaluationStrategy.NULL:
        raise ValidationError(
            {"stage": f"project {project.slug!r} uses the null strategy: its documents are in no split"}
        )
    in_split = SplitAssignment.objects.filter(project=project, split=split).values("document_id")
    return Document.objects.filter(project=project, pk__in=in_split)


def _refuse_held_back_test_documents(
    *, project: Project, user: AbstractBaseUser | None, request_id: str
) -> None:
    if split_hides_documents(project=project):
        split_log_refused_access(project=project, user=user, what="test documents", request_id=request_id)
        raise SplitAccessRefused(
            f"The test documents of project {project.slug!r} are held back until a configuration is accepted.",
            details={"stage": Split.TEST.value, "phase": project.phase},
        )


def split_events(
    *, project: Project, document_external_id: str | None = None, action: str | None = None
) -> QuerySet[SplitEvent]:
    """The project's split events, oldest first, optionally for one document or one action."""
    events = SplitEvent.objects.filter(project=project).select_related("document", "actor", "run")
    if document_external_id:
        events = events.filter(document__external_id=document_external_id)
    if action:
        events = events.filter(action=action)
    return events.order_by("id")


def split_run_for_project(*, project: Project, run_id: int) -> ExperimentRun:
    """The run `run_id` of `project`; a run of another project is as unknown as a missing one."""
    run = ExperimentRun.objects.filter(project=project, pk=run_id).first()
    if run is None:
        raise ValidationError({"run": [f"Project {project.slug!r} has no run {run_id}."]})
    return run
