"""Comparing two scored runs of one project on one gold version: metric deltas, changed rows and
`paired`, the paired tests of the offline `manage.py compare_runs` (`metrics.pipeline.run_pair_report`).

For `paired` the engines' inputs are rebuilt from the stored gold and predictions with the scoring
services' own converters (`metrics.services.engine_inputs`), on the scoring's gold version, scored
documents and recorded settings, through the one scoring pipeline. Attribute rows are recomputed
rather than read back from `ComparisonRow.columns`: those are the export's presentation (JSON, no
`gold_is_valid`, coerced values through JSON), while the statistics need the typed rows; recomputing
is the very call that scored the run, so the numbers are those of scoring and of the offline command.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from annotations.importers.span_types import SpanDocument
from annotations.models import Attribute, Document
from annotations.selectors import attribute_specs, gold_attribute_documents, gold_span_documents
from experiments.models import DocumentStatus, ExperimentRun, RunKind
from metrics.engine.attributes.types import AttributeSpec, EvaluationSettings, GoldDocument
from metrics.engine.attributes.types import ComparisonRow as EngineRow
from metrics.engine.spans import DocumentSpans, SpanScores
from metrics.models import ComparisonRow, MetricValue, Scoring
from metrics.pipeline.attributes import AttributeChunk, compare_attribute_chunk, merge_attribute_partials
from metrics.pipeline.executors import InProcess
from metrics.pipeline.intervals import DEFAULT_INTERVALS, IntervalSettings
from metrics.pipeline.run_pair_report import RunSide, paired_report_attributes, paired_report_spans
from metrics.pipeline.span_evaluation import pair_span_documents
from metrics.pipeline.spans import score_span_documents
from metrics.services.attribute_scoring import attribute_settings
from metrics.services.engine_inputs import (
    predicted_span_documents,
    prediction_documents,
    run_attribute_specs,
    run_document_index,
)
from metrics.services.errors import ComparisonNotPossible
from metrics.services.scoring import DEFAULT_CHUNK_DOCUMENTS

CHANGED_ROWS_SHOWN = 1000
Document_ = TypeVar("Document_", SpanDocument, GoldDocument)


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


def _scored_documents(scoring: Scoring, gold: list[Document_]) -> tuple[list[Document_], set[str]]:
    """The gold documents the scoring scored (a split stage scores a subset of the gold), and their
    ids; read alone, as the selectors defer the list."""
    wanted = set(Scoring.objects.filter(pk=scoring.pk).values_list("document_ids", flat=True).get())
    return [document for document in gold if document.document_id in wanted], wanted


def scorings_paired_report(
    *,
    run_a: ExperimentRun,
    scoring_a: Scoring,
    run_b: ExperimentRun,
    scoring_b: Scoring,
    settings: IntervalSettings = DEFAULT_INTERVALS,
) -> dict[str, Any]:
    """The report of `metrics.pipeline.run_pair_report` for two scorings on one gold version (checked by the
    caller). The gold is read once for both runs, then each run's predictions per chunk of documents:
    a fixed number of queries per chunk (`DEFAULT_CHUNK_DOCUMENTS`), none per document."""
    if run_a.kind == RunKind.SPANS:
        gold = gold_span_documents(gold_version=scoring_a.gold_version)
        score, report = partial(_span_scores, gold=gold), paired_report_spans
    else:
        gold = gold_attribute_documents(gold_version=scoring_a.gold_version)
        specs = attribute_specs(project=run_a.project)
        score, report = partial(_attribute_rows, gold=gold, specs=specs), paired_report_attributes
    scores_a, predicted_a = score(run_a, scoring_a)
    scores_b, predicted_b = score(run_b, scoring_b)
    return report(
        scores_a,
        scores_b,
        predicted_a=predicted_a,
        predicted_b=predicted_b,
        settings=settings,
        a=RunSide(f"run {run_a.pk} ({run_a.name})", run_a.source),
        b=RunSide(f"run {run_b.pk} ({run_b.name})", run_b.source),
    )


def _span_scores(
    run: ExperimentRun, scoring: Scoring, gold: list[SpanDocument]
) -> tuple[SpanScores, set[str]]:
    """As `score_run` scores a span run: the scoring's documents, paired with what the run posted, with the
    scoring's `restrict_to_gt_types`, through the span pipeline (chunks, executor, merge). Predicted:
    the scored documents the run posted."""
    documents, wanted = _scored_documents(scoring, gold)
    allowed = (
        frozenset(span.entity_type for document in documents for span in document.spans)
        if (scoring.settings or {}).get("restrict_to_gt_types", False)
        else None
    )
    posted = run_document_index(run)

    def paired() -> Iterator[tuple[int, DocumentSpans]]:
        for start, chunk, run_documents in _chunks(documents, posted):
            predicted = predicted_span_documents(run_documents)
            yield from enumerate(pair_span_documents(chunk, predicted), start)

    scores = score_span_documents(paired(), executor=InProcess(), allowed_predicted_types=allowed)
    return scores, {document_id for document_id in posted if document_id in wanted}


def _attribute_rows(
    run: ExperimentRun, scoring: Scoring, gold: list[GoldDocument], specs: list[AttributeSpec]
) -> tuple[list[EngineRow], set[str]]:
    """As `score_run` scores an attribute run: the scoring's documents through the attribute pipeline (chunks,
    executor, merge) with the run's prompts and the settings the scoring recorded. Predicted: the
    scored documents the run posted and did not mark failed (as the offline command counts a
    prediction file's documents)."""
    documents, _ = _scored_documents(scoring, gold)
    posted = run_document_index(run)
    attributes = run_attribute_specs(specs, run.prompts)
    settings = _evaluation_settings(run, scoring)
    predicted: set[str] = set()

    def chunks() -> Iterator[AttributeChunk]:
        for _, chunk, run_documents in _chunks(documents, posted):
            predictions = prediction_documents(run_documents)
            predicted.update(
                document_id
                for document_id, document in predictions.items()
                if document.status != DocumentStatus.FAILED
            )
            yield AttributeChunk(str(run.pk), attributes, settings, chunk, predictions)

    merged = merge_attribute_partials(InProcess().map(compare_attribute_chunk, chunks()))
    return merged.rows, predicted


def _chunks(
    documents: list[Document_], posted: dict[str, Any]
) -> Iterator[tuple[int, list[Document_], list]]:
    """The chunks of the pipeline: the position of each one's first document, its documents, and the
    run's rows of them. Predictions are read per chunk, as scoring reads them, in a few queries per
    chunk and no SQL statement with more document keys than a chunk (SQLite limits its variables)."""
    for start in range(0, len(documents), DEFAULT_CHUNK_DOCUMENTS):
        chunk = documents[start : start + DEFAULT_CHUNK_DOCUMENTS]
        yield start, chunk, [posted[d.document_id] for d in chunk if d.document_id in posted]


def _evaluation_settings(run: ExperimentRun, scoring: Scoring) -> EvaluationSettings:
    """The settings the scoring recorded; any it did not record, as scoring would resolve them now."""
    recorded = scoring.settings or {}
    if "custom_metrics" in recorded:
        recorded = {**recorded, "custom_metrics": tuple(recorded["custom_metrics"])}
    known = ("edit_distance_match_threshold", "number_format", "float_relative_tolerance", "custom_metrics")
    if all(name in recorded for name in known):
        return EvaluationSettings(**{name: recorded[name] for name in known})
    return replace(attribute_settings(run), **{name: recorded[name] for name in known if name in recorded})
