"""Scoring an attribute run in chunks of documents: rows per chunk, then metrics over all rows.

The same engine calls as `evaluate_extraction` (the offline command's), split by documents:
`compare_documents` on each chunk (its rows only depend on the chunk's documents), then
`attribute_result` per attribute over every row, then `metrics_report`, the body of metrics.json.
"""

from __future__ import annotations

from typing import Any

from annotations.models import GoldVersion
from annotations.selectors import attribute_specs, gold_attribute_documents
from experiments.models import DocumentStatus, ExperimentRun, RunDocument
from metrics.artefacts import metrics_report
from metrics.engine.attributes import attribute_result, compare_documents, resolve_custom_metrics
from metrics.engine.attributes.comparison import (
    no_context_warning,
    skipped_attribute_ids,
    unscored_document_ids,
)
from metrics.engine.attributes.types import (
    COMPARISON_COLUMNS,
    ComparisonRow,
    EvaluationSettings,
    ExtractionEvaluation,
)
from metrics.extraction_evaluation import ExtractionConfig, resolve_settings
from metrics.intervals import extraction_intervals
from metrics.models import MetricScope
from metrics.services.chunk_pool import chunk_runner
from metrics.services.engine_inputs import prediction_documents, run_attribute_specs, run_document_index
from metrics.services.interval_settings import run_interval_settings
from metrics.services.results import ComparisonRowData, MetricValueData, ProgressCallback, ScoringResult


def attribute_settings(run: ExperimentRun) -> EvaluationSettings:
    """Effective settings: the run's configuration over the project's settings over the defaults."""
    project_settings = run.project.settings or {}
    values = {
        key: project_settings[key]
        for key in ("edit_distance_match_threshold", "number_format", "custom_evaluation_metrics")
        if key in project_settings
    }
    values.update(run.config or {})
    return resolve_settings(ExtractionConfig(values=values, file="run configuration"))


def score_attribute_run(
    *,
    run: ExperimentRun,
    gold_version: GoldVersion,
    document_ids: set[str] | None,
    chunk_size: int,
    progress: ProgressCallback,
) -> ScoringResult:
    """Score `run` against `gold_version`, on the documents of `document_ids` (None: all of the gold)."""
    settings = attribute_settings(run)
    custom = resolve_custom_metrics(settings.custom_metrics)
    specs = run_attribute_specs(attribute_specs(project=run.project), run.prompts)
    gold = [
        document
        for document in gold_attribute_documents(gold_version=gold_version)
        if document_ids is None or document.document_id in document_ids
    ]
    posted = run_document_index(run)
    run_id = str(run.pk)
    rows: list[ComparisonRow] = []
    warnings: list[str] = []
    progress(0, len(gold))

    chunks_done = [0]

    def collect(result: tuple[list[ComparisonRow], list[str]]) -> None:
        # Results come back in chunk order, so the k-th result ends at document k * chunk_size.
        rows.extend(result[0])
        warnings.extend(result[1])
        chunks_done[0] += 1
        progress(min(chunks_done[0] * chunk_size, len(gold)), len(gold))

    with chunk_runner(collect) as runner:
        for start in range(0, len(gold), chunk_size):
            chunk = gold[start : start + chunk_size]
            predictions = prediction_documents(
                [posted[d.document_id] for d in chunk if d.document_id in posted]
            )
            runner.submit(
                compare_documents,
                run_id=run_id,
                attributes=specs,
                gold_documents=chunk,
                predictions=predictions,
                settings=settings,
            )

    scored = [spec for spec in specs if spec.is_scored]
    by_attribute: dict[str, list[ComparisonRow]] = {spec.attribute_id: [] for spec in scored}
    for row in rows:
        by_attribute[row.attribute_id].append(row)
    evaluation = ExtractionEvaluation(
        run_id=run_id,
        attributes=[
            attribute_result(spec, by_attribute[spec.attribute_id], settings, custom_metrics=custom)
            for spec in scored
        ],
        rows=rows,
        warnings=warnings,
        unscored_documents=unscored_document_ids(gold, specs),
        skipped_attributes=skipped_attribute_ids(specs),
    )
    gold_ids = {document.document_id for document in gold}
    ignored = sorted(document_id for document_id in posted if document_id not in gold_ids)
    notes = []
    if evaluation.unscored_documents:
        notes.append(
            f"{len(evaluation.unscored_documents)} gold document(s) have no gold annotations and are not scored"
        )
    if ignored:
        notes.append(
            f"{len(ignored)} posted document(s) are not in gold version {gold_version.number} and are ignored"
        )
    without_context = set(
        RunDocument.objects.filter(run=run, status=DocumentStatus.OK, context__isnull=True).values_list(
            "document__external_id", flat=True
        )
    )
    notes += no_context_warning(
        [document.document_id for document in gold if document.document_id in without_context]
    )
    intervals = run_interval_settings(run.config)
    report = metrics_report(
        evaluation,
        settings.custom_metrics,
        intervals=extraction_intervals(evaluation, intervals),
        intervals_config=intervals.as_config(),
    )
    return ScoringResult(
        report=report,
        settings={
            "edit_distance_match_threshold": settings.edit_distance_match_threshold,
            "number_format": settings.number_format,
            "float_relative_tolerance": settings.float_relative_tolerance,
            "custom_metrics": list(settings.custom_metrics),
            "intervals": intervals.as_config(),
        },
        document_ids=[document.document_id for document in gold],
        metric_values=attribute_metric_values(report),
        rows=[_row_data(row) for row in rows],
        warnings=notes + warnings,
    )


def attribute_metric_values(report: dict[str, Any]) -> list[MetricValueData]:
    """metrics.json flattened: one value per attribute and count or metric, with how many items entered it.

    n: n_gold_instances for a metric; the predicted subset for `_given_prediction`; the stratum for
    `_given_good_source` / `_given_bad_source`; none for the counts themselves.
    """
    values = []
    for attribute in report["attributes"]:
        key = attribute["attribute_id"]
        counts = attribute["counts"]
        n_gold = counts.get("n_gold_instances")
        n_good = counts.get("n_good_source_instances")
        n_missing = counts.get("n_missing_predictions", 0)
        for name, value in counts.items():
            values.append(MetricValueData(MetricScope.ATTRIBUTE, key, name, value))
        intervals = attribute.get("intervals") or {}
        for name, value in attribute["metrics"].items():
            if name.endswith("_given_prediction"):
                n = None if n_gold is None else n_gold - n_missing
            elif name.endswith("_given_good_source"):
                n = n_good
            elif name.endswith("_given_bad_source"):
                n = None if n_gold is None or n_good is None else n_gold - n_good
            else:
                n = n_gold
            metric = MetricValueData(MetricScope.ATTRIBUTE, key, name, value, n)
            interval = intervals.get(name)
            if interval:
                metric.ci_low, metric.ci_high = interval.get("low"), interval.get("high")
                metric.ci = {k: interval.get(k) for k in ("level", "method", "resamples", "seed")}
            values.append(metric)
    return values


def _row_data(row: ComparisonRow) -> ComparisonRowData:
    columns = {name: getattr(row, name) for name in COMPARISON_COLUMNS}
    status = row.match_status
    columns["match_status"] = "" if status is None else status.value
    return ComparisonRowData(
        document_id=row.document_id,
        attribute_id=row.attribute_id,
        match_status=columns["match_status"],
        attribute_presence=row.attribute_presence,
        is_correct=row.is_correct,
        columns=columns,
    )
