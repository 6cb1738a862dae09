"""Reads of scorings, metric values and comparison rows. Callers have authorised the run's project."""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery

from annotations.models import (
    Attribute,
    Document,
    EvaluationStrategy,
    GoldAttributeValue,
    GoldKind,
    GoldSpan,
    GoldVersion,
    Project,
    ProjectPhase,
)
from experiments.models import ExperimentRun, RunSource
from experiments.splits import split_exclude_hidden
from metrics.models import ComparisonRow, MetricValue, Scoring
from metrics.services.errors import ScoringNotFound


def scoring_get(*, run: ExperimentRun, number: int | None = None, with_report: bool = False) -> Scoring:
    """The run's latest complete scoring, or the one numbered `number` (ScoringNotFound, 404); the
    report and the scored documents (megabytes for a large span run) only when asked for."""
    scorings = scoring_list(run=run)
    if not with_report:
        scorings = scorings.defer("report", "document_ids")
    scoring = scorings.filter(number=number).first() if number is not None else scorings.first()
    if scoring is None:
        which = f"scoring {number}" if number is not None else "a scoring"
        raise ScoringNotFound(
            f"Run {run.pk} has no {which} yet (status {run.status}).",
            details={"run": run.pk, "status": run.status},
        )
    return scoring


def with_gold_context(scorings: QuerySet[Scoring]) -> QuerySet[Scoring]:
    """Scorings annotated, in the same query, with what their gold status (`gold_status_for_scoring`)
    and human ceiling (`has_human_scorings`) need."""
    latest = GoldVersion.objects.filter(
        project_id=OuterRef("gold_version__project_id"), kind=OuterRef("gold_version__kind")
    ).order_by("-number")
    humans = Scoring.objects.filter(
        gold_version_id=OuterRef("gold_version_id"), is_complete=True, run__source=RunSource.HUMAN
    ).exclude(run_id=OuterRef("run_id"))
    return scorings.annotate(
        latest_gold_number=Subquery(latest.values("number")[:1]),
        latest_gold_counts=Subquery(latest.values("counts")[:1]),
        project_strategy=F("gold_version__project__strategy"),
        project_phase=F("gold_version__project__phase"),
        has_human_scorings=Exists(humans),
    )


def scoring_list(*, run: ExperimentRun) -> QuerySet[Scoring]:
    return with_gold_context(
        Scoring.objects.filter(run=run, is_complete=True).select_related("gold_version")
    ).order_by("-number")


def metric_value_list(*, scoring: Scoring) -> QuerySet[MetricValue]:
    return MetricValue.objects.filter(scoring=scoring).order_by("scope", "scope_key", "name")


def _attribute_pks(*, project_id: int, id_or_label: str) -> list[int]:
    """The attribute whose id is `id_or_label`, or else those whose label it is."""
    matches = list(
        Attribute.objects.filter(project_id=project_id)
        .filter(Q(attribute_id=id_or_label) | Q(label=id_or_label))
        .values_list("pk", "attribute_id")
    )
    by_id = [pk for pk, attribute_id in matches if attribute_id == id_or_label]
    return by_id or [pk for pk, _ in matches]


def comparison_row_list(
    *,
    run: ExperimentRun,
    scoring: Scoring,
    attribute: str | None = None,
    match_status: str | None = None,
    document: str | None = None,
    attribute_presence: bool | None = None,
    entity_type: str | None = None,
) -> QuerySet[ComparisonRow]:
    """The scoring's rows, filtered (`attribute` by id or label); attribute and document are resolved to
    keys first, so the page query runs on the (scoring, attribute, match_status, id) and (scoring,
    document, id) indexes."""
    rows = ComparisonRow.objects.filter(scoring=scoring)
    if attribute:
        rows = rows.filter(attribute_id__in=_attribute_pks(project_id=run.project_id, id_or_label=attribute))
    if match_status is not None:
        rows = rows.filter(match_status=match_status)
    if document:
        document_pk = (
            Document.objects.filter(project_id=run.project_id, external_id=document)
            .values_list("pk", flat=True)
            .first()
        )
        rows = rows.filter(document_id=document_pk) if document_pk is not None else rows.none()
    if attribute_presence is not None:
        rows = rows.filter(attribute_presence=attribute_presence)
    if entity_type:
        rows = rows.filter(entity_type=entity_type)
    return split_exclude_hidden(rows, project=run.project)


def _change(kind: str, difference: int) -> str:
    """ "12 more spans", "1 fewer value", "as many spans (changed in place)"."""
    noun = "span" if kind == GoldKind.SPANS else "value"
    if difference == 0:
        return f"as many {noun}s (changed in place)"
    count = abs(difference)
    return f"{count} {'more' if difference > 0 else 'fewer'} {noun}{'s' if count != 1 else ''}"


def _rows(counts: dict[str, Any]) -> int:
    return int(counts.get("rows_imported", 0)) + int(counts.get("rows_carried_over", 0))


def _visible_rows(version: GoldVersion) -> int:
    model = GoldSpan if version.kind == GoldKind.SPANS else GoldAttributeValue
    return split_exclude_hidden(
        model.objects.filter(gold_version=version), project=Project.objects.get(pk=version.project_id)
    ).count()


def gold_status_for_scoring(*, scoring: Scoring) -> dict[str, Any]:
    """Whether `scoring` (read `with_gold_context`) used the newest gold of its kind, and if not what
    changed since (docs/agreement.md, "The history of the gold")."""
    used, latest_number = scoring.gold_version, scoring.latest_gold_number
    status: dict[str, Any] = {
        "scored_on": used.number,
        "latest": latest_number,
        "is_latest": latest_number == used.number,
    }
    if status["is_latest"]:
        status["text"] = f"scored on gold v{used.number}, the latest"
        return status
    latest_counts, strategy, phase = (
        scoring.latest_gold_counts,
        scoring.project_strategy,
        scoring.project_phase,
    )
    if latest_counts is not None and (strategy == EvaluationStrategy.NULL or phase == ProjectPhase.FINISHED):
        # Nothing is held back: the versions' own counts say it, without counting rows again.
        difference = _rows(latest_counts) - _rows(used.counts or {})
    else:
        latest = GoldVersion.objects.get(project_id=used.project_id, kind=used.kind, number=latest_number)
        # Counted without the held-back documents: their gold is no one's to learn about, not even its size.
        difference = _visible_rows(latest) - _visible_rows(used)
    change = _change(used.kind, difference)
    status["rows_difference"] = difference
    status["text"] = f"scored on gold v{used.number}; v{latest_number} has {change}"
    return status
