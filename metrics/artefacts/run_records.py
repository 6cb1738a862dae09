"""The records of a run beside its scores: llm_annotations.json, extraction_metadata.json,
config.yaml, prompts_used.csv and evaluation.log. The two JSON files hold one document per line in
their list: the C JSON encoder does the work (an indented dump falls back to the pure-Python one)
and the file still diffs line by line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import orjson
import yaml

from metrics.artefacts.cells import csv_writer, escape_formula
from metrics.engine.attributes.types import AttributeSpec, PredictedAnnotation, PredictionDocument

ANNOTATIONS_FORMAT_VERSION = 1
METADATA_FORMAT_VERSION = 1
PROMPT_COLUMNS = ("prompt", "output_data_type", "attribute_id", "attribute_label")


# What `json.dumps(item, ensure_ascii=False)` builds on every call (any option off json's defaults
# makes it construct an encoder), built once: a fifth of the time of encoding a metadata entry.
_ENCODE_ITEM = json.JSONEncoder(ensure_ascii=False).encode


def json_items(items: Iterable[Any]) -> Iterator[str]:
    """The items of a JSON artefact's list, each as `json.dumps(item, ensure_ascii=False)`."""
    return map(_ENCODE_ITEM, items)


# How the list of a JSON artefact holds its items: one a line, indented (`write_json_list`).
FIRST_ITEM_SEPARATOR = "\n    "
ITEM_SEPARATOR = ",\n    "


def json_list_frame(head: Mapping[str, Any], list_key: str) -> tuple[str, str]:
    """The text before the first item of `{**head, list_key: [...]}` (the indented head, up to and
    including the list's "["), and the text after the last."""
    head_text = json.dumps({**head, list_key: []}, indent=2, ensure_ascii=False)
    # The head ends with `"<list_key>": []\n}`; the list opens there.
    return head_text[: -len("[]\n}")] + "[", "\n  ]\n}\n"


def write_json_list(
    head: Mapping[str, Any], list_key: str, item_texts: Iterable[str], handle: IO[str]
) -> None:
    """Write `{**head, list_key: [items]}` with the head indented and one item per line, the items
    already encoded (`json_items`); a text may hold several, joined by ITEM_SEPARATOR."""
    opening, closing = json_list_frame(head, list_key)
    handle.write(opening)
    separator = FIRST_ITEM_SEPARATOR
    for text in item_texts:
        handle.write(separator)
        handle.write(text)
        separator = ITEM_SEPARATOR
    handle.write(closing)


def json_value(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False)`, the common cases without its per-call overhead. A
    str goes to orjson (several times faster on long contexts), which escapes exactly what json does
    with ensure_ascii=False (checked on every code point) and refuses a lone surrogate, left to json.
    """
    kind = value.__class__
    if kind is str:
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:
            return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int or (kind is float and math.isfinite(value)):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def llm_annotation_lines(
    predictions: Mapping[str, PredictionDocument], attributes: Sequence[AttributeSpec]
) -> Iterator[str]:
    """The items of llm_annotations.json's `documents` list: each record's `json.dumps(record,
    ensure_ascii=False)`, spelled out so that its values (the context above all) go through `json_value`."""
    labels = {spec.attribute_id: spec.label for spec in attributes}
    # attribute_id -> the start of its annotations' text, up to the output_data value: a few ids
    # recur on every document.
    starts: dict[str, str] = {}

    def annotation_text(annotation: PredictedAnnotation) -> str:
        attribute_id = annotation.attribute_id
        start = starts.get(attribute_id)
        if start is None:
            start = starts[attribute_id] = (
                json.dumps(
                    {"attribute_id": attribute_id, "attribute_label": labels.get(attribute_id)},
                    ensure_ascii=False,
                )[:-1]
                + ', "output_data": '
            )
        return (
            f"{start}{json_value(annotation.output_data)}, "
            f'"additional_text": {json_value(annotation.additional_text)}, '
            f'"reasoning": {json_value(annotation.reasoning)}}}'
        )

    for document in predictions.values():
        annotations = ", ".join([annotation_text(annotation) for annotation in document.annotations])
        yield (
            f'{{"document_id": {json_value(document.document_id)}, '
            f'"status": {json_value(document.status)}, "error": {json_value(document.error)}, '
            f'"context": {json_value(document.context)}, "annotations": [{annotations}]}}'
        )


def llm_annotations_head(
    run_id: str,
    settings: Mapping[str, Any],
    *,
    n_gold_documents: int,
    n_prediction_lines: int,
    attributes: Sequence[AttributeSpec],
) -> dict[str, Any]:
    """llm_annotations.json but its documents; its `run` object holds the run's `settings` (model,
    provider...) as the caller holds them, its counts, and the scored attributes."""
    run = {
        **settings,
        "n_gold_documents": n_gold_documents,
        "n_prediction_lines": n_prediction_lines,
        "attributes": [
            {
                "attribute_id": spec.attribute_id,
                "attribute_label": spec.label,
                "attribute_type": spec.type.value,
            }
            for spec in attributes
        ],
    }
    return {"extraction_run_id": run_id, "format_version": ANNOTATIONS_FORMAT_VERSION, "run": run}


def metadata_entries(predictions: Mapping[str, PredictionDocument]) -> list[dict[str, Any]]:
    """The per-document entries of extraction_metadata.json, one per prediction line, in order."""
    return [
        {
            "document_id": document.document_id,
            "status": document.status,
            "error": document.error,
            "n_annotations": len(document.annotations),
            "input_tokens": document.input_tokens,
            "output_tokens": document.output_tokens,
            "cost_usd": document.cost_usd,
            "timings": dict(document.timings),
        }
        for document in predictions.values()
    ]


@dataclass
class MetadataTotals:
    """What the head of extraction_metadata.json sums, from entries (`metadata_totals`); the totals
    of parts of the entries joined (`add`) give the head of them all."""

    n_entries: int = 0
    n_failed: int = 0
    n_with_timings: int = 0
    costs: list[float] = field(default_factory=list)
    input_tokens: list[int] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    stages: dict[str, list[float]] = field(default_factory=dict)

    def add(self, more: MetadataTotals) -> None:
        self.n_entries += more.n_entries
        self.n_failed += more.n_failed
        self.n_with_timings += more.n_with_timings
        self.costs.extend(more.costs)
        self.input_tokens.extend(more.input_tokens)
        self.output_tokens.extend(more.output_tokens)
        for stage, seconds in more.stages.items():
            self.stages.setdefault(stage, []).extend(seconds)


def metadata_totals(entries: Sequence[Mapping[str, Any]]) -> MetadataTotals:
    totals = MetadataTotals(
        n_entries=len(entries),
        n_failed=sum(entry["status"] == "failed" for entry in entries),
        n_with_timings=sum(bool(entry["timings"]) for entry in entries),
        costs=[entry["cost_usd"] for entry in entries if entry["cost_usd"] is not None],
        input_tokens=[entry["input_tokens"] for entry in entries if entry["input_tokens"] is not None],
        output_tokens=[entry["output_tokens"] for entry in entries if entry["output_tokens"] is not None],
    )
    for entry in entries:
        for stage, seconds in entry["timings"].items():
            totals.stages.setdefault(stage, []).append(seconds)
    return totals


def metadata_head(
    *, run_id: str, totals: MetadataTotals, n_gold_documents: int, without_line: list[str]
) -> dict[str, Any]:
    """The head of extraction_metadata.json. A total is null when no document reported that figure (a
    sum of nothing is not 0 dollars); fsum, exactly rounded, makes no total depend on the lines' order."""
    stage_totals = {stage: math.fsum(values) for stage, values in sorted(totals.stages.items())}
    costs, input_tokens, output_tokens = totals.costs, totals.input_tokens, totals.output_tokens
    return {
        "extraction_run_id": run_id,
        "format_version": METADATA_FORMAT_VERSION,
        "n_gold_documents": n_gold_documents,
        "n_prediction_lines": totals.n_entries,
        "n_failed_documents": totals.n_failed,
        "documents_without_prediction_line": without_line,
        "total_cost_usd": math.fsum(costs) if costs else None,
        "total_input_tokens": sum(input_tokens) if input_tokens else None,
        "total_output_tokens": sum(output_tokens) if output_tokens else None,
        "total_pipeline_duration_seconds": math.fsum(stage_totals.values()) if stage_totals else None,
        "n_documents_reporting": {
            "cost_usd": len(costs),
            "input_tokens": len(input_tokens),
            "output_tokens": len(output_tokens),
            "timings": totals.n_with_timings,
        },
        "stage_durations_seconds": stage_totals,
    }


def write_config_yaml(effective: Mapping[str, Any], config: Mapping[str, Any], handle: IO[str]) -> None:
    """The configuration snapshot: the effective settings first, then the rest of the given config."""
    snapshot = {**effective, **{key: value for key, value in config.items() if key not in effective}}
    yaml.safe_dump(snapshot, handle, sort_keys=False, allow_unicode=True, default_flow_style=False)


def write_prompts_used_csv(attributes: Sequence[AttributeSpec], handle: IO[str]) -> None:
    """The attributes and prompts the run scored, in the prompt CSV's own column layout."""
    writer = csv_writer(handle)
    writer.writerow(PROMPT_COLUMNS)
    writer.writerows(
        [
            escape_formula(spec.prompt),
            spec.type.value.lower(),
            escape_formula(spec.attribute_id),
            escape_formula(spec.label),
        ]
        for spec in attributes
    )


def write_evaluation_log(lines: Iterable[str], handle: IO[str]) -> None:
    handle.writelines(line.rstrip("\n") + "\n" for line in lines)
