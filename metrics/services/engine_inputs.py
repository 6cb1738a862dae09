"""From stored rows to the engines' inputs, with the conversions the offline readers apply.

Gold comes from `annotations.selectors` (gold_span_documents, gold_attribute_documents,
attribute_specs); this module converts what a run posted. A stored prediction becomes exactly the
object the prediction JSONL reader would have built from the line that was posted, so that scoring a
run online and the same lines offline give the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from annotations.importers.errors import ImportProblem
from annotations.importers.span_types import SpanAnnotation, SpanDocument
from annotations.models import GoldVersion
from annotations.selectors.gold import documents_named, gold_version_external_ids
from experiments.models import ExperimentRun, PredictedSpan, PredictedValue, RunDocument
from metrics.engine.attributes.types import AttributeSpec, PredictedAnnotation, PredictionDocument

_CHUNK = 2000


def _finite_sum(values: list[float]) -> float | None:
    """The exactly rounded sum (math.fsum), or None when it overflows or a value is not finite."""
    if not values:
        return None
    try:
        total = math.fsum(values)
    except OverflowError:
        return None
    return total if math.isfinite(total) else None


def gold_document_ids(gold_version: GoldVersion, document_ids: set[str] | None) -> list[str]:
    """The gold version's document ids in gold order: those of `document_ids` (None: all)."""
    return [
        document_id
        for document_id in gold_version_external_ids(gold_version=gold_version)
        if document_ids is None or document_id in document_ids
    ]


def run_document_index(run: ExperimentRun) -> dict[str, int]:
    """external id -> RunDocument pk of every document the run posted."""
    return dict(
        RunDocument.objects.filter(run=run)
        .values_list("document__external_id", "pk")
        .iterator(chunk_size=_CHUNK)
    )


def run_document_pks(*, run: ExperimentRun, external_ids: Sequence[str]) -> list[int]:
    """The RunDocument pks of the documents of `external_ids` that the run posted."""
    return list(
        RunDocument.objects.filter(documents_named(run.project_id, external_ids), run=run).values_list(
            "pk", flat=True
        )
    )


def run_totals(run: ExperimentRun) -> tuple[dict[str, Any], list[ImportProblem]]:
    """Run-level cost, tokens and time, summed as extraction_metadata.json sums them, and a warning for
    each total left null because its sum overflows (e.g. `cost_usd: 1.7e308` twice). A total is null
    too when no document reported that figure: a sum of nothing is not 0 dollars."""
    costs: list[float] = []
    input_tokens: list[int] = []
    output_tokens: list[int] = []
    durations: list[float] = []
    rows = RunDocument.objects.filter(run=run).values_list(
        "cost_usd", "input_tokens", "output_tokens", "timings"
    )
    for cost, inputs, outputs, timings in rows.iterator(chunk_size=_CHUNK):
        for values, value in ((costs, cost), (input_tokens, inputs), (output_tokens, outputs)):
            if value is not None:
                values.append(value)
        durations.extend(float(seconds) for seconds in (timings or {}).values())
    totals = {
        "total_cost_usd": _finite_sum(costs),
        "total_input_tokens": sum(input_tokens) if input_tokens else None,
        "total_output_tokens": sum(output_tokens) if output_tokens else None,
        "total_duration_seconds": _finite_sum(durations),
    }
    problems = [
        ImportProblem(
            f"the documents' {field} values add up past the largest number a float holds; "
            "the run's total is left empty",
            field=field,
        )
        for values, field in ((costs, "cost_usd"), (durations, "timings"))
        if values and _finite_sum(values) is None
    ]
    return totals, problems


def prediction_documents(run_document_pks: Sequence[int]) -> dict[str, PredictionDocument]:
    """The attribute predictions of these RunDocuments, keyed by external document id."""
    values: dict[int, list[PredictedAnnotation]] = {}
    rows = (
        PredictedValue.objects.filter(run_document_id__in=run_document_pks)
        .order_by("run_document_id", "position")
        .values_list(
            "run_document_id", "attribute__attribute_id", "output_data", "additional_text", "reasoning"
        )
    )
    for run_document_id, attribute_id, output_data, additional_text, reasoning in rows.iterator(
        chunk_size=_CHUNK
    ):
        values.setdefault(run_document_id, []).append(
            PredictedAnnotation(
                attribute_id=attribute_id,
                output_data=output_data,
                additional_text=additional_text,
                reasoning=reasoning,
            )
        )
    # The columns named as PredictionDocument names its fields.
    fields = ("context", "status", "error", "input_tokens", "output_tokens", "cost_usd")
    documents = (
        RunDocument.objects.filter(pk__in=run_document_pks)
        .order_by("pk")
        .values_list("pk", "document__external_id", "timings", *fields)
    )
    result: dict[str, PredictionDocument] = {}
    for pk, external_id, timings, *row in documents.iterator(chunk_size=_CHUNK):
        result[external_id] = PredictionDocument(
            document_id=external_id,
            annotations=tuple(values.get(pk, ())),
            timings={stage: float(seconds) for stage, seconds in (timings or {}).items()},
            **dict(zip(fields, row, strict=True)),
        )
    return result


def predicted_span_documents(run_document_pks: Sequence[int]) -> list[SpanDocument]:
    """The span predictions of these RunDocuments, as the span JSONL reader builds them (no text:
    the stored text is the gold text, against which offsets were checked at posting)."""
    external_ids = dict(
        RunDocument.objects.filter(pk__in=run_document_pks).values_list("pk", "document__external_id")
    )
    documents = {
        pk: SpanDocument(external_id, None, [], source="posted predictions")
        for pk, external_id in external_ids.items()
    }
    rows = (
        PredictedSpan.objects.filter(run_document_id__in=run_document_pks)
        .order_by("run_document_id", "start", "end", "entity_type")
        .values_list("run_document_id", "start", "end", "entity_type", "label")
    )
    for run_document_id, start, end, entity_type, label in rows.iterator(chunk_size=_CHUNK * 5):
        documents[run_document_id].spans.append(SpanAnnotation(start, end, entity_type, label))
    return list(documents.values())


def run_attribute_specs(specs: Iterable[AttributeSpec], prompts: Sequence[Any]) -> list[AttributeSpec]:
    """The project's schema with the run's own prompts, when it sent them: only attributes with a
    prompt are scored, as the offline prompts CSV decides."""
    specs = list(specs)
    run_prompts = {
        entry["attribute_id"]: entry.get("prompt") or ""
        for entry in prompts
        if isinstance(entry, dict) and isinstance(entry.get("attribute_id"), str)
    }
    if not run_prompts:
        return specs
    return [replace(spec, prompt=run_prompts.get(spec.attribute_id, "")) for spec in specs]
