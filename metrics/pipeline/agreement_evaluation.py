"""Agreement between annotators from files and from importer output: agreement.json
(docs/agreement.md) by `metrics.engine.agreement`. No Django: the command touches no database.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from annotations.importers.attribute_jsonl import read_gold_jsonl
from annotations.importers.errors import ImportProblem, InputValidationError
from annotations.importers.labels import load_label_map
from annotations.importers.prompts_csv import read_prompts_csv
from annotations.importers.span_types import SpanDocument
from annotations.importers.spans import load_span_corpus
from metrics.engine.agreement.attributes import AttributeRatings, attribute_agreement
from metrics.engine.agreement.spans import AnnotatedDocument, span_agreement
from metrics.engine.attributes.coercion import CoercionError, coerce_value
from metrics.engine.attributes.types import AttributeSpec, GoldDocument
from metrics.pipeline.intervals import DEFAULT_INTERVALS, IntervalSettings

FORMAT_VERSION = 1


def annotated_documents(documents: Iterable[SpanDocument]) -> list[AnnotatedDocument]:
    """Importer documents by document id, one entry per annotator. InputValidationError when the input
    names no annotator, or annotators' texts of a document differ (offsets would not compare)."""
    texts: dict[str, str] = {}
    spans: dict[str, dict[str, list[tuple[int, int, str]]]] = {}
    problems = []
    unnamed = []
    for document in documents:
        if document.annotator is None:
            unnamed.append(document)
            continue
        text = document.text or ""
        first = texts.setdefault(document.document_id, text)
        if first != text:
            problems.append(
                ImportProblem(
                    f"annotator {document.annotator!r} has another text for this document than the first "
                    "annotator read; agreement needs one text per document",
                    file=document.source,
                    line=document.line,
                    document_id=document.document_id,
                    field="text",
                )
            )
            continue
        spans.setdefault(document.document_id, {})[document.annotator] = [
            (span.start, span.end, span.entity_type) for span in document.spans
        ]
    if unnamed:
        problems.append(
            ImportProblem(
                f"{len(unnamed)} documents name no annotator (e.g. {unnamed[0].document_id!r}): agreement "
                "needs an INCEpTION project export (annotation/<document>/<user>.json) or JSONL lines "
                'with an "annotator" field',
                file=unnamed[0].source,
                line=unnamed[0].line,
                document_id=unnamed[0].document_id,
                field="annotator",
            )
        )
    if problems:
        raise InputValidationError(problems)
    return [
        AnnotatedDocument(document_id, texts[document_id], annotations)
        for document_id, annotations in sorted(spans.items())
    ]


def evaluate_span_agreement_path(
    source: str | os.PathLike[str],
    *,
    label_map_path: str | os.PathLike[str] | None = None,
    intervals: IntervalSettings = DEFAULT_INTERVALS,
) -> dict[str, Any]:
    """agreement.json for a span input (the inputs of `evaluate_spans --input`)."""
    corpus = load_span_corpus(source, label_map=load_label_map(label_map_path))
    return {
        "format_version": FORMAT_VERSION,
        "kind": "spans",
        "spans": span_agreement(annotated_documents(corpus.documents), settings=intervals),
        "config": {"intervals": intervals.as_config()},
        "warnings": [problem.as_dict() for problem in corpus.warnings],
    }


def gold_values(document: GoldDocument) -> dict[str, Any]:
    """`{attribute_id: raw value}` of a gold document, as `attribute_ratings` takes it."""
    return {attribute_id: annotation.output_data for attribute_id, annotation in document.annotations.items()}


def attribute_ratings(
    documents_by_annotator: Iterable[tuple[str, str, dict[str, Any]]],
    specs: Sequence[AttributeSpec],
    *,
    number_format: str = "en",
) -> tuple[list[AttributeRatings], list[ImportProblem]]:
    """Coerced ratings per scored attribute from `(document_id, annotator, {attribute_id: raw value})`.
    An absent attribute takes its missing-annotation default, as gold does; a value that does not
    coerce is left out with a warning."""
    scored = [spec for spec in specs if spec.is_scored]
    ratings: dict[str, dict[str, dict[str, Any]]] = {spec.attribute_id: {} for spec in scored}
    warnings = []
    for document_id, annotator, values in documents_by_annotator:
        for spec in scored:
            raw = values[spec.attribute_id] if spec.attribute_id in values else spec.missing_value()
            try:
                value = coerce_value(raw, spec.type, number_format)
            except CoercionError as error:
                warnings.append(
                    ImportProblem(
                        f"annotator {annotator!r}: {error}; left out of the agreement",
                        document_id=document_id,
                        field=spec.attribute_id,
                    )
                )
                continue
            if value is not None:
                ratings[spec.attribute_id].setdefault(document_id, {})[annotator] = value
    return [
        AttributeRatings(spec.attribute_id, spec.type, ratings[spec.attribute_id]) for spec in scored
    ], warnings


def evaluate_attribute_agreement_paths(
    gold_path: str | os.PathLike[str],
    prompts_path: str | os.PathLike[str],
    *,
    number_format: str = "en",
    intervals: IntervalSettings = DEFAULT_INTERVALS,
) -> dict[str, Any]:
    """agreement.json for attribute gold JSONL whose lines name their `annotator`, with the prompt CSV."""
    prompts = read_prompts_csv(prompts_path)
    gold = read_gold_jsonl(gold_path, by_annotator=True)
    rows = (
        (document.document_id, annotator, gold_values(document))
        for document, annotator in zip(gold.documents, gold.annotators or [], strict=True)
    )
    ratings, warnings = attribute_ratings(rows, prompts.attributes, number_format=number_format)
    return {
        "format_version": FORMAT_VERSION,
        "kind": "attributes",
        "attributes": attribute_agreement(ratings, settings=intervals),
        "config": {"intervals": intervals.as_config(), "number_format": number_format},
        "warnings": [problem.as_dict() for problem in [*prompts.warnings, *gold.warnings, *warnings]],
    }
