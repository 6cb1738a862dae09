"""Comparing two scored runs of one project on one gold version: metric deltas, changed rows and
`paired`, the paired tests of the offline `manage.py compare_runs` (`metrics.pipeline.run_pair_report`).

For `paired` the engines' inputs are scored again by the scoring's own plan (`_scored_again`). Attribute rows are recomputed
rather than read back from `ComparisonRow.columns`: those are the export's presentation (JSON, no
`gold_is_valid`, coerced values through JSON), while the statistics need the typed rows; recomputing
is the very call that scored the run, so the numbers are those of scoring and of the offline command.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from annotations.models import Attribute, Document
from experiments.models import DocumentStatus, ExperimentRun, RunDocument, RunKind
from metrics.engine.attributes.types import ComparisonRow as EngineRow
from metrics.engine.attributes.types import EvaluationSettings
from metrics.engine.spans.score_table import SpanScores
from metrics.models import ComparisonRow, MetricValue, Scoring
from metrics.pipeline.attributes import merge_attribute_partials
from metrics.pipeline.intervals import DEFAULT_INTERVALS, IntervalSettings
from metrics.pipeline.run_pair_report import RunSide, paired_report
from metrics.pipeline.spans import merge_span_partials
from metrics.services.attribute_scoring import attribute_chunk_plan, attribute_settings
from metrics.services.errors import ComparisonNotPossible
from metrics.services.scoring import scoring_partials
from metrics.services.span_scoring import span_scoring_plan

CHANGED_ROWS_SHOWN = 1000


def _row_statuses(scoring: Scoring, kind: str) -> dict[tuple, str]:
    """The match status of every row of a scoring, by key: (document pk, attribute pk), or (document
    pk, side, start, end, entity type) for spans."""
    if kind == RunKind.ATTRIBUTES:
        keys = ("document_id", "attribute_id")
    else:
        keys = ("document_id", "columns__side", "columns__start", "columns__end", "entity_type")
    rows = ComparisonRow.objects.filter(scoring=scoring).values_list(*keys, "match_status")
    return {tuple(key): status for *key, status in rows.iterator(chunk_size=10000)}


def runs_compare(
    *,
    run_a: ExperimentRun,
    scoring_a: Scoring,
    run_b: ExperimentRun,
    scoring_b: Scoring,
    changed_limit: int = CHANGED_ROWS_SHOWN,
    paired: IntervalSettings | None = DEFAULT_INTERVALS,
) -> dict[str, Any]:
    """Deltas b - a of every metric both scorings have, the rows whose match status (or span outcome)
    changed and, unless `paired` is None, the paired tests with those interval settings (resamples >= 1).
    Raises ComparisonNotPossible when the runs do not share project, kind and gold version."""
    _check_comparable(run_a=run_a, scoring_a=scoring_a, run_b=run_b, scoring_b=scoring_b)

    def describe(run: ExperimentRun, scoring: Scoring) -> dict[str, Any]:
        return {"run": run.pk, "name": run.name, "scoring": scoring.number, "config_hash": run.config_hash}

    changed, changed_total = _changed_rows(run_a.kind, scoring_a, scoring_b, limit=changed_limit)
    return {
        "kind": run_a.kind,
        "gold_version": scoring_a.gold_version.number,
        "a": describe(run_a, scoring_a),
        "b": describe(run_b, scoring_b),
        "metrics": _metric_deltas(scoring_a, scoring_b),
        "changed_rows": changed,
        "changed_rows_total": changed_total,
        "changed_rows_truncated": changed_total > len(changed),
        "paired": None
        if paired is None
        else scorings_paired_report(
            run_a=run_a, scoring_a=scoring_a, run_b=run_b, scoring_b=scoring_b, settings=paired
        ),
    }


def _check_comparable(
    *, run_a: ExperimentRun, scoring_a: Scoring, run_b: ExperimentRun, scoring_b: Scoring
) -> None:
    if run_a.project_id != run_b.project_id:
        raise ComparisonNotPossible("The two runs belong to different projects.", code="different_projects")
    if run_a.kind != run_b.kind:
        raise ComparisonNotPossible(
            f"Run {run_a.pk} is a {run_a.kind} run and run {run_b.pk} a {run_b.kind} run.",
            code="different_kinds",
        )
    if scoring_a.gold_version_id != scoring_b.gold_version_id:
        raise ComparisonNotPossible(
            f"Run {run_a.pk} was scored on gold version {scoring_a.gold_version.number} and run {run_b.pk} on "
            f"{scoring_b.gold_version.number}: rescore one of them on the same gold first.",
            details={
                "gold_version_a": scoring_a.gold_version.number,
                "gold_version_b": scoring_b.gold_version.number,
            },
            code="different_gold_versions",
        )


def _metric_deltas(scoring_a: Scoring, scoring_b: Scoring) -> list[dict[str, Any]]:
    """Every metric both scorings have, in (scope, scope key, name) order, with its delta b - a."""
    values_a = {
        (v.scope, v.scope_key, v.name): v
        for v in MetricValue.objects.filter(scoring=scoring_a).order_by("scope", "scope_key", "name")
    }
    values_b = {(v.scope, v.scope_key, v.name): v for v in MetricValue.objects.filter(scoring=scoring_b)}
    metrics = []
    for key, a in values_a.items():
        b = values_b.get(key)
        if b is None:
            continue
        delta = None if a.value is None or b.value is None else b.value - a.value
        metrics.append(
            {
                "scope": key[0],
                "scope_key": key[1],
                "name": key[2],
                "a": a.value,
                "b": b.value,
                "delta": delta,
                "n_a": a.n,
                "n_b": b.n,
            }
        )
    return metrics


def _changed_rows(kind: str, scoring_a: Scoring, scoring_b: Scoring, *, limit: int) -> tuple[list[dict], int]:
    """The first `limit` rows whose match status differs between the scorings, in key order, and how
    many differ in all."""
    rows_a = _row_statuses(scoring_a, kind)
    rows_b = _row_statuses(scoring_b, kind)
    changed_keys = sorted(
        (key for key in rows_a.keys() | rows_b.keys() if rows_a.get(key) != rows_b.get(key)),
        key=lambda key: tuple("" if part is None else part for part in key),
    )
    shown = changed_keys[:limit]
    external_ids = dict(
        Document.objects.filter(pk__in={key[0] for key in shown}).values_list("pk", "external_id")
    )
    changed = []
    if kind == RunKind.ATTRIBUTES:
        attribute_pks = {key[1] for key in shown} - {None}
        attribute_ids = dict(Attribute.objects.filter(pk__in=attribute_pks).values_list("pk", "attribute_id"))
    for key in shown:
        entry: dict[str, Any] = {"document_id": external_ids[key[0]]}
        if kind == RunKind.ATTRIBUTES:
            entry["attribute_id"] = attribute_ids.get(key[1])
        else:
            entry.update(side=key[1], start=key[2], end=key[3], entity_type=key[4])
        entry["a"], entry["b"] = rows_a.get(key), rows_b.get(key)
        changed.append(entry)
    return changed, len(changed_keys)


def scorings_paired_report(
    *,
    run_a: ExperimentRun,
    scoring_a: Scoring,
    run_b: ExperimentRun,
    scoring_b: Scoring,
    settings: IntervalSettings = DEFAULT_INTERVALS,
) -> dict[str, Any]:
    """The report of `metrics.pipeline.run_pair_report` for two scorings on one gold version (checked by the
    caller)."""
    scores_a, predicted_a = _scored_again(run_a, scoring_a)
    scores_b, predicted_b = _scored_again(run_b, scoring_b)
    return paired_report(
        run_a.kind,
        scores_a,
        scores_b,
        predicted_a=predicted_a,
        predicted_b=predicted_b,
        settings=settings,
        a=RunSide(f"run {run_a.pk} ({run_a.name})", run_a.source),
        b=RunSide(f"run {run_b.pk} ({run_b.name})", run_b.source),
    )


def _scored_again(run: ExperimentRun, scoring: Scoring) -> tuple[SpanScores | list[EngineRow], set[str]]:
    """What the scoring scored, again, through its plan and chunks (`scoring_partials`), on the
    scoring's documents and recorded settings: a span run's scores, or an attribute run's rows. And the
    documents predicted: the scored ones the run posted (and, of an attribute run, did not mark failed,
    as the offline command counts a prediction file's documents)."""
    # Read alone: the selectors defer the list.
    document_ids = Scoring.objects.filter(pk=scoring.pk).values_list("document_ids", flat=True).get()
    recorded = scoring.settings or {}
    gold_version = scoring.gold_version
    posted = RunDocument.objects.filter(run=run)
    if run.kind == RunKind.SPANS:
        restrict = bool(recorded.get("restrict_to_gt_types", False))
        plan = span_scoring_plan(
            run=run, gold_version=gold_version, document_ids=set(document_ids), restrict=restrict, rows=False
        )
        scored, _ = merge_span_partials(
            scoring_partials(plan, run=run, gold_version=gold_version), len(plan.document_ids)
        )
    else:
        plan = attribute_chunk_plan(
            run=run, document_ids=document_ids, settings=_evaluation_settings(run, recorded)
        )
        scored = merge_attribute_partials(scoring_partials(plan, run=run, gold_version=gold_version)).rows
        posted = posted.exclude(status=DocumentStatus.FAILED)
    wanted = set(document_ids)
    predicted = posted.values_list("document__external_id", flat=True).iterator(chunk_size=10000)
    return scored, {document_id for document_id in predicted if document_id in wanted}


def _evaluation_settings(run: ExperimentRun, recorded: dict[str, Any]) -> EvaluationSettings:
    """The settings a scoring recorded; any it did not record, as scoring would resolve them now."""
    if "custom_metrics" in recorded:
        recorded = {**recorded, "custom_metrics": tuple(recorded["custom_metrics"])}
    known = ("edit_distance_match_threshold", "number_format", "float_relative_tolerance", "custom_metrics")
    if all(name in recorded for name in known):
        return EvaluationSettings(**{name: recorded[name] for name in known})
    return replace(attribute_settings(run), **{name: recorded[name] for name in known if name in recorded})
