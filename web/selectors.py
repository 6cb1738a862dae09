"""Reads the pages need beyond one API selector: several runs at once, and one document of a run.

Each starts from what the API's selectors already authorised (a project from `project_get_for_user`,
a run from `run_get_for_user`) and filters held-back documents with the split rules, as the API does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.http import Http404

from annotations.models import Attribute, Document, GoldSpan, GoldVersion, Project
from annotations.selectors import project_list_for_user
from experiments.models import ExperimentRun, PredictedSpan, PredictedValue, RunDocument
from experiments.splits import split_hidden_document_ids, split_hides_documents
from metrics.models import MetricValue, Scoring
from metrics.selectors import comparison_row_list, with_gold_context
from web.headlines import GIVEN_PREDICTION, MISSING, HeadlineChoice


def project_summaries(*, user: AbstractBaseUser) -> QuerySet[Project]:
    """The user's projects with their number of documents, current gold version and latest run.

    One query: each figure is a correlated subquery, so no join multiplies rows.
    """
    documents = (
        Document.objects.filter(project=OuterRef("pk")).order_by().values("project").annotate(n=Count("pk"))
    )
    newest_gold = GoldVersion.objects.filter(project=OuterRef("pk")).order_by("-number")
    latest_run = ExperimentRun.objects.filter(project=OuterRef("pk")).order_by("-id")
    return (
        project_list_for_user(user)
        .annotate(
            document_count=Subquery(documents.values("n")),
            gold_number=Subquery(newest_gold.values("number")[:1]),
            gold_kind=Subquery(newest_gold.values("kind")[:1]),
            latest_run_id=Subquery(latest_run.values("id")[:1]),
            latest_run_name=Subquery(latest_run.values("name")[:1]),
            latest_run_status=Subquery(latest_run.values("status")[:1]),
            latest_run_kind=Subquery(latest_run.values("kind")[:1]),
        )
        .order_by("name")
    )


def project_kind(*, project: Project) -> str:
    """ "spans" or "attributes": what the project's gold (or, before any gold, its runs) holds."""
    gold = (
        GoldVersion.objects.filter(project=project).order_by("-number").values_list("kind", flat=True).first()
    )
    if gold:
        return gold
    run_kind = (
        ExperimentRun.objects.filter(project=project).order_by("-id").values_list("kind", flat=True).first()
    )
    if run_kind:
        return run_kind
    return "attributes" if project.attributes.exists() else "spans"


def latest_scorings(*, runs: Iterable[ExperimentRun]) -> dict[int, Scoring]:
    """run id -> its latest complete scoring (report and document list not loaded), in one query."""
    run_ids = [run.pk for run in runs]
    # With what their gold status and human ceiling need, in the same query (`with_gold_context`).
    scorings = (
        with_gold_context(Scoring.objects.filter(run_id__in=run_ids, is_complete=True))
        .defer("report", "document_ids")
        .select_related("gold_version")
        .order_by("run_id", "-number")
    )
    latest: dict[int, Scoring] = {}
    for scoring in scorings:
        latest.setdefault(scoring.run_id, scoring)
    return latest


def headline_values(
    *, scorings: Iterable[Scoring], choice: HeadlineChoice
) -> dict[int, dict[tuple[str, str, str], MetricValue]]:
    """scoring id -> the values a headline reads (the metric, its `_given_prediction`, the missing count)."""
    names = [choice.name, choice.name + GIVEN_PREDICTION, MISSING]
    values = MetricValue.objects.filter(
        scoring__in=[scoring.pk for scoring in scorings],
        scope=choice.scope,
        scope_key=choice.scope_key,
        name__in=names,
    )
    found: dict[int, dict[tuple[str, str, str], MetricValue]] = {}
    for value in values:
        found.setdefault(value.scoring_id, {})[(value.scope, value.scope_key, value.name)] = value
    return found


def runs_with_config(*, project: Project, config_hash: str) -> QuerySet[ExperimentRun]:
    return ExperimentRun.objects.filter(project=project, config_hash=config_hash).order_by("id")


def match_status_counts(*, run: ExperimentRun, scoring: Scoring) -> dict[str, dict[str, int]]:
    """attribute_id -> {match_status: rows} over the scoring's comparison rows that the user may see.

    BOOL rows have no match status; they are counted as "correct (bool)" or "wrong (bool)". A scoring's
    rows never change (a rescore makes a new scoring), so while no document is held back the counts
    are cached per scoring: the GROUP BY reads every row (200,000 in bench/api, about 135 ms).
    """
    hides = split_hides_documents(project=run.project)
    key = f"web:match-status-counts:{scoring.pk}"
    if not hides:
        cached = cache.get(key)
        if cached is not None:
            return cached
    attribute_ids = dict(
        Attribute.objects.filter(project_id=run.project_id).values_list("pk", "attribute_id")
    )
    grouped = (
        comparison_row_list(run=run, scoring=scoring)
        .order_by()
        .values_list("attribute_id", "match_status", "is_correct")
        .annotate(n=Count("id"))
    )
    counts: dict[str, dict[str, int]] = {}
    for attribute_pk, status, is_correct, n in grouped:
        if not status:
            status = "correct (bool)" if is_correct else "wrong (bool)"
        bucket = counts.setdefault(attribute_ids.get(attribute_pk, ""), {})
        bucket[status] = bucket.get(status, 0) + n
    if not hides:
        cache.set(key, counts, timeout=None)
    return counts


def leaked_document_ids(*, scoring: Scoring) -> list[str]:
    """The documents where a gold identifier kept a character no prediction covered (`any_char`)."""
    report = Scoring.objects.filter(pk=scoring.pk).values_list("report", flat=True).get() or {}
    return list(report.get("leakage", {}).get("any_char", {}).get("leaked_document_ids", []))


def document_of_run(*, run: ExperimentRun, external_id: str) -> Document:
    """The run's project's document `external_id`; a held-back document is as unknown as a missing one."""
    document = Document.objects.filter(project_id=run.project_id, external_id=external_id).first()
    if document is None or document.pk in split_hidden_document_ids(project=run.project):
        raise Http404("No such document.")
    return document


@dataclass(frozen=True)
class SpanRow:
    start: int
    end: int
    entity_type: str
    label: str


def gold_spans_of_document(*, gold_version: GoldVersion, document: Document) -> list[SpanRow]:
    spans = GoldSpan.objects.filter(gold_version=gold_version, document=document).order_by("start", "end")
    return [SpanRow(*row) for row in spans.values_list("start", "end", "entity_type", "label")]


def run_document(*, run: ExperimentRun, document: Document) -> RunDocument | None:
    return RunDocument.objects.filter(run=run, document=document).first()


def predicted_spans_of_document(*, run_document: RunDocument | None) -> list[SpanRow]:
    if run_document is None:
        return []
    spans = PredictedSpan.objects.filter(run_document=run_document).order_by("start", "end")
    return [SpanRow(*row) for row in spans.values_list("start", "end", "entity_type", "label")]


def predicted_values_of_document(*, run_document: RunDocument | None) -> dict[str, PredictedValue]:
    if run_document is None:
        return {}
    values = PredictedValue.objects.filter(run_document=run_document).select_related("attribute")
    return {value.attribute.attribute_id: value for value in values.order_by("position")}


@dataclass(frozen=True)
class GoldVersionRow:
    version: GoldVersion
    previous: int | None
    """The number of the version of the same kind before it (what its diff is taken from)."""


def gold_versions_with_previous(*, versions: Iterable[GoldVersion]) -> list[GoldVersionRow]:
    """`versions` (newest first) each with the number of the version of its kind just before it."""
    versions = list(versions)
    rows = []
    for index, version in enumerate(versions):
        older = next((other for other in versions[index + 1 :] if other.kind == version.kind), None)
        rows.append(GoldVersionRow(version, None if older is None else older.number))
    return rows
