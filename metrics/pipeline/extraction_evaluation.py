"""An extraction run's inputs read whole by the validating readers, its settings and config.yaml,
and what its log and records say of it (`ExtractionRun`). Plain Python, no Django.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from annotations.importers.attribute_jsonl import (
    GoldSet,
    open_binary,
    read_gold_jsonl,
    read_source,
    source_name,
)
from annotations.importers.eppi import read_eppi_gold
from annotations.importers.errors import ImportProblem, InputValidationError
from annotations.importers.extraction_predictions import PredictionSet, read_predictions_jsonl
from annotations.importers.formats import SNIFF_BYTES, attribute_gold_format
from annotations.importers.prompts_csv import PromptSet, read_prompts_csv
from annotations.importers.sources import SourceInput
from metrics.artefacts.run_records import llm_annotations_head
from metrics.engine.attributes.comparison import validate_settings
from metrics.engine.attributes.custom_metrics import resolve_custom_metrics
from metrics.engine.attributes.types import EvaluationSettings, ExtractionEvaluation
from metrics.engine.uncertainty.bootstrap import Interval
from metrics.pipeline.attributes import AttributePartial, compare_attribute_chunk, merge_attribute_partials
from metrics.pipeline.executors import local_executor
from metrics.pipeline.extraction_files import ExtractionInputs, document_chunks
from metrics.pipeline.intervals import IntervalSettings
from metrics.pipeline.phases import paused_garbage_collection

# config.yaml keys this evaluation reads; every other key is kept in the snapshot untouched.
THRESHOLD_KEY = "edit_distance_match_threshold"
NUMBER_FORMAT_KEY = "number_format"
CUSTOM_METRICS_KEY = "custom_evaluation_metrics"


@dataclass
class ExtractionRun:
    """An evaluated run with everything its artefacts are written from."""

    evaluation: ExtractionEvaluation
    inputs: ExtractionInputs  # without documents when they were read in chunks
    settings: EvaluationSettings
    n_gold_documents: int
    n_prediction_lines: int
    gold_without_line: list[str]  # gold document ids with no prediction line, in gold order
    n_rows: int = 0
    config: dict[str, Any] = field(default_factory=dict)  # as loaded from config.yaml
    # Confidence intervals ({attribute_id: {metric: Interval}}) and their settings, once computed;
    # None: the artefacts carry no intervals.
    intervals: dict[str, dict[str, Interval]] | None = None
    interval_settings: IntervalSettings | None = None

    def effective_settings(self) -> dict[str, Any]:
        """The settings config.yaml of the run puts before the rest of the given config."""
        effective = {
            "extraction_run_id": self.evaluation.run_id,
            THRESHOLD_KEY: self.settings.edit_distance_match_threshold,
            NUMBER_FORMAT_KEY: self.settings.number_format,
            CUSTOM_METRICS_KEY: list(self.settings.custom_metrics),
            "float_relative_tolerance": self.settings.float_relative_tolerance,
            "inputs": {**self.inputs.names, "gold_format": self.inputs.gold_format},
        }
        if self.interval_settings is not None:
            effective["intervals"] = self.interval_settings.as_config()
        return effective

    def annotations_head(self) -> dict[str, Any]:
        """llm_annotations.json but its documents: the model and provider when the config names them."""
        return llm_annotations_head(
            self.evaluation.run_id,
            {key: self.config[key] for key in ("model", "provider", "temperature") if key in self.config},
            n_gold_documents=self.n_gold_documents,
            n_prediction_lines=self.n_prediction_lines,
            attributes=self.inputs.prompts.scored,
        )

    def log_lines(self) -> list[str]:
        """evaluation.log: what was read, the settings, every warning, skipped and unscored items."""
        evaluation, inputs, n_rows = self.evaluation, self.inputs, self.n_rows
        unscored = set(evaluation.unscored_documents)
        without_line = sum(document_id not in unscored for document_id in self.gold_without_line)
        lines = [
            f"INFO run {evaluation.run_id}: {self.n_gold_documents} gold document(s) ({inputs.gold_format}), "
            f"{self.n_prediction_lines} prediction line(s), "
            f"{len(inputs.prompts.scored)} scored attribute(s), {n_rows} comparison row(s)",
            f"INFO settings: {THRESHOLD_KEY}={self.settings.edit_distance_match_threshold} "
            f"{NUMBER_FORMAT_KEY}={self.settings.number_format} "
            f"custom_metrics={','.join(self.settings.custom_metrics) or '-'}",
        ]
        if without_line:
            lines.append(
                f"WARNING {without_line} gold document(s) have no prediction line: failed extraction"
            )
        lines.extend(f"WARNING {problem}" for problem in inputs.warnings)
        lines.extend(f"WARNING {warning}" for warning in evaluation.warnings)
        lines.extend(
            f"INFO unscored document (no gold): {document_id}"
            for document_id in evaluation.unscored_documents
        )
        return lines


def gold_file_format(gold: SourceInput) -> str:
    with open_binary(gold) as stream:
        return attribute_gold_format(stream.read(SNIFF_BYTES))


@dataclass
class ExtractionConfig:
    """config.yaml as loaded, with where each top-level key was written (for error messages)."""

    values: dict[str, Any] = field(default_factory=dict)
    file: str | None = None
    key_lines: dict[str, int] = field(default_factory=dict)

    def where(self, key: str) -> dict[str, Any]:
        return {"file": self.file, "line": self.key_lines.get(key), "field": key}


def load_config(source: SourceInput) -> ExtractionConfig:
    """Read config.yaml; InputValidationError names the file and line of a problem."""
    data, file = read_source(source)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputValidationError(
            ImportProblem("the file is not valid UTF-8", file=file, line=line)
        ) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        values = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        line = None if mark is None else mark.line + 1
        raise InputValidationError(ImportProblem(f"invalid YAML: {problem}", file=file, line=line)) from None
    if values is None:
        return ExtractionConfig(file=file)
    if not isinstance(values, dict):
        raise InputValidationError(
            ImportProblem("the configuration must be a YAML mapping", file=file, line=1)
        )
    key_lines = {str(key.value): key.start_mark.line + 1 for key, _ in node.value}
    return ExtractionConfig(values=values, file=file, key_lines=key_lines)


def resolve_settings(
    config: ExtractionConfig | None = None,
    *,
    edit_distance_match_threshold: float | None = None,
    number_format: str | None = None,
    custom_metrics: Sequence[str] | None = None,
) -> EvaluationSettings:
    """Effective settings: a flag wins over config.yaml, which wins over the engine's default.
    InputValidationError names the config file, line and key (or the flag) of a bad value."""
    config = config or ExtractionConfig()

    def pick(flag_value: Any, key: str, flag: str) -> tuple[Any, dict[str, Any]]:
        if flag_value is not None:
            return flag_value, {"field": flag}
        return config.values.get(key), config.where(key)

    default = EvaluationSettings()
    problems: list[ImportProblem] = []
    threshold, threshold_where = pick(
        edit_distance_match_threshold, THRESHOLD_KEY, "--edit-distance-threshold"
    )
    if threshold is None:
        threshold = default.edit_distance_match_threshold
    elif (
        isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 <= threshold <= 1.0
    ):
        problems.append(
            ImportProblem(f"must be a number between 0 and 1, found {threshold!r}", **threshold_where)
        )
        threshold = default.edit_distance_match_threshold
    number, number_where = pick(number_format, NUMBER_FORMAT_KEY, "--number-format")
    if number is None:
        number = default.number_format
    custom, custom_where = pick(custom_metrics or None, CUSTOM_METRICS_KEY, "--custom-metric")
    if custom is None:
        custom = ()
    elif (
        isinstance(custom, str)
        or not isinstance(custom, list | tuple)
        or not all(isinstance(n, str) for n in custom)
    ):
        problems.append(ImportProblem("must be a list of sklearn.metrics function names", **custom_where))
        custom = ()
    settings = EvaluationSettings(
        edit_distance_match_threshold=float(threshold),
        number_format=str(number),
        custom_metrics=tuple(custom),
    )
    # The engine's own checks, run now so that a bad value stops the run before any input is read.
    try:
        validate_settings(settings)
    except ValueError as error:
        problems.append(ImportProblem(str(error), **number_where))
    try:
        resolve_custom_metrics(settings.custom_metrics)
    except ValueError as error:
        problems.append(ImportProblem(str(error), **custom_where))
    if problems:
        raise InputValidationError(problems)
    return settings


def read_extraction_inputs(
    *,
    gold: SourceInput,
    prompts: SourceInput,
    predictions: SourceInput,
) -> ExtractionInputs:
    """Read and check all three inputs; one InputValidationError lists the problems of every file."""
    file_names = input_names(gold, prompts, predictions)
    problems: list[ImportProblem] = []
    with paused_garbage_collection():
        prompt_set = PromptSet(attributes=[])
        try:
            prompt_set = read_prompts_csv(prompts)
        except InputValidationError as error:
            problems.extend(error.problems)
        gold_format = gold_file_format(gold)
        gold_set: GoldSet | None = None
        try:
            if gold_format == "eppi":
                types = {spec.attribute_id: spec.type for spec in prompt_set.attributes}
                gold_set = read_eppi_gold(gold, attribute_types=types)
            else:
                gold_set = read_gold_jsonl(gold)
        except InputValidationError as error:
            problems.extend(error.problems)
        if gold_set is not None:
            gold_set.warnings.extend(
                attribute_warnings_for_code_sets(prompt_set, gold_set.attribute_names, file_names["gold"])
            )
        prediction_set = PredictionSet(documents={})
        try:
            prediction_set = read_predictions_jsonl(
                predictions,
                gold_document_ids=None if gold_set is None else set(gold_set.document_ids()),
            )
        except InputValidationError as error:
            problems.extend(error.problems)
    if problems or gold_set is None:
        raise InputValidationError(problems)
    return ExtractionInputs(
        prompts=prompt_set,
        gold=gold_set,
        predictions=prediction_set,
        gold_format=gold_format,
        names=file_names,
    )


def input_names(gold: SourceInput, prompts: SourceInput, predictions: SourceInput) -> dict[str, str]:
    """The file name each input's problems carry, by role."""
    return {
        role: source_name(source)
        for role, source in (("gold", gold), ("prompts", prompts), ("predictions", predictions))
    }


def attribute_warnings_for_code_sets(
    prompt_set: PromptSet, attribute_names: Mapping[str, str], gold_file: str
) -> list[ImportProblem]:
    """A warning for each scored attribute that the gold's code sets do not define. Usually a
    mistyped id: every document would silently get the attribute's default."""
    if not attribute_names:
        return []
    return [
        ImportProblem(
            f"attribute {spec.attribute_id!r} ({spec.label}) is in no EPPI code set; "
            "every document gets its missing-annotation default",
            file=gold_file,
            field="CodeSets",
        )
        for spec in prompt_set.scored
        if spec.attribute_id not in attribute_names
    ]


def compare_extraction_inputs(
    inputs: ExtractionInputs, *, run_id: str, settings: EvaluationSettings, processes: int = 1
) -> AttributePartial:
    """The comparison rows and warnings of inputs read whole (the paired report's): the offline
    route's chunks (`document_chunks`) compared in `processes` local processes, merged."""
    resolve_custom_metrics(settings.custom_metrics)  # an unknown name fails before any work
    chunks = document_chunks(inputs, run_id=run_id, settings=settings)
    with paused_garbage_collection():
        return merge_attribute_partials(local_executor(processes).map(compare_attribute_chunk, chunks))
