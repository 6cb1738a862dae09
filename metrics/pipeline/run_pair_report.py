"""Paired comparison of two runs scored against the same gold: is run b better than run a, or luck?
From the engines' outputs (`paired_report`) or from files (`compare_*_files`); the report's shape is
in docs/uncertainty.md ("Paired comparison").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from annotations.importers.errors import ImportProblem, InputValidationError
from annotations.importers.sources import SourceInput
from metrics.engine.attributes.types import ComparisonRow, EvaluationSettings
from metrics.engine.spans.score_table import SpanScores
from metrics.engine.text_table import text_table
from metrics.engine.uncertainty.attribute_metrics import (
    attribute_document_counts,
    attribute_metric_definitions,
    by_attribute,
)
from metrics.engine.uncertainty.paired import P_BOOTSTRAP, P_MCNEMAR, compare_runs
from metrics.engine.uncertainty.span_metrics import span_metric_definitions
from metrics.pipeline.executors import local_executor
from metrics.pipeline.extraction_evaluation import compare_extraction_inputs, read_extraction_inputs
from metrics.pipeline.intervals import DEFAULT_INTERVALS, IntervalSettings, span_count_table
from metrics.pipeline.span_evaluation import score_span_paths

SOURCES = ("llm", "human")
Result = TypeVar("Result")
HUMAN_CEILING_NOTE = (
    "a human annotator scored against the same gold: its numbers are the human ceiling "
    "(inter-annotator agreement), the level a pipeline can hope to reach"
)


@dataclass(frozen=True, slots=True)
class RunSide:
    """How the report names a run: a label (a file name, a run id) and who produced it."""

    label: str
    source: str = "llm"

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"a run's source is one of {', '.join(SOURCES)}, got {self.source!r}")


def paired_report(
    kind: str,
    scored_a: SpanScores | Sequence[ComparisonRow],
    scored_b: SpanScores | Sequence[ComparisonRow],
    *,
    predicted_a: Collection[str] | None = None,
    predicted_b: Collection[str] | None = None,
    settings: IntervalSettings = DEFAULT_INTERVALS,
    a: RunSide = RunSide("a"),
    b: RunSide = RunSide("b"),
) -> dict[str, Any]:
    """The paired report of two runs from their per-document scores (`kind` "spans") or their
    comparison rows ("attributes"), on the documents both predicted (None: every scored document of a
    span run, those where an attribute run has a predicted value). `settings.resamples` >= 1."""
    if kind == "spans":
        counts_a = span_count_table(_predicted_scores(scored_a, predicted_a))
        counts_b = span_count_table(_predicted_scores(scored_b, predicted_b))
        definitions = span_metric_definitions(set(counts_a.columns) | set(counts_b.columns))
    else:
        attributes: dict[str, ComparisonRow] = {}
        for row in [*scored_a, *scored_b]:
            attributes.setdefault(row.attribute_id, row)
        counts_a, counts_b = (
            _attribute_counts(scored_a, predicted_a),
            _attribute_counts(scored_b, predicted_b),
        )
        definitions = attribute_metric_definitions(
            {attribute_id: row.attribute_type for attribute_id, row in attributes.items()}
        )
    comparison = compare_runs(counts_a, counts_b, definitions, settings)
    body = comparison.as_dict()
    humans = [
        {"run": name, "label": side.label} for name, side in (("a", a), ("b", b)) if side.source == "human"
    ]
    report = {
        "kind": kind,
        "a": {"label": a.label, "source": a.source},
        "b": {"label": b.label, "source": b.source},
        "human_ceiling": {"runs": humans, "note": HUMAN_CEILING_NOTE} if humans else None,
        **{key: body[key] for key in ("level", "method", "resamples", "seed", "documents_compared")},
        "only_in_a": body["only_in_a"],
        "only_in_b": body["only_in_b"],
    }
    if kind == "spans":
        return {**report, "metrics": body["metrics"], "p_value_methods": body["p_value_methods"]}
    results = by_attribute(comparison.metrics)
    entries = []
    for attribute_id, row in sorted(attributes.items(), key=lambda item: (item[1].attribute_label, item[0])):
        compared = results.get(attribute_id, {})
        entries.append(
            {
                "attribute_id": attribute_id,
                "label": row.attribute_label,
                "type": row.attribute_type.value,
                "metrics": {metric: result.as_dict() for metric, result in compared.items()},
                "p_value_methods": {metric: result.p_method for metric, result in compared.items()},
            }
        )
    return {**report, "attributes": entries}


def _predicted_scores(scores: SpanScores, predicted: Collection[str] | None) -> SpanScores:
    if predicted is None:
        return scores
    wanted = set(predicted)
    return scores.take(
        [index for index, document_id in enumerate(scores.document_ids) if document_id in wanted]
    )


def _attribute_counts(rows: Sequence[ComparisonRow], predicted: Collection[str] | None):
    if predicted is None:
        predicted = {row.document_id for row in rows if row.llm_extraction is not None}
    wanted = set(predicted)
    return attribute_document_counts((row for row in rows if row.document_id in wanted), wanted)


def compare_span_files(
    gold: SourceInput,
    predictions_a: SourceInput,
    predictions_b: SourceInput,
    *,
    label_map_path: str | None = None,
    settings: IntervalSettings = DEFAULT_INTERVALS,
    sources: tuple[str, str],
    processes: int = 1,
) -> dict[str, Any]:
    """Score both prediction files against gold (in `processes` local processes) and compare them.
    InputValidationError lists every problem of both runs (file, line, field)."""
    return _files_report(
        "spans",
        {"gold": gold, "a": predictions_a, "b": predictions_b},
        sources,
        settings,
        read=lambda predictions: score_span_paths(
            gold, predictions, label_map_path=label_map_path, executor=local_executor(processes)
        ),
        score=lambda name, run: (run.scores, run.predicted_ids),
    )


def compare_attribute_files(
    gold: SourceInput,
    prompts: SourceInput,
    predictions_a: SourceInput,
    predictions_b: SourceInput,
    *,
    evaluation_settings: EvaluationSettings,
    settings: IntervalSettings = DEFAULT_INTERVALS,
    sources: tuple[str, str],
    processes: int = 1,
) -> dict[str, Any]:
    """`compare_span_files` for the prompt file's attributes."""
    return _files_report(
        "attributes",
        {"gold": gold, "prompts": prompts, "a": predictions_a, "b": predictions_b},
        sources,
        settings,
        read=lambda predictions: read_extraction_inputs(gold=gold, prompts=prompts, predictions=predictions),
        score=lambda name, inputs: (
            compare_extraction_inputs(
                inputs, run_id=name, settings=evaluation_settings, processes=processes
            ).rows,
            {key for key, document in inputs.predictions.documents.items() if document.status != "failed"},
        ),
    )


def _files_report(
    kind: str,
    inputs: Mapping[str, SourceInput],
    sources: tuple[str, str],
    settings: IntervalSettings,
    *,
    read: Callable[[SourceInput], Result],
    score: Callable[[str, Result], tuple[Any, Collection[str]]],
) -> dict[str, Any]:
    """The paired report of prediction files `inputs["a"]` and `inputs["b"]`: `read` both (their
    problems raised together), `score` each (its scores and the documents it predicted), naming the
    input files and the warnings of both runs once."""
    runs, problems = [], []
    for predictions in (inputs["a"], inputs["b"]):
        try:
            runs.append(read(predictions))
        except InputValidationError as error:
            problems.extend(error.problems)
    if problems:
        raise InputValidationError(_unique(problems))
    (scored_a, predicted_a), (scored_b, predicted_b) = score("a", runs[0]), score("b", runs[1])
    report = paired_report(
        kind,
        scored_a,
        scored_b,
        predicted_a=predicted_a,
        predicted_b=predicted_b,
        settings=settings,
        a=RunSide(str(inputs["a"]), sources[0]),
        b=RunSide(str(inputs["b"]), sources[1]),
    )
    report["inputs"] = {name: str(path) for name, path in inputs.items()}
    report["warnings"] = [warning.as_dict() for warning in _unique([*runs[0].warnings, *runs[1].warnings])]
    return report


def _unique(problems: Iterable[ImportProblem]) -> list[ImportProblem]:
    """Problems of the shared gold are found once per run; report each once."""
    unique: dict[str, ImportProblem] = {}
    for problem in problems:
        unique.setdefault(repr(problem.as_dict()), problem)
    return list(unique.values())


def format_run_pair_table(report: Mapping[str, Any]) -> str:
    """A fixed-width table of every compared metric: a, b, delta, its interval, p and Holm's p."""
    header = ["metric", "a", "b", "delta", f"{100 * report['level']:g}% CI of delta", "p", "p (Holm)", "test"]
    body: list[list[str]] = []
    if report["kind"] == "spans":
        methods = report.get("p_value_methods") or {}
        for path, result in report["metrics"].items():
            body.append(_table_row(path, result, methods.get(path)))
    else:
        for attribute in report["attributes"]:
            methods = attribute.get("p_value_methods") or {}
            for metric, result in attribute["metrics"].items():
                name = f"{attribute['label']} ({attribute['attribute_id']}): {metric}"
                body.append(_table_row(name, result, methods.get(metric)))
    lines = [*text_table([header, *body]), ""]
    lines.append(
        f"a = {report['a']['label']} ({report['a']['source']}), b = {report['b']['label']} "
        f"({report['b']['source']}); delta = b - a on {report['documents_compared']} documents both runs "
        f"predicted; {report['resamples']} paired resamples, seed {report['seed']}."
    )
    for name in ("a", "b"):
        only = report[f"only_in_{name}"]
        if only:
            lines.append(f"{len(only)} document(s) only run {name} predicted, left out: {_some(only)}")
    if report["human_ceiling"]:
        runs = ", ".join(f"run {run['run']} ({run['label']})" for run in report["human_ceiling"]["runs"])
        lines.append(f"Human ceiling: {runs} is {report['human_ceiling']['note']}.")
    return "\n".join(lines)


# How the table names the test behind each p-value (the report's `p_value_methods`).
P_VALUE_TESTS = {P_BOOTSTRAP: "paired bootstrap", P_MCNEMAR: "McNemar exact"}


def _table_row(name: str, result: Mapping[str, Any], p_method: str | None) -> list[str]:
    interval = (
        "-"
        if result["ci_low"] is None or result["ci_high"] is None
        else f"[{result['ci_low']:+.4f}, {result['ci_high']:+.4f}]"
    )
    return [
        name,
        _number(result["a"], ".4f"),
        _number(result["b"], ".4f"),
        _number(result["delta"], "+.4f"),
        interval,
        _number(result["p_value"], ".3g"),
        _number(result["p_adjusted"], ".3g"),
        "-" if result["p_value"] is None or p_method is None else P_VALUE_TESTS.get(p_method, p_method),
    ]


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _some(ids: Sequence[str], shown: int = 10) -> str:
    listed = ", ".join(ids[:shown])
    return listed + (f" and {len(ids) - shown} more" if len(ids) > shown else "")
