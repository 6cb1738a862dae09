"""Scoring an attribute run in chunks of documents: rows per chunk (they depend on the chunk's documents
only), then metrics over all rows through `evaluation_from_columns`, the one builder of an
ExtractionEvaluation, offline and here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from annotations.models import GoldVersion
from annotations.selectors import attribute_specs
from annotations.selectors.gold import gold_attribute_documents
from experiments.models import DocumentStatus, ExperimentRun, RunDocument
from metrics.artefacts.metrics_files import metrics_report
from metrics.engine.attributes.custom_metrics import resolve_custom_metrics
from metrics.engine.attributes.evaluation import evaluation_from_columns
from metrics.engine.attributes.types import (
    COMPARISON_COLUMNS,
    AttributeSpec,
    ComparisonRow,
    EvaluationSettings,
)
from metrics.engine.uncertainty.attribute_metrics import attribute_document_counts
from metrics.models import MetricScope
from metrics.pipeline.attributes import (
    AttributeChunk,
    AttributePartial,
    compare_attribute_chunk,
    merge_attribute_partials,
)
from metrics.pipeline.extraction_evaluation import ExtractionConfig, resolve_settings
from metrics.pipeline.intervals import extraction_intervals
from metrics.services.engine_inputs import (
    prediction_documents,
    run_attribute_specs,
    run_document_index,
    run_document_pks,
)
from metrics.services.results import (
    ComparisonRowData,
    MetricValueData,
    ScoringResult,
    posted_documents_note,
    run_interval_settings,
)


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


@dataclass
class AttributeScoringPlan:
    """What every chunk of an attribute scoring shares: the documents in gold order, the schema with
    the run's prompts, and the effective settings."""

    document_ids: list[str]
    specs: list[AttributeSpec]
    settings: EvaluationSettings
    chunk_argument = None  # a chunk task plans its own documents (`attribute_chunk_plan`)

    def chunk_score(
        self, *, run: ExperimentRun, gold_version: GoldVersion, document_ids: list[str], first_position: int
    ) -> AttributePartial:
        """The partial result of a chunk of the plan's documents, read from the database."""
        gold = gold_attribute_documents(gold_version=gold_version, external_ids=document_ids)
        predictions = prediction_documents(run_document_pks(run=run, external_ids=document_ids))
        chunk = AttributeChunk(str(run.pk), self.specs, self.settings, gold, predictions)
        return compare_attribute_chunk(chunk)

    @staticmethod
    def stored_rows(partial: AttributePartial) -> list[ComparisonRowData]:
        """The chunk's comparison rows as stored; they stay in its partial result, for the metrics."""
        return [attribute_row_data(row) for row in partial.rows]

    def result(
        self,
        *,
        run: ExperimentRun,
        gold_version: GoldVersion,
        partials: Iterable[AttributePartial],
        with_rows: bool = True,
    ) -> ScoringResult:
        """The scoring of the whole run from the partial results of its chunks, in chunk order.
        `with_rows`: False when the chunks wrote the comparison rows already (the result then has none)."""
        settings = self.settings
        merged = merge_attribute_partials(partials)
        posted = run_document_index(run)
        without_context = set(
            RunDocument.objects.filter(run=run, status=DocumentStatus.OK, context__isnull=True).values_list(
                "document__external_id", flat=True
            )
        )
        evaluation = evaluation_from_columns(
            run_id=str(run.pk),
            attributes=self.specs,
            rows=merged.rows,
            row_warnings=merged.warnings,
            unscored=merged.unscored_documents,
            without_context=[
                document_id for document_id in self.document_ids if document_id in without_context
            ],
            ignored_note=posted_documents_note(posted, self.document_ids, gold_version.number),
            settings=settings,
        )
        del merged
        intervals = run_interval_settings(run.config)
        types = {result.spec.attribute_id: result.spec.type for result in evaluation.attributes}
        report = metrics_report(
            evaluation,
            settings.custom_metrics,
            intervals=(
                extraction_intervals(attribute_document_counts(evaluation.rows), types, intervals)
                if intervals.enabled
                else None
            ),
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
            document_ids=list(self.document_ids),
            metric_values=attribute_metric_values(report),
            rows=[attribute_row_data(row) for row in evaluation.rows] if with_rows else [],
            warnings=evaluation.warnings,
        )


def attribute_chunk_plan(
    *, run: ExperimentRun, document_ids: list[str], settings: EvaluationSettings | None = None
) -> AttributeScoringPlan:
    """The plan of these documents alone: all a chunk task needs of it. `settings`: the run's
    effective ones unless given (as a scoring recorded them)."""
    settings = settings or attribute_settings(run)
    resolve_custom_metrics(settings.custom_metrics)  # an unknown name fails before any work
    return AttributeScoringPlan(
        document_ids=document_ids,
        specs=run_attribute_specs(attribute_specs(project=run.project), run.prompts),
        settings=settings,
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
            if intervals.get(name):
                metric.set_interval(intervals[name])
            values.append(metric)
    return values


def attribute_row_data(row: ComparisonRow) -> ComparisonRowData:
    """The stored shape of one of the engine's comparison rows."""
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
