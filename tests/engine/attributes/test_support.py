"""Builders shared by the attribute engine tests: a schema, gold and predictions in a few lines.

Holds no tests itself; it is named like the test modules because those are the files of this suite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rapidfuzz import fuzz

from metrics.engine.attributes.comparison import (
    compare_document_slice,
    documents_without_context,
    unknown_attribute_warnings,
)
from metrics.engine.attributes.custom_metrics import resolve_custom_metrics
from metrics.engine.attributes.evaluation import evaluation_from_columns
from metrics.engine.attributes.text_search import collapse_whitespace
from metrics.engine.attributes.types import (
    AttributeSpec,
    AttributeType,
    ComparisonRow,
    EvaluationSettings,
    ExtractionEvaluation,
    FullTextDetail,
    GoldAnnotation,
    GoldDocument,
    PredictedAnnotation,
    PredictionDocument,
)
from metrics.engine.attributes.verbatim import settled_pct_of_collapsed

NO_VALUE = object()


def spec(attribute_id: str, attribute_type: AttributeType, **options: Any) -> AttributeSpec:
    options.setdefault("prompt", f"What is the {attribute_id}?")
    return AttributeSpec(
        attribute_id=attribute_id, label=attribute_id.title(), type=attribute_type, **options
    )


def gold(
    document_id: str,
    values: Mapping[str, Any],
    *,
    text: str = "",
    additional_text: Mapping[str, str] | None = None,
    details: Mapping[str, Sequence[str]] | None = None,
) -> GoldDocument:
    additional_text = additional_text or {}
    details = details or {}
    annotations = {
        attribute_id: GoldAnnotation(
            output_data=value,
            additional_text=additional_text.get(attribute_id),
            full_text_details=tuple(FullTextDetail(text=detail) for detail in details.get(attribute_id, ())),
        )
        for attribute_id, value in values.items()
    }
    return GoldDocument(
        document_id=document_id, name=f"Paper {document_id}", text=text, annotations=annotations
    )


def predicted(
    document_id: str,
    values: Mapping[str, Any] | Sequence[tuple[str, Any]],
    *,
    context: str | None = "",
    verbatim: Mapping[str, str] | None = None,
    status: str = "ok",
    error: str | None = None,
) -> PredictionDocument:
    pairs = list(values.items()) if isinstance(values, Mapping) else list(values)
    verbatim = verbatim or {}
    annotations = tuple(
        PredictedAnnotation(
            attribute_id=attribute_id,
            output_data=value,
            additional_text=verbatim.get(attribute_id),
            reasoning=f"I read the {attribute_id}",
        )
        for attribute_id, value in pairs
    )
    return PredictionDocument(
        document_id=document_id, context=context, status=status, error=error, annotations=annotations
    )


def compare_documents(**arguments: Any) -> tuple[list[ComparisonRow], list[str]]:
    """`compare_document_slice` of a whole run in one pass, with every warning worded: the result the
    chunked paths are held to."""
    rows, warnings, unknown_predicted, _ = compare_document_slice(**arguments)
    return rows, [*warnings, *unknown_attribute_warnings(unknown_predicted)]


def unscored_document_ids(
    gold_documents: Sequence[GoldDocument], attributes: Sequence[AttributeSpec]
) -> list[str]:
    """Gold documents with no gold for any schema attribute, in input order: listed, not scored."""
    schema_ids = {spec.attribute_id for spec in attributes}
    return [
        document.document_id
        for document in gold_documents
        if document.annotations.keys().isdisjoint(schema_ids)
    ]


def evaluate(
    attributes: Sequence[AttributeSpec],
    gold_documents: Sequence[GoldDocument],
    predictions: Sequence[PredictionDocument],
    **settings: Any,
) -> ExtractionEvaluation:
    """The whole run's evaluation in one pass, as the pipelines' chunks and merge give it (their
    tests hold them to this); an unknown custom metric fails before any comparison, as there."""
    evaluation_settings = EvaluationSettings(**settings)
    resolve_custom_metrics(evaluation_settings.custom_metrics)
    by_id = {prediction.document_id: prediction for prediction in predictions}
    rows, warnings = compare_documents(
        run_id="run-1",
        attributes=attributes,
        gold_documents=gold_documents,
        predictions=by_id,
        settings=evaluation_settings,
    )
    return evaluation_from_columns(
        run_id="run-1",
        attributes=attributes,
        rows=rows,
        row_warnings=warnings,
        unscored=unscored_document_ids(gold_documents, attributes),
        without_context=documents_without_context(gold_documents, by_id),
        ignored_note=[],
        settings=evaluation_settings,
    )


def result_of(evaluation: ExtractionEvaluation, attribute_id: str):
    return next(result for result in evaluation.attributes if result.spec.attribute_id == attribute_id)


def verbatim_fuzzy_pct(snippet: str | None, collapsed_context: str) -> float:
    """The verbatim grounding score of one snippet, one call at a time: the settled rules, else
    `partial_ratio` (the engine batches the latter in `FuzzyScores`)."""
    collapsed_snippet = collapse_whitespace(snippet or "")
    settled = settled_pct_of_collapsed(collapsed_snippet, collapsed_context)
    if settled is not None:
        return settled
    return round(fuzz.partial_ratio(collapsed_snippet, collapsed_context), 2)
