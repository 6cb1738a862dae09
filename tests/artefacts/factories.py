"""Hand-built evaluation results, so the writers are tested apart from the engine."""

from __future__ import annotations

from typing import Any

from metrics.artefacts import bundle
from metrics.engine.attributes.metrics import COUNT_COLUMNS
from metrics.engine.attributes.types import (
    AttributeResult,
    AttributeSpec,
    AttributeType,
    ComparisonRow,
    ExtractionEvaluation,
    MatchStatus,
)

# The eight artefacts of an extraction run (docs/semantics.md section 4).
ARTEFACT_NAMES = (
    bundle.METRICS_CSV,
    bundle.METRICS_JSON,
    bundle.COMPARISON_CSV,
    bundle.LLM_ANNOTATIONS_JSON,
    bundle.EXTRACTION_METADATA_JSON,
    bundle.CONFIG_YAML,
    bundle.PROMPTS_USED_CSV,
    bundle.EVALUATION_LOG,
)


def spec(attribute_id: str, label: str, attribute_type: AttributeType) -> AttributeSpec:
    return AttributeSpec(
        attribute_id=attribute_id, label=label, type=attribute_type, prompt=f"What is {label}?"
    )


def result(attribute_spec: AttributeSpec, metrics: dict[str, Any], **counts: int | None) -> AttributeResult:
    all_counts = {name: 0 for name in COUNT_COLUMNS}
    all_counts.update(counts)
    return AttributeResult(spec=attribute_spec, counts=all_counts, metrics=metrics)


def row(**fields: Any) -> ComparisonRow:
    values: dict[str, Any] = {
        "document_id": "d1",
        "external_id": "d1",
        "document_name": "Smith 2020",
        "attribute_id": "a1",
        "attribute_label": "Country",
        "attribute_type": AttributeType.STRING,
        "extraction_run_id": "run-1",
        "attribute_presence": True,
        "human_additional_text": "in Kenya",
        "item_attribute_full_text_details": None,
        "citation_page": None,
        "citation_highlight_text": None,
        "human_extraction": "Kenya",
        "llm_extraction": "Kenya",
        "llm_reasoning": None,
        "llm_verbatim_text": None,
        "human_verbatim_fuzzy_match_pct": 100.0,
        "llm_verbatim_fuzzy_match_pct": 0.0,
        "gold_value_in_citation": True,
        "gold_value_in_context": True,
        "match_status": MatchStatus.EXACT_MATCH,
    }
    values.update(fields)
    return ComparisonRow(**values)


def evaluation(
    results: list[AttributeResult], rows: list[ComparisonRow] | None = None, run_id: str = "run-1"
) -> ExtractionEvaluation:
    return ExtractionEvaluation(run_id=run_id, attributes=results, rows=rows or [])
