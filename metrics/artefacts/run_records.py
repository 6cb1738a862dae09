"""The records of a run beside its scores: what the model returned, what it cost, how it was set up.

- `llm_annotations.json`: every prediction line (context, status, per-attribute annotations) and
  the run's metadata.
- `extraction_metadata.json`: totals of cost, tokens and time, stage durations summed over
  documents, and one entry per prediction line. A total is null when no document reported that
  figure (a sum of nothing is not 0 dollars); `n_documents_reporting` says how many entered each.
  `total_pipeline_duration_seconds` is the sum of every stage timing of every document.
- `config.yaml`, `prompts_used.csv`, `evaluation.log`.

The two JSON files hold one document per line inside their list: the C JSON encoder does the work
(an indented dump falls back to the pure-Python one) and the file still diffs line by line.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

import yaml

from metrics.artefacts.cells import Destination, escape_formula, open_destination
from metrics.engine.attributes.types import AttributeSpec, PredictionDocument

ANNOTATIONS_FORMAT_VERSION = 1
METADATA_FORMAT_VERSION = 1
PROMPT_COLUMNS = ("prompt", "output_data_type", "attribute_id", "attribute_label")


def _write_json_with_list(
    handle: IO[str], head: Mapping[str, Any], list_key: str, items: Iterable[Any]
) -> None:
    """Write `{**head, list_key: [items]}` with the head indented and one item per line."""
    head_text = json.dumps({**head, list_key: []}, indent=2, ensure_ascii=False)
    # The head ends with `"<list_key>": []\n}`; open the list there and stream the items into it.
    handle.write(head_text[: -len("[]\n}")] + "[")
    separator = "\n    "
    for item in items:
        handle.write(separator)
        handle.write(json.dumps(item, ensure_ascii=False))
        separator = ",\n    "
    handle.write("\n  ]\n}\n")


def write_llm_annotations_json(
    *,
    run_id: str,
    predictions: Mapping[str, PredictionDocument],
    attributes: Sequence[AttributeSpec],
    run_metadata: Mapping[str, Any],
    destination: Destination,
) -> None:
    labels = {spec.attribute_id: spec.label for spec in attributes}

    def document_record(document: PredictionDocument) -> dict:
        return {
            "document_id": document.document_id,
            "status": document.status,
            "error": document.error,
            "context": document.context,
            "annotations": [
                {
                    "attribute_id": annotation.attribute_id,
                    "attribute_label": labels.get(annotation.attribute_id),
                    "output_data": annotation.output_data,
                    "additional_text": annotation.additional_text,
                    "reasoning": annotation.reasoning,
                }
                for annotation in document.annotations
            ],
        }

    head = {
        "extraction_run_id": run_id,
        "format_version": ANNOTATIONS_FORMAT_VERSION,
        "run": dict(run_metadata),
    }
    with open_destination(destination) as handle:
        _write_json_with_list(handle, head, "documents", map(document_record, predictions.values()))


def extraction_metadata(
    *, run_id: str, predictions: Mapping[str, PredictionDocument], gold_document_ids: Sequence[str]
) -> tuple[dict, list[dict]]:
    """The head (totals) and the per-document entries of extraction_metadata.json."""
    documents = list(predictions.values())
    costs = [document.cost_usd for document in documents if document.cost_usd is not None]
    input_tokens = [document.input_tokens for document in documents if document.input_tokens is not None]
    output_tokens = [document.output_tokens for document in documents if document.output_tokens is not None]
    stages: dict[str, list[float]] = {}
    for document in documents:
        for stage, seconds in document.timings.items():
            stages.setdefault(stage, []).append(seconds)
    # fsum: the exactly rounded sum, so totals do not depend on the order of the lines.
    stage_totals = {stage: math.fsum(values) for stage, values in sorted(stages.items())}
    head = {
        "extraction_run_id": run_id,
        "format_version": METADATA_FORMAT_VERSION,
        "n_gold_documents": len(gold_document_ids),
        "n_prediction_lines": len(documents),
        "n_failed_documents": sum(document.status == "failed" for document in documents),
        "documents_without_prediction_line": [
            document_id for document_id in gold_document_ids if document_id not in predictions
        ],
        "total_cost_usd": math.fsum(costs) if costs else None,
        "total_input_tokens": sum(input_tokens) if input_tokens else None,
        "total_output_tokens": sum(output_tokens) if output_tokens else None,
        "total_pipeline_duration_seconds": math.fsum(stage_totals.values()) if stage_totals else None,
        "n_documents_reporting": {
            "cost_usd": len(costs),
            "input_tokens": len(input_tokens),
            "output_tokens": len(output_tokens),
            "timings": sum(bool(document.timings) for document in documents),
        },
        "stage_durations_seconds": stage_totals,
    }
    entries = [
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
        for document in documents
    ]
    return head, entries


def write_extraction_metadata_json(
    *,
    run_id: str,
    predictions: Mapping[str, PredictionDocument],
    gold_document_ids: Sequence[str],
    destination: Destination,
) -> None:
    head, entries = extraction_metadata(
        run_id=run_id, predictions=predictions, gold_document_ids=gold_document_ids
    )
    with open_destination(destination) as handle:
        _write_json_with_list(handle, head, "per_document", entries)


def write_config_yaml(config: Mapping[str, Any], destination: Destination) -> None:
    """The configuration snapshot, keys in the order given (the effective settings first)."""
    with open_destination(destination) as handle:
        yaml.safe_dump(dict(config), handle, sort_keys=False, allow_unicode=True, default_flow_style=False)


def write_prompts_used_csv(attributes: Sequence[AttributeSpec], destination: Destination) -> None:
    """The attributes and prompts the run scored, in the prompt CSV's own column layout."""
    with open_destination(destination) as handle:
        writer = csv.writer(handle)
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


def write_evaluation_log(lines: Iterable[str], destination: Destination) -> None:
    with open_destination(destination) as handle:
        for line in lines:
            handle.write(line.rstrip("\n") + "\n")
