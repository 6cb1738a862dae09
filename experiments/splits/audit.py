"""The audit trail: counts per split and the SplitEvent rows every change leaves behind."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count

from annotations.models import Document, Project
from experiments.models import ExperimentRun, Split, SplitAssignment, SplitEvent

UNASSIGNED = "unassigned"
SPLIT_KEYS = [Split.DEVELOPMENT.value, Split.VALIDATION.value, Split.TEST.value, UNASSIGNED]


class SplitAction:
    """The `action` of a SplitEvent."""

    ASSIGN_DEVELOPMENT = "assign_development"
    MOVE_TO_VALIDATION = "move_to_validation"
    ACCEPT = "accept"
    REJECT = "reject"
    TEST_SCORED = "test_scored"
    ACCESS_REFUSED = "access_refused"

    TRANSITIONS = (ASSIGN_DEVELOPMENT, MOVE_TO_VALIDATION, ACCEPT, REJECT)


def split_counts(*, project: Project) -> dict[str, int]:
    """Documents per split, and those not assigned yet (the reserve the test set will come from)."""
    counts = dict.fromkeys(SPLIT_KEYS, 0)
    rows = SplitAssignment.objects.filter(project=project).values("split").annotate(n=Count("id"))
    for row in rows:
        counts[row["split"]] = row["n"]
    total = Document.objects.filter(project=project).count()
    counts[UNASSIGNED] = total - sum(counts[key] for key in SPLIT_KEYS if key != UNASSIGNED)
    return counts


def split_record_moves(
    *,
    project: Project,
    action: str,
    phase: str,
    moves: Iterable[tuple[Document, str, str]],
    counts_before: dict[str, int],
    actor: AbstractBaseUser | None,
    reason: str = "",
    seed: int | None = None,
    request_id: str = "",
    run: ExperimentRun | None = None,
) -> list[SplitEvent]:
    """One event per moved document, then one for the project; each carries the counts just after it.

    `phase` is the phase the project was in when the change was made (before a transition moves it).
    A document's `from_split` is blank when it was unassigned. The project event (no document) closes the
    transition, so a project's split history is its project events read in order.
    """
    counts = dict(counts_before)
    actor = actor if actor is not None and actor.is_authenticated else None
    common = {
        "project": project,
        "action": action,
        "phase": phase,
        "actor": actor,
        "reason": reason,
        "seed": seed,
        "request_id": request_id,
        "run": run,
    }
    events = []
    for document, from_split, to_split in moves:
        counts[from_split or UNASSIGNED] -= 1
        counts[to_split or UNASSIGNED] += 1
        events.append(
            SplitEvent(
                document=document,
                from_split=from_split,
                to_split=to_split,
                counts_after=dict(counts),
                **common,
            )
        )
    events.append(SplitEvent(document=None, counts_after=dict(counts), **common))
    return SplitEvent.objects.bulk_create(events)
