"""Scoring a span run in chunks of documents, as the offline `evaluate_spans` does: documents paired
with `pair_span_documents`, scored per chunk, merged; scores are integer counts, so chunking changes
nothing.

Comparison rows of a span run (the table behind GET /runs/{id}/comparison/), in document order then
span order, and without any text of the document (the spans are patient data):
- one row per gold span, `match_status`:
  `exact` (a prediction has the same bounds, any type), `overlap` (a prediction shares at least one
  code point), `missed` (no prediction touches it); `type_match` says whether one of those
  predictions also has the gold span's type, `fully_covered` whether predictions of any type cover
  every code point of it (nothing of it leaks); `is_correct` = exact bounds and type;
- one row per spurious prediction (it touches no gold span), `match_status` `spurious`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from annotations.importers.errors import ImportProblem
from annotations.models import GoldSpan, GoldVersion
from annotations.selectors.gold import documents_named, gold_span_documents
from experiments.models import ExperimentRun
from metrics.engine.spans.aggregate import aggregate
from metrics.engine.spans.columns import SpanColumns
from metrics.engine.spans.types import DocumentSpans
from metrics.engine.uncertainty.exact import CLOPPER_PEARSON_METHOD
from metrics.models import MetricScope
from metrics.pipeline.intervals import (
    CI_SUFFIX,
    attach_span_intervals,
    interval_count_table,
    span_table_intervals,
)
from metrics.pipeline.span_evaluation import FORMAT_VERSION, NO_PREDICTIONS, pair_span_documents
from metrics.pipeline.spans import SpanChunk, SpanPartial, merge_span_partials, score_span_chunk
from metrics.services.engine_inputs import (
    gold_document_ids,
    predicted_span_documents,
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

# The cells of a span row, in the comparison export's column order.
ROW_COLUMNS = (
    "document_id",
    "side",
    "start",
    "end",
    "entity_type",
    "predicted_types",
    "type_match",
    "fully_covered",
    "match_status",
)


@dataclass
class SpanScoringPlan:
    """What every chunk of a span scoring shares: the documents in gold order, and the predicted
    types scored (None: all; with `restrict_to_gt_types`, those of the whole gold, not the chunk's).
    `with_rows`: False for the scores alone (a run compared again, `metrics.services.run_pair`)."""

    document_ids: list[str]
    restrict: bool
    allowed_types: frozenset[str] | None
    with_rows: bool = True

    @property
    def chunk_argument(self) -> list[str] | None:
        """What a chunk task needs of the plan besides its documents (`scoring_chunk_plan`)."""
        return None if self.allowed_types is None else sorted(self.allowed_types)

    def chunk_score(
        self, *, run: ExperimentRun, gold_version: GoldVersion, document_ids: list[str], first_position: int
    ) -> SpanPartial:
        """The partial result of a chunk of the plan's documents (`document_ids`, from `first_position`
        in gold order), read from the database: their scores and comparison rows."""
        gold = gold_span_documents(gold_version=gold_version, external_ids=document_ids)
        predicted = predicted_span_documents(run_document_pks(run=run, external_ids=document_ids))
        paired = pair_span_documents(gold, predicted)
        positions = list(range(first_position, first_position + len(paired)))
        scored = score_span_chunk(SpanChunk(positions, SpanColumns.of_documents(paired), self.allowed_types))
        if self.with_rows:
            scored.rows = [row for document in paired for row in span_rows(document, self.allowed_types)]
        return scored

    @staticmethod
    def stored_rows(partial: SpanPartial) -> list[ComparisonRowData]:
        """The chunk's comparison rows, taken out of its partial result: the merge needs none."""
        rows, partial.rows = partial.rows, []
        return rows

    def result(
        self,
        *,
        run: ExperimentRun,
        gold_version: GoldVersion,
        partials: Iterable[SpanPartial],
        with_rows: bool = True,
    ) -> ScoringResult:
        """The scoring of the whole run from the partial results of its chunks (in any order); a chunk
        that wrote its rows left none in its partial result, whatever `with_rows`."""
        scores, rows = merge_span_partials(partials, len(self.document_ids))
        results = aggregate(scores)
        intervals = run_interval_settings(run.config)
        if (table := interval_count_table(scores, intervals)) is not None:
            attach_span_intervals(results, span_table_intervals(table, intervals))
        posted = run_document_index(run)
        warnings = []
        if not posted:
            warnings.append(ImportProblem(NO_PREDICTIONS, file=f"run {run.pk}").as_dict())
        report = {
            "format_version": FORMAT_VERSION,
            "documents": len(self.document_ids),
            "config": {
                "run": run.pk,
                "gold_version": gold_version.number,
                "restrict_to_gt_types": self.restrict,
                "include_sensitive_text": False,
                "intervals": intervals.as_config(exact_method=CLOPPER_PEARSON_METHOD),
            },
            **results,
            "warnings": warnings,
        }
        return ScoringResult(
            report=report,
            settings={"restrict_to_gt_types": self.restrict, "intervals": intervals.as_config()},
            document_ids=list(self.document_ids),
            metric_values=span_metric_values(report),
            rows=rows,
            warnings=posted_documents_note(posted, self.document_ids, gold_version.number),
        )


def span_scoring_plan(
    *,
    run: ExperimentRun,
    gold_version: GoldVersion,
    document_ids: set[str] | None,
    restrict: bool | None = None,
    rows: bool = True,
) -> SpanScoringPlan:
    """The plan of `run` on `document_ids` (None: the whole gold); `restrict`: the run's
    `restrict_to_gt_types` unless given (as a scoring recorded it)."""
    if restrict is None:
        restrict = bool((run.config or {}).get("restrict_to_gt_types", False))
    ids = gold_document_ids(gold_version, document_ids)
    allowed = None
    if restrict:
        spans = GoldSpan.objects.filter(gold_version=gold_version)
        if document_ids is not None:
            spans = spans.filter(documents_named(run.project_id, ids))
        allowed = frozenset(spans.values_list("entity_type", flat=True).distinct())
    return SpanScoringPlan(document_ids=ids, restrict=restrict, allowed_types=allowed, with_rows=rows)


def span_rows(document: DocumentSpans, allowed: frozenset[str] | None) -> list[ComparisonRowData]:
    predicted = sorted(
        (span.start, span.end, span.entity_type)
        for span in document.predicted
        if allowed is None or span.entity_type in allowed
    )
    rows = []
    touched = [False] * len(predicted)
    document_id = document.document_id
    for start, end, entity_type in sorted((span.start, span.end, span.entity_type) for span in document.gold):
        overlapping = [i for i, p in enumerate(predicted) if p[0] < end and start < p[1]]
        for i in overlapping:
            touched[i] = True
        exact = any(predicted[i][:2] == (start, end) for i in overlapping)
        status = "exact" if exact else ("overlap" if overlapping else "missed")
        type_match = any(predicted[i][2] == entity_type for i in overlapping)
        covered = _covered(start, end, [predicted[i] for i in overlapping])
        types = sorted({predicted[i][2] for i in overlapping})
        cells = (document_id, "gold", start, end, entity_type, types, type_match, covered, status)
        rows.append(_span_row((start, end, entity_type) in predicted, *cells))
    for i, (start, end, entity_type) in enumerate(predicted):
        if not touched[i]:
            spurious = (document_id, "predicted", start, end, entity_type, [entity_type], False, None)
            rows.append(_span_row(False, *spurious, "spurious"))
    return rows


def _span_row(is_correct: bool, *cells: Any) -> ComparisonRowData:
    """A row of the span comparison export, its cells in the export's column order."""
    columns = dict(zip(ROW_COLUMNS, cells, strict=True))
    return ComparisonRowData(
        columns["document_id"],
        columns,
        entity_type=columns["entity_type"],
        match_status=columns["match_status"],
        is_correct=is_correct,
    )


def _covered(start: int, end: int, spans: list[tuple[int, int, str]]) -> bool:
    position = start
    for span_start, span_end, _ in sorted(spans):
        if span_start > position:
            return False
        position = max(position, span_end)
        if position >= end:
            return True
    return position >= end


def span_metric_values(report: dict[str, Any]) -> list[MetricValueData]:
    """results.json flattened to numbers: overall (micro, macro, leakage, counts) and per entity type.

    Names are the dotted key paths (`micro.chars.all.f1`); a macro mean carries, as n, the number of
    documents where it was defined. Lists (leaked document ids) and per-document rows are not flattened.
    """
    values: list[MetricValueData] = []
    for section in ("micro", "macro", "leakage"):
        _flatten(report[section], section, MetricScope.OVERALL, "", values)
    for name in ("documents", "documents_with_gold", "restricted_predictions_dropped"):
        values.append(MetricValueData(MetricScope.OVERALL, "", name, report[name]))
    for entity_type, entry in report["per_type"].items():
        _flatten(entry, "", MetricScope.ENTITY_TYPE, entity_type, values)
    macro_n = {}
    for value in values:
        if value.scope == MetricScope.OVERALL and ".n_documents." in value.name:
            head, measure = value.name.split(".n_documents.")
            macro_n[f"{head}.{measure}"] = value.value
    for value in values:
        if value.name in macro_n:
            value.n = int(macro_n[value.name])
    return values


def _flatten(tree: Any, prefix: str, scope: str, key: str, out: list[MetricValueData]) -> None:
    """Numeric leaves as values; a `<metric>_ci` interval beside a metric becomes that value's interval."""
    if isinstance(tree, dict):
        intervals = {
            name[: -len(CI_SUFFIX)]: child for name, child in tree.items() if name.endswith(CI_SUFFIX)
        }
        for name, child in tree.items():
            if name.endswith(CI_SUFFIX):
                continue
            path = f"{prefix}.{name}" if prefix else name
            before = len(out)
            _flatten(child, path, scope, key, out)
            interval = intervals.get(name)
            if isinstance(interval, dict) and len(out) == before + 1:
                out[-1].set_interval(interval)
    elif tree is None or (isinstance(tree, (int, float)) and not isinstance(tree, bool)):
        out.append(MetricValueData(scope, key, prefix, tree))
