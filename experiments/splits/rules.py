"""What the evaluation strategy allows a run to do: its stage, its configuration, its documents, its scoring.

These are the functions the run, prediction and scoring services call. The rules, in one place:

- `null` strategy: every run has stage `all` and is scored on every document of the project.
- `dev_val_test`: a run's stage is the one the client asks for, or the phase's default:

  | phase       | default stage | stages allowed          | configuration                |
  |-------------|---------------|-------------------------|------------------------------|
  | development | development   | development             | any                          |
  | validation  | validation    | development, validation | validation: the chosen hash  |
  | finished    | test          | test                    | the chosen hash; scored once |

  Stage `all` is never allowed there: it would score the reserve the test set comes from.
- A run is scored on the documents of its stage and on no other; predictions for a document outside
  its stage are refused, naming the documents.
- The test run is scored once; its result is final (`is_final`), and a second test scoring is refused.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.db import transaction

from annotations.models import Document, EvaluationStrategy, Project, ProjectPhase
from experiments.models import ExperimentRun, RunStage, RunStatus, SplitAssignment
from experiments.splits.audit import SplitAction, split_counts, split_record_moves
from experiments.splits.errors import SplitRuleViolation

# Plain strings: a phase read from the database is a str, not a ProjectPhase member.
DEFAULT_STAGE_BY_PHASE: dict[str, str] = {
    ProjectPhase.DEVELOPMENT.value: RunStage.DEVELOPMENT.value,
    ProjectPhase.VALIDATION.value: RunStage.VALIDATION.value,
    ProjectPhase.FINISHED.value: RunStage.TEST.value,
}
ALLOWED_STAGES_BY_PHASE: dict[str, set[str]] = {
    ProjectPhase.DEVELOPMENT.value: {RunStage.DEVELOPMENT.value},
    ProjectPhase.VALIDATION.value: {RunStage.DEVELOPMENT.value, RunStage.VALIDATION.value},
    ProjectPhase.FINISHED.value: {RunStage.TEST.value},
}
STAGES_NEEDING_THE_CHOSEN_CONFIGURATION = {RunStage.VALIDATION.value, RunStage.TEST.value}


def split_any_assigned(*, project: Project) -> bool:
    """True once a document of the project has a split: from then on the strategy cannot change."""
    return SplitAssignment.objects.filter(project=project).exists()


def split_strategy_change_check(project: Project, strategy: str) -> None:
    """Registered with the project services: may `project` switch to `strategy`?

    Never once a split has been assigned. And not to dev_val_test once a run has been scored: a run of
    the null strategy is scored on every document, so its comparison rows already show the gold of the
    documents the test set would be drawn from; no test set could be held back unseen.
    """
    if strategy == project.strategy:
        return
    if split_any_assigned(project=project):
        raise ValidationError(
            {
                "strategy": "Documents are already assigned to splits: the evaluation strategy can no longer change."
            }
        )
    if strategy == EvaluationStrategy.DEV_VAL_TEST:
        seen = ExperimentRun.objects.filter(project=project).exclude(status=RunStatus.OPEN)
        if seen.exists():
            raise ValidationError(
                {
                    "strategy": "Runs of this project have been scored on every document, so no test set can be "
                    "held back unseen: start a new project for a dev_val_test evaluation."
                }
            )


def split_stage_for_new_run(
    *, project: Project, requested_stage: str | None = None, config_hash: str | None = None
) -> str:
    """The stage of a run about to be created, or SplitRuleViolation saying why it may not be.

    `requested_stage` is the client's `"stage"` (None or "" for the phase's default). When `config_hash`
    is given, a validation or test run is also checked against the chosen configuration.
    """
    requested_stage = requested_stage or None
    if project.strategy == EvaluationStrategy.NULL:
        if requested_stage not in (None, RunStage.ALL):
            raise SplitRuleViolation(
                f"Project {project.slug!r} has the null strategy: runs are evaluated on all documents, "
                f"there is no {requested_stage!r} stage.",
                details={"stage": requested_stage, "allowed_stages": [RunStage.ALL.value]},
                code="stage_not_allowed",
            )
        return RunStage.ALL.value
    allowed = ALLOWED_STAGES_BY_PHASE[project.phase]
    stage = requested_stage or DEFAULT_STAGE_BY_PHASE[project.phase]
    if stage not in allowed:
        raise SplitRuleViolation(
            f"In the {project.phase} phase a run may be a {' or '.join(sorted(allowed))} run, not {stage!r}.",
            details={"stage": stage, "phase": project.phase, "allowed_stages": sorted(allowed)},
            code="stage_not_allowed",
        )
    if config_hash is not None:
        split_check_run_config(project=project, stage=stage, config_hash=config_hash)
    if stage == RunStage.TEST:
        _refuse_when_the_test_result_is_final(project=project)
    return stage


def split_check_run_config(*, project: Project, stage: str, config_hash: str) -> None:
    """A validation or test run must carry the configuration hash of the chosen run."""
    if stage not in STAGES_NEEDING_THE_CHOSEN_CONFIGURATION:
        return
    chosen = project.chosen_config_hash
    if not chosen:
        raise SplitRuleViolation(
            f"No configuration has been chosen in project {project.slug!r}: move documents to validation "
            "with a development run first.",
            details={"stage": stage, "config_hash": config_hash},
            code="no_chosen_configuration",
        )
    if config_hash != chosen:
        raise SplitRuleViolation(
            f"A {stage} run must use the chosen configuration (hash {chosen}); this run's configuration "
            f"has hash {config_hash}.",
            details={"stage": stage, "config_hash": config_hash, "chosen_config_hash": chosen},
            code="configuration_not_chosen",
        )


def split_document_ids_in_stage(*, project: Project, stage: str) -> set[int]:
    """The Document pks a run of `stage` may receive predictions for and be scored on."""
    if stage == RunStage.ALL:
        if project.strategy != EvaluationStrategy.NULL:
            raise SplitRuleViolation(
                f"Project {project.slug!r} uses the dev_val_test strategy: a run over all documents would "
                "score the documents held back for the test.",
                details={"stage": stage},
                code="stage_all_under_dev_val_test",
            )
        return set(Document.objects.filter(project=project).values_list("pk", flat=True))
    return set(
        SplitAssignment.objects.filter(project=project, split=stage).values_list("document_id", flat=True)
    )


def split_check_prediction_documents(*, run: ExperimentRun, document_ids: Iterable[int]) -> None:
    """Refuse predictions for documents outside the run's stage, listing them by external id."""
    outside = set(document_ids) - split_document_ids_in_stage(project=run.project, stage=run.stage)
    if outside:
        external_ids = sorted(Document.objects.filter(pk__in=outside).values_list("external_id", flat=True))
        raise SplitRuleViolation(
            f"Run {run.pk} is a {run.stage} run: {len(outside)} posted document(s) are not in its stage.",
            details={"stage": run.stage, "documents_outside_stage": external_ids},
            code="documents_outside_stage",
        )


def split_check_can_score(*, run: ExperimentRun) -> None:
    """Refuse to score a run the strategy does not allow to be scored now (SplitRuleViolation)."""
    # Read the project afresh: a run fetched earlier may carry a project whose phase has moved since.
    project = Project.objects.get(pk=run.project_id)
    if run.is_final:
        raise SplitRuleViolation(
            f"Run {run.pk} is the final test result of project {project.slug!r}: it is never rescored.",
            details={"run": run.pk, "stage": run.stage},
            code="test_result_final",
        )
    if project.strategy == EvaluationStrategy.NULL:
        if run.stage != RunStage.ALL:
            raise SplitRuleViolation(
                f"Project {project.slug!r} has the null strategy; run {run.pk} has stage {run.stage!r}.",
                details={"run": run.pk, "stage": run.stage},
            )
        return
    # Raises for stage `all` under dev_val_test.
    split_document_ids_in_stage(project=project, stage=run.stage)
    if run.stage == RunStage.VALIDATION and project.phase != ProjectPhase.VALIDATION:
        raise SplitRuleViolation(
            f"Run {run.pk} is a validation run, but project {project.slug!r} is in the {project.phase} "
            "phase: its validation documents are no longer the ones it was created for.",
            details={"run": run.pk, "stage": run.stage, "phase": project.phase},
            code="validation_closed",
        )
    if run.stage == RunStage.TEST and project.phase != ProjectPhase.FINISHED:
        raise SplitRuleViolation(
            f"The test stage of project {project.slug!r} is not open: accept a validated configuration first.",
            details={"run": run.pk, "stage": run.stage, "phase": project.phase},
            code="test_not_open",
        )
    split_check_run_config(project=project, stage=run.stage, config_hash=run.config_hash)
    if run.stage == RunStage.TEST:
        _refuse_when_the_test_result_is_final(project=project, except_run=run)


def split_check_can_delete(*, run: ExperimentRun) -> None:
    """Refuse to delete the final test result (SplitRuleViolation): the test documents are scored
    once, and that score is the project's answer; deleting it would let a second test run in."""
    if run.is_final:
        raise SplitRuleViolation(
            f"Run {run.pk} is the final test result of its project: it cannot be deleted.",
            details={"run": run.pk, "stage": run.stage},
            code="test_result_final",
        )


@transaction.atomic
def split_on_run_scored(*, run: ExperimentRun) -> None:
    """Called once a run's scores are stored. A test run's result becomes final, and the audit says so.

    The project row is locked and the rule checked again, so two test runs finishing together cannot
    both become final: the second raises SplitRuleViolation and its scoring transaction rolls back.
    """
    if run.stage != RunStage.TEST:
        return
    project = Project.objects.select_for_update().get(pk=run.project_id)
    _refuse_when_the_test_result_is_final(project=project, except_run=run)
    ExperimentRun.objects.filter(pk=run.pk).update(is_final=True)
    run.is_final = True
    split_record_moves(
        project=project,
        action=SplitAction.TEST_SCORED,
        phase=project.phase,
        moves=[],
        counts_before=split_counts(project=project),
        actor=run.created_by,
        reason=f"Run {run.pk} ({run.name}) scored on the test documents: its result is final.",
        run=run,
    )


def _refuse_when_the_test_result_is_final(
    *, project: Project, except_run: ExperimentRun | None = None
) -> None:
    final = ExperimentRun.objects.filter(project=project, stage=RunStage.TEST, is_final=True)
    if except_run is not None:
        final = final.exclude(pk=except_run.pk)
    final_run = final.first()
    if final_run is not None:
        raise SplitRuleViolation(
            f"Project {project.slug!r} already has its final test result (run {final_run.pk}): the test "
            "documents are scored once.",
            details={"final_run": final_run.pk},
            code="test_result_final",
        )
