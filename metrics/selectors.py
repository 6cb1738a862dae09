"""Reads of scorings, metric values and comparison rows. Callers have authorised the run's project."""

from __future__ import annotations

from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery

from annotations.models import Attribute, Document, GoldVersion
from experiments.models import ExperimentRun, RunSource
from experiments.splits import split_exclude_hidden
from metrics.models import ComparisonRow, MetricValue, Scoring
from metrics.services.errors import ScoringNotFound
from metrics.services.human_ceiling import gold_status, human_ceiling


def scoring_get(*, run: ExperimentRun, number: int | None = None, with_report: bool = False) -> Scoring:
    """The run's latest complete scoring, or the one numbered `number` (ScoringNotFound, 404).

    The report and the list of scored documents (megabytes for a large span run) are loaded only when
    asked for: a page of comparison rows needs neither.
    """
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
    """Scorings annotated, in the same query, with what their gold status and human ceiling need:
    the project's newest gold version of the scoring's kind (`latest_gold_number`, `latest_gold_counts`),
    the project's strategy and phase, and whether another human run of the project was scored on the
    same version (`has_human_scorings`)."""
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


def human_ceiling_for_run(*, run: ExperimentRun, scoring: Scoring | None = None) -> dict | None:
    """`metrics.services.human_ceiling.human_ceiling` of `run`'s scoring (its latest unless given)."""
    return human_ceiling(run, scoring or scoring_get(run=run))


def gold_status_for_scoring(*, scoring: Scoring) -> dict:
    """`{"scored_on", "latest", "is_latest", "text"}`: e.g. "scored on gold v3; v4 has 12 more spans"."""
    return gold_status(scoring)
