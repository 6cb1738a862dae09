"""The dev_val_test transitions. Nothing else writes a SplitAssignment.

Each transition locks the project row (`select_for_update`), checks the phase, changes the assignments,
moves the phase and records one SplitEvent per document plus one for the project, all in one
transaction: two managers clicking at once get one transition and one refusal.

Where documents come from: development and validation documents are both drawn from the documents not
assigned yet, so validation is a first out-of-sample test: the chosen configuration is validated on
documents no development run has seen. Rejected validation documents have now been seen, so they join
development; accepting makes every document still unassigned a test document.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from annotations.models import Document, EvaluationStrategy, Project, ProjectPhase
from experiments.models import ExperimentRun, RunStage, RunStatus, Split, SplitAssignment
from experiments.splits.audit import SplitAction, split_counts, split_record_moves
from experiments.splits.draw import Candidate, draw, stratum_of
from experiments.splits.errors import SplitRuleViolation


def _lock_project(project: Project, *, phases: Sequence[str], action: str) -> Project:
    locked = Project.objects.select_for_update().get(pk=project.pk)
    if locked.strategy != EvaluationStrategy.DEV_VAL_TEST:
        raise SplitRuleViolation(
            f"Project {locked.slug!r} has the {locked.strategy} strategy: it has no splits to {action}.",
            details={"strategy": locked.strategy},
            code="no_splits_under_null",
        )
    if locked.phase == ProjectPhase.FINISHED:
        raise SplitRuleViolation(
            f"Project {locked.slug!r} is finished: its splits are sealed and can no longer change.",
            details={"phase": locked.phase},
            code="splits_sealed",
        )
    if locked.phase not in phases:
        raise SplitRuleViolation(
            f"Cannot {action} in the {locked.phase} phase (only in: {', '.join(phases)}).",
            details={"phase": locked.phase, "allowed_phases": list(phases)},
            code="wrong_phase",
        )
    return locked


def _unassigned_documents(project: Project):
    return Document.objects.filter(project=project, split_assignment__isnull=True).order_by("external_id")


def _draw_unassigned(
    project: Project, *, n: int, seed: int, stratify_by: str | None, keep_back: int = 0
) -> list[Document]:
    documents = list(_unassigned_documents(project).only("pk", "external_id", "metadata"))
    available = len(documents) - keep_back
    if n < 1 or n > available:
        raise SplitRuleViolation(
            f"Cannot draw {n} document(s): {available} unassigned document(s) can be drawn"
            + (f" ({keep_back} must stay for the test)." if keep_back else "."),
            details={"n": n, "available": max(available, 0)},
            code="not_enough_documents",
        )
    by_pk = {document.pk: document for document in documents}
    candidates = [
        Candidate(
            pk=document.pk,
            external_id=document.external_id,
            stratum=stratum_of(document.metadata, stratify_by),
        )
        for document in documents
    ]
    return [
        by_pk[candidate.pk] for candidate in draw(candidates, n=n, seed=seed, stratified=bool(stratify_by))
    ]


def _named_unassigned(project: Project, external_ids: Sequence[str]) -> list[Document]:
    wanted = list(dict.fromkeys(external_ids))
    documents = {
        document.external_id: document
        for document in Document.objects.filter(project=project, external_id__in=wanted).select_related(
            "split_assignment"
        )
    }
    unknown = [external_id for external_id in wanted if external_id not in documents]
    if unknown:
        raise ValidationError(
            {"document_ids": [f"Unknown document(s) in this project: {', '.join(unknown)}."]}
        )
    assigned = [
        external_id for external_id, document in documents.items() if hasattr(document, "split_assignment")
    ]
    if assigned:
        raise SplitRuleViolation(
            f"{len(assigned)} document(s) already have a split.",
            details={"already_assigned": sorted(assigned)},
            code="already_assigned",
        )
    return sorted(documents.values(), key=lambda document: document.external_id)


@transaction.atomic
def split_assign_development(
    *,
    project: Project,
    actor: AbstractBaseUser | None,
    n: int | None = None,
    document_ids: Sequence[str] | None = None,
    seed: int | None = None,
    stratify_by: str | None = None,
    reason: str = "",
    request_id: str = "",
) -> list[Document]:
    """Assign unassigned documents to development: `n` drawn with `seed`, or the named `document_ids`.

    Allowed in the development phase, as often as needed. Returns the documents assigned.
    """
    if (n is None) == (document_ids is None):
        raise ValidationError("Give either n (with a seed) or document_ids.")
    if n is not None and seed is None:
        raise ValidationError({"seed": ["A random draw needs a seed, so it can be repeated."]})
    locked = _lock_project(project, phases=[ProjectPhase.DEVELOPMENT], action="assign development documents")
    counts_before = split_counts(project=locked)
    if n is not None:
        documents = _draw_unassigned(locked, n=n, seed=seed, stratify_by=stratify_by)
    else:
        documents = _named_unassigned(locked, document_ids)
    SplitAssignment.objects.bulk_create(
        [
            SplitAssignment(project=locked, document=document, split=Split.DEVELOPMENT)
            for document in documents
        ]
    )
    split_record_moves(
        project=locked,
        action=SplitAction.ASSIGN_DEVELOPMENT,
        phase=locked.phase,
        moves=[(document, "", Split.DEVELOPMENT) for document in documents],
        counts_before=counts_before,
        actor=actor,
        reason=reason,
        seed=seed,
        request_id=request_id,
    )
    project.refresh_from_db()
    return documents


@transaction.atomic
def split_move_to_validation(
    *,
    project: Project,
    actor: AbstractBaseUser | None,
    run: ExperimentRun,
    n: int,
    seed: int,
    stratify_by: str | None = None,
    reason: str = "",
    request_id: str = "",
) -> list[Document]:
    """Choose `run`'s configuration and draw `n` unassigned documents to validate it on.

    `run` is a scored development run of the project; its config hash becomes the project's chosen
    configuration, which every validation and test run must carry. At least one document stays
    unassigned, so the test set is never empty. Phase: development → validation.
    """
    locked = _lock_project(project, phases=[ProjectPhase.DEVELOPMENT], action="move documents to validation")
    if run.project_id != locked.pk or run.stage != RunStage.DEVELOPMENT or run.status != RunStatus.SCORED:
        raise SplitRuleViolation(
            "The configuration to validate must come from a scored development run of this project; "
            f"run {run.pk} is a {run.status} {run.stage} run.",
            details={"run": run.pk, "stage": run.stage, "status": run.status},
            code="not_a_scored_development_run",
        )
    counts_before = split_counts(project=locked)
    documents = _draw_unassigned(locked, n=n, seed=seed, stratify_by=stratify_by, keep_back=1)
    SplitAssignment.objects.bulk_create(
        [SplitAssignment(project=locked, document=document, split=Split.VALIDATION) for document in documents]
    )
    phase_before = locked.phase
    locked.phase = ProjectPhase.VALIDATION
    locked.chosen_config_hash = run.config_hash
    locked.save(update_fields=["phase", "chosen_config_hash", "updated_at"])
    split_record_moves(
        project=locked,
        action=SplitAction.MOVE_TO_VALIDATION,
        phase=phase_before,
        moves=[(document, "", Split.VALIDATION) for document in documents],
        counts_before=counts_before,
        actor=actor,
        reason=reason,
        seed=seed,
        request_id=request_id,
        run=run,
    )
    project.refresh_from_db()
    return documents


@transaction.atomic
def split_reject(
    *, project: Project, actor: AbstractBaseUser | None, reason: str = "", request_id: str = ""
) -> list[Document]:
    """Reject the chosen configuration: validation documents join development, the choice is cleared.

    Phase: validation → development. Returns the documents moved back.
    """
    locked = _lock_project(project, phases=[ProjectPhase.VALIDATION], action="reject")
    counts_before = split_counts(project=locked)
    assignments = list(
        SplitAssignment.objects.select_related("document")
        .filter(project=locked, split=Split.VALIDATION)
        .order_by("document__external_id")
    )
    SplitAssignment.objects.filter(pk__in=[a.pk for a in assignments]).update(split=Split.DEVELOPMENT)
    phase_before = locked.phase
    locked.phase = ProjectPhase.DEVELOPMENT
    locked.chosen_config_hash = ""
    locked.save(update_fields=["phase", "chosen_config_hash", "updated_at"])
    documents = [assignment.document for assignment in assignments]
    split_record_moves(
        project=locked,
        action=SplitAction.REJECT,
        phase=phase_before,
        moves=[(document, Split.VALIDATION, Split.DEVELOPMENT) for document in documents],
        counts_before=counts_before,
        actor=actor,
        reason=reason,
        request_id=request_id,
    )
    project.refresh_from_db()
    return documents


@transaction.atomic
def split_accept(
    *, project: Project, actor: AbstractBaseUser | None, reason: str = "", request_id: str = ""
) -> list[Document]:
    """Accept the chosen configuration: every unassigned document becomes a test document.

    Needs a scored validation run of the chosen configuration (the decision is made on its result).
    Every assignment is sealed and the phase becomes finished: the test stage opens for the chosen
    configuration, and no split changes again. Returns the test documents.
    """
    locked = _lock_project(project, phases=[ProjectPhase.VALIDATION], action="accept")
    validated = ExperimentRun.objects.filter(
        project=locked,
        stage=RunStage.VALIDATION,
        status=RunStatus.SCORED,
        config_hash=locked.chosen_config_hash,
    ).exists()
    if not validated:
        raise SplitRuleViolation(
            "Accept after a validation run of the chosen configuration has been scored.",
            details={"chosen_config_hash": locked.chosen_config_hash},
            code="not_validated",
        )
    counts_before = split_counts(project=locked)
    documents = list(_unassigned_documents(locked))
    if not documents:
        raise SplitRuleViolation(
            "No unassigned document is left to form the test set.", code="not_enough_documents"
        )
    SplitAssignment.objects.bulk_create(
        [SplitAssignment(project=locked, document=document, split=Split.TEST) for document in documents]
    )
    SplitAssignment.objects.filter(project=locked).update(sealed=True)
    phase_before = locked.phase
    locked.phase = ProjectPhase.FINISHED
    locked.save(update_fields=["phase", "updated_at"])
    split_record_moves(
        project=locked,
        action=SplitAction.ACCEPT,
        phase=phase_before,
        moves=[(document, "", Split.TEST) for document in documents],
        counts_before=counts_before,
        actor=actor,
        reason=reason,
        request_id=request_id,
    )
    project.refresh_from_db()
    return documents
