"""Exports of a stored scoring: the comparison CSV (streamed) and the artefact bundle (a zip), by the
offline command's writers, so a download holds the bytes the command writes for the same data.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from annotations.models import Job
from annotations.selectors import attribute_specs
from experiments.models import ExperimentRun, RunKind
from metrics.artefacts import bundle
from metrics.artefacts.cells import cell, csv_writer, write_json
from metrics.artefacts.comparison import comparison_csv
from metrics.artefacts.metrics_files import write_metrics_csv
from metrics.artefacts.run_records import (
    json_items,
    llm_annotation_lines,
    llm_annotations_head,
    metadata_entries,
    metadata_head,
    metadata_totals,
    write_config_yaml,
    write_evaluation_log,
    write_json_list,
    write_prompts_used_csv,
)
from metrics.engine.attributes.types import (
    COMPARISON_COLUMNS,
    AttributeResult,
    AttributeSpec,
    AttributeType,
    ComparisonRow,
    ExtractionEvaluation,
    MatchStatus,
)
from metrics.engine.uncertainty.bootstrap import Interval
from metrics.models import ComparisonRow as StoredRow
from metrics.models import Scoring
from metrics.services.engine_inputs import prediction_documents, run_attribute_specs, run_document_index
from metrics.services.span_scoring import ROW_COLUMNS

RESULTS_JSON = "results.json"
SPAN_COMPARISON_CSV = "span_comparison.csv"


def engine_row(columns: dict[str, Any], attribute_type: str) -> ComparisonRow:
    """A stored row's columns as the engine's row, for the artefact writers."""
    values = {name: columns.get(name) for name in COMPARISON_COLUMNS}
    status = values.pop("match_status")
    return ComparisonRow(
        **values,
        attribute_type=AttributeType(attribute_type),
        match_status=MatchStatus(status) if status else None,
    )


def comparison_header(kind: str) -> tuple[str, ...]:
    return COMPARISON_COLUMNS if kind == RunKind.ATTRIBUTES else ROW_COLUMNS


def comparison_csv_stream(kind: str, rows: Iterable[StoredRow]) -> Iterator[str]:
    """The CSV text of stored rows, a few hundred rows at a time (for a StreamingHttpResponse);
    attribute rows as the offline command writes them."""
    if kind == RunKind.ATTRIBUTES:
        yield from comparison_csv(engine_row(row.columns, row.attribute.type) for row in rows)
        return
    text = io.StringIO()
    writer = csv_writer(text)
    writer.writerow(ROW_COLUMNS)
    for number, row in enumerate(rows, start=1):
        writer.writerow([cell(row.columns.get(name)) for name in ROW_COLUMNS])
        if number % 500 == 0:
            yield text.getvalue()
            text.seek(0)
            text.truncate()
    yield text.getvalue()


def _stored_rows(scoring: Scoring) -> Iterator[StoredRow]:
    return (
        StoredRow.objects.filter(scoring=scoring)
        .select_related("attribute")
        .only("columns", "attribute__type")
        .order_by("position")
        .iterator(chunk_size=2000)
    )


def evaluation_from_report(report: dict[str, Any]) -> ExtractionEvaluation:
    """Enough of the engine's evaluation for the metrics writers, from metrics.json (nulls stay null)."""
    return ExtractionEvaluation(
        run_id=report["extraction_run_id"],
        attributes=[
            AttributeResult(
                spec=AttributeSpec(
                    attribute_id=entry["attribute_id"],
                    label=entry["attribute_label"],
                    type=AttributeType(entry["attribute_type"]),
                ),
                counts=dict(entry["counts"]),
                metrics=dict(entry["metrics"]),
            )
            for entry in report["attributes"]
        ],
        rows=[],
    )


def intervals_from_metrics_report(report: dict[str, Any]) -> dict[str, dict[str, Interval]] | None:
    """The intervals metrics.json holds (metrics.csv is written without resampling again); None: none."""
    if "intervals_config" not in report and not any("intervals" in entry for entry in report["attributes"]):
        return None
    return {
        str(entry["attribute_id"]): {
            metric: Interval(**stored) for metric, stored in (entry.get("intervals") or {}).items()
        }
        for entry in report["attributes"]
    }


def artefacts_zip(*, run: ExperimentRun, scoring: Scoring) -> IO[bytes]:
    """Every artefact of docs/semantics.md section 4 for this scoring, in a zip in a temporary file."""
    # Returned open: the caller (a FileResponse) closes it once sent.
    handle = tempfile.SpooledTemporaryFile(max_size=32 * 1024**2)  # noqa: SIM115
    writers = _span_writers if run.kind == RunKind.SPANS else _attribute_writers
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, write in writers(run, scoring):
            with io.TextIOWrapper(archive.open(name, "w"), encoding="utf-8", newline="") as entry:
                write(entry)
    handle.seek(0)
    return handle


def _write_config_yaml(run: ExperimentRun, scoring: Scoring, entry: IO[str]) -> None:
    effective = {
        "run_id": run.pk,
        "scoring": scoring.number,
        "gold_version": scoring.gold_version.number,
        **scoring.settings,
    }
    write_config_yaml(effective, run.config or {}, entry)


def _log_lines(run: ExperimentRun, scoring: Scoring) -> list[str]:
    job = Job.objects.filter(pk=scoring.job_id).first()
    lines = [
        f"INFO run {run.pk} ({run.name}): scoring {scoring.number} on gold version {scoring.gold_version.number}, "
        f"{len(scoring.document_ids)} document(s)",
        f"INFO settings: {json.dumps(scoring.settings, sort_keys=True)}",
    ]
    if job is not None:
        lines.extend(f"WARNING {warning}" for warning in job.warnings)
    return lines


def _span_writers(run: ExperimentRun, scoring: Scoring) -> list[tuple[str, Callable[[IO[str]], None]]]:
    return [
        (RESULTS_JSON, lambda entry: write_json(scoring.report, entry)),
        (
            SPAN_COMPARISON_CSV,
            lambda entry: entry.writelines(comparison_csv_stream(run.kind, _stored_rows(scoring))),
        ),
        (bundle.CONFIG_YAML, lambda entry: _write_config_yaml(run, scoring, entry)),
        (bundle.EVALUATION_LOG, lambda entry: write_evaluation_log(_log_lines(run, scoring), entry)),
    ]


def _attribute_writers(run: ExperimentRun, scoring: Scoring) -> list[tuple[str, Callable[[IO[str]], None]]]:
    """The writers of the offline command's eight artefacts, in its order, on the stored scoring."""
    evaluation = evaluation_from_report(scoring.report)
    custom = scoring.settings.get("custom_metrics", [])
    specs = run_attribute_specs(attribute_specs(project=run.project), run.prompts)
    scored = [spec for spec in specs if spec.is_scored]
    predictions = prediction_documents(list(run_document_index(run).values()))
    run_id = str(run.pk)
    annotations_head = llm_annotations_head(
        run_id,
        {"model": run.model, "provider": run.provider, "config_hash": run.config_hash},
        n_gold_documents=len(scoring.document_ids),
        n_prediction_lines=len(predictions),
        attributes=scored,
    )
    intervals = intervals_from_metrics_report(scoring.report)
    entries = metadata_entries(predictions)
    metadata = metadata_head(
        run_id=run_id,
        totals=metadata_totals(entries),
        n_gold_documents=len(scoring.document_ids),
        without_line=[document_id for document_id in scoring.document_ids if document_id not in predictions],
    )
    return [
        (
            bundle.METRICS_CSV,
            lambda entry: write_metrics_csv(evaluation, entry, custom_metrics=custom, intervals=intervals),
        ),
        (bundle.METRICS_JSON, lambda entry: write_json(scoring.report, entry)),
        (
            bundle.COMPARISON_CSV,
            lambda entry: entry.writelines(comparison_csv_stream(run.kind, _stored_rows(scoring))),
        ),
        (
            bundle.LLM_ANNOTATIONS_JSON,
            lambda entry: write_json_list(
                annotations_head, "documents", llm_annotation_lines(predictions, specs), entry
            ),
        ),
        (
            bundle.EXTRACTION_METADATA_JSON,
            lambda entry: write_json_list(metadata, "per_document", json_items(entries), entry),
        ),
        (bundle.CONFIG_YAML, lambda entry: _write_config_yaml(run, scoring, entry)),
        (bundle.PROMPTS_USED_CSV, lambda entry: write_prompts_used_csv(scored, entry)),
        (bundle.EVALUATION_LOG, lambda entry: write_evaluation_log(_log_lines(run, scoring), entry)),
    ]
