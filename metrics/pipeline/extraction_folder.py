"""An offline extraction evaluation from files to an artefact folder (`evaluate_extraction`). The
chunks' parts of the two large artefacts are written as they come, in chunk order, and the run keeps
only what the metrics, the intervals and the small artefacts need.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, BinaryIO

from annotations.importers.attribute_jsonl import GoldSet
from annotations.importers.errors import InputValidationError
from annotations.importers.extraction_predictions import PredictionSet
from annotations.importers.prompts_csv import read_prompts_csv
from annotations.importers.sources import SourceInput
from metrics.artefacts import bundle
from metrics.artefacts.bundle import atomic_directory
from metrics.artefacts.cells import write_json
from metrics.artefacts.comparison import comparison_csv
from metrics.artefacts.metrics_files import metrics_report, write_metrics_csv
from metrics.artefacts.run_records import (
    FIRST_ITEM_SEPARATOR,
    ITEM_SEPARATOR,
    json_list_frame,
    metadata_head,
    write_config_yaml,
    write_evaluation_log,
    write_json_list,
    write_prompts_used_csv,
)
from metrics.engine.attributes.comparison import check_schema, validate_settings
from metrics.engine.attributes.custom_metrics import resolve_custom_metrics
from metrics.engine.attributes.evaluation import evaluation_from_columns
from metrics.engine.attributes.types import EvaluationSettings, ExtractionEvaluation
from metrics.pipeline.executors import Executor, ProcessPool, local_executor
from metrics.pipeline.extraction_evaluation import (
    ExtractionConfig,
    ExtractionRun,
    attribute_warnings_for_code_sets,
    gold_file_format,
    input_names,
    read_extraction_inputs,
)
from metrics.pipeline.extraction_files import (
    ExtractionDocumentChunk,
    ExtractionFileChunk,
    ExtractionInputs,
    ExtractionPartial,
    document_chunks,
    merge_extraction_partials,
    plan_extraction_file_chunks,
    score_extraction_chunk,
)
from metrics.pipeline.intervals import IntervalSettings, extraction_intervals
from metrics.pipeline.jsonl_lines import plain_files
from metrics.pipeline.phases import PhaseTimer


def evaluate_extraction_to_folder(
    *,
    gold: SourceInput,
    prompts: SourceInput,
    predictions: SourceInput,
    output_dir: str | Path,
    run_id: str,
    settings: EvaluationSettings,
    config: ExtractionConfig | None = None,
    intervals: IntervalSettings,
    phase_seconds: dict[str, float] | None = None,
    processes: int = 1,
) -> ExtractionRun:
    """All of an offline evaluation: read, score (in `processes` local processes), compute the
    intervals and write the artefact folder (atomically). Raises InputValidationError on bad input,
    with nothing written. The caller pauses the garbage collector (the command does, for all its run)."""
    timer = PhaseTimer(phase_seconds)
    executor = local_executor(processes)
    if isinstance(executor, ProcessPool) and plain_files(gold, prompts, predictions):
        # The workers' imports (about half a second) then overlap the plan instead of following it.
        executor.start(score_extraction_chunk)

    def new_run(
        inputs: ExtractionInputs, gold_ids: Sequence[str], predicted_ids: Collection[str]
    ) -> ExtractionRun:
        """A run before its chunks are scored (its evaluation is built from them)."""
        predicted = set(predicted_ids)
        return ExtractionRun(
            evaluation=ExtractionEvaluation(run_id=run_id, attributes=[], rows=[]),
            inputs=inputs,
            settings=settings,
            n_gold_documents=len(gold_ids),
            n_prediction_lines=len(predicted_ids),
            gold_without_line=[document_id for document_id in gold_ids if document_id not in predicted],
            config=dict(config.values) if config else {},
        )

    with timer("load"):
        planned = _files_plan(gold, prompts, predictions, run_id, settings)
    if planned is not None:
        inputs, gold_ids, predicted_ids, chunks = planned
        try:
            return _write_run(
                new_run(inputs, gold_ids, predicted_ids), chunks, output_dir, executor, intervals, timer
            )
        except (_NotSure, FileExistsError):
            pass  # the validating readers word what the files path was not sure of, before any write
    with timer("load"):
        inputs = read_extraction_inputs(gold=gold, prompts=prompts, predictions=predictions)
        run = new_run(inputs, inputs.gold.document_ids(), inputs.predictions.documents)
        chunks = document_chunks(inputs, run_id=run_id, settings=settings)
    return _write_run(run, chunks, output_dir, executor, intervals, timer)


class _NotSure(Exception):
    """A chunk of the files path found something only the validating readers may word."""


def _write_run(
    run: ExtractionRun,
    chunks: Sequence[ExtractionFileChunk | ExtractionDocumentChunk],
    output_dir: str | Path,
    executor: Executor,
    intervals: IntervalSettings,
    timer: PhaseTimer,
) -> ExtractionRun:
    """Score the chunks and write the run's artefact folder: the one assembly of both routes.
    Raises _NotSure (nothing written) when a chunk of the files path is not sure."""
    with atomic_directory(output_dir) as staging:
        with timer("score"):
            joined = _score_chunks(run, chunks, staging, executor, timer)
        # As the export reader words them: the references' warnings, then the code sets'.
        run.inputs.gold.warnings[:0] = joined.gold_warnings
        run.n_rows = len(joined.metric_columns.attribute)
        run.evaluation = evaluation_from_columns(
            run_id=run.evaluation.run_id,
            attributes=run.inputs.prompts.attributes,
            columns=joined.metric_columns,
            row_warnings=joined.comparison.warnings,
            unscored=joined.comparison.unscored_documents,
            without_context=joined.without_context,
            ignored_note=[],  # both readers refuse a prediction line outside the gold
            settings=run.settings,
        )
        with timer("intervals"):
            types = {result.spec.attribute_id: result.spec.type for result in run.evaluation.attributes}
            run.intervals = extraction_intervals(joined.counts, types, intervals, executor)
            run.interval_settings = intervals
        for file_name, write in _small_writers(run, joined):
            with (
                timer(f"write {file_name}"),
                open(staging / file_name, "w", encoding="utf-8", newline="") as handle,
            ):
                write(handle)
    return run


def _files_plan(
    gold: SourceInput,
    prompts: SourceInput,
    predictions: SourceInput,
    run_id: str,
    settings: EvaluationSettings,
) -> tuple[ExtractionInputs, list[str], set[str], list[ExtractionFileChunk]] | None:
    """The inputs (without documents), gold and predicted ids and chunks of the files path; None when
    not sure."""
    if not plain_files(gold, prompts, predictions) or gold_file_format(gold) != "eppi":
        return None
    try:
        prompt_set = read_prompts_csv(prompts)
        resolve_custom_metrics(settings.custom_metrics)
        validate_settings(settings)
        check_schema(prompt_set.attributes)
    except (InputValidationError, ValueError):
        return None
    names = input_names(gold, prompts, predictions)
    plan = plan_extraction_file_chunks(
        gold=gold,  # type: ignore[arg-type]
        predictions=predictions,  # type: ignore[arg-type]
        gold_file=names["gold"],
        predictions_file=names["predictions"],
        run_id=run_id,
        attributes=prompt_set.attributes,
        settings=settings,
    )
    if plan is None:
        return None
    gold_set = GoldSet(
        documents=[],
        attribute_names=plan.attribute_names,
        warnings=attribute_warnings_for_code_sets(prompt_set, plan.attribute_names, names["gold"]),
    )
    inputs = ExtractionInputs(
        prompts=prompt_set,
        gold=gold_set,
        predictions=PredictionSet(documents={}),
        gold_format="eppi",
        names=names,
    )
    return inputs, plan.gold_ids, plan.predicted_ids, plan.chunks


def _score_chunks(
    run: ExtractionRun,
    chunks: Sequence[ExtractionFileChunk | ExtractionDocumentChunk],
    staging: Path,
    executor: Executor,
    timer: PhaseTimer,
) -> ExtractionPartial:
    """Score the chunks, write their parts of the comparison CSV and llm_annotations.json as they
    come (in chunk order), and merge the rest."""
    kept: list[ExtractionPartial] = []
    opening, closing = json_list_frame(run.annotations_head(), "documents")
    with (
        open(staging / bundle.COMPARISON_CSV, "wb") as comparison,
        open(staging / bundle.LLM_ANNOTATIONS_JSON, "wb") as annotations,
    ):
        comparison.write("".join(comparison_csv([])).encode("utf-8"))
        annotations.write(opening.encode("utf-8"))
        separator = FIRST_ITEM_SEPARATOR.encode("utf-8")
        if executor.processes > 1:
            chunks = [replace(chunk, parts_folder=str(staging)) for chunk in chunks]
        for partial in executor.map(score_extraction_chunk, chunks):
            if partial is None:
                raise _NotSure
            with timer(f"write {bundle.COMPARISON_CSV}"):
                _append(comparison, partial.comparison_csv)
            with timer(f"write {bundle.LLM_ANNOTATIONS_JSON}"):
                if partial.llm_annotations:
                    annotations.write(separator)
                    _append(annotations, partial.llm_annotations)
                    separator = ITEM_SEPARATOR.encode("utf-8")
            partial.comparison_csv = partial.llm_annotations = b""
            kept.append(partial)
        annotations.write(closing.encode("utf-8"))
    return merge_extraction_partials(kept)


def _append(handle: BinaryIO, part: bytes | Path) -> None:
    """Write a chunk's part: its bytes, or the file a pool's worker left them in (then removed)."""
    if isinstance(part, bytes):
        handle.write(part)
        return
    with open(part, "rb") as source:
        shutil.copyfileobj(source, handle, 1 << 20)
    part.unlink()


def _small_writers(
    run: ExtractionRun, joined: ExtractionPartial
) -> list[tuple[str, Callable[[IO[str]], None]]]:
    """The writers of every artefact but the two written chunk by chunk, in the order they run."""
    evaluation, custom = run.evaluation, run.settings.custom_metrics
    intervals_config = None if run.interval_settings is None else run.interval_settings.as_config()
    metadata = [joined.metadata] if joined.metadata else []
    head = metadata_head(
        run_id=evaluation.run_id,
        totals=joined.metadata_totals,
        n_gold_documents=run.n_gold_documents,
        without_line=run.gold_without_line,
    )
    return [
        (
            bundle.METRICS_CSV,
            lambda handle: write_metrics_csv(
                evaluation, handle, custom_metrics=custom, intervals=run.intervals
            ),
        ),
        (
            bundle.METRICS_JSON,
            lambda handle: write_json(
                metrics_report(
                    evaluation, custom, intervals=run.intervals, intervals_config=intervals_config
                ),
                handle,
            ),
        ),
        (
            bundle.EXTRACTION_METADATA_JSON,
            lambda handle: write_json_list(head, "per_document", metadata, handle),
        ),
        (bundle.CONFIG_YAML, lambda handle: write_config_yaml(run.effective_settings(), run.config, handle)),
        (
            bundle.PROMPTS_USED_CSV,
            lambda handle: write_prompts_used_csv(run.inputs.prompts.scored, handle),
        ),
        (bundle.EVALUATION_LOG, lambda handle: write_evaluation_log(run.log_lines(), handle)),
    ]
