"""An attribute chunk's documents as columns, to cross to another process.

Pickling the documents one object at a time was most of what a process pool cost the evaluating
process (each frozen dataclass is pickled through a Python-level `__getstate__`): the columns are
read with `attrgetter` and pickled as tuples of plain values, and the worker builds the same
documents again. (Sending equal strings once made the pickles a sixth smaller and took a quarter
more time here.) `gold_documents(gold_columns(d)) == d`, and the same for predictions
(a test holds both).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import islice
from operator import attrgetter
from typing import Any

from metrics.engine.attributes.types import (
    FullTextDetail,
    GoldAnnotation,
    GoldDocument,
    PredictedAnnotation,
    PredictionDocument,
)

Columns = tuple[tuple[Any, ...], ...]

_GOLD = attrgetter("document_id", "name", "external_id", "text")
_ANNOTATION = attrgetter("output_data", "additional_text")
_DETAIL = attrgetter("text", "item_document_id", "item_arm")
_PREDICTION = attrgetter(
    "document_id", "context", "status", "error", "input_tokens", "output_tokens", "cost_usd", "timings"
)
_PREDICTED = attrgetter("attribute_id", "output_data", "additional_text", "reasoning")


def _columns(records: list[tuple[Any, ...]], width: int) -> Columns:
    """Records turned into `width` columns."""
    return tuple(zip(*records, strict=True)) if records else ((),) * width


def gold_columns(documents: Sequence[GoldDocument]) -> tuple[Columns, Columns, Columns]:
    """(documents with their annotation counts, annotations with their keys and detail counts, details)."""
    annotations = [item for document in documents for item in document.annotations.items()]
    details = [detail for _, annotation in annotations for detail in annotation.full_text_details]
    return (
        _columns([(*_GOLD(document), len(document.annotations)) for document in documents], 5),
        _columns(
            [
                (key, *_ANNOTATION(annotation), len(annotation.full_text_details))
                for key, annotation in annotations
            ],
            4,
        ),
        _columns(list(map(_DETAIL, details)), 3),
    )


def gold_documents(columns: tuple[Columns, Columns, Columns]) -> list[GoldDocument]:
    document_columns, annotation_columns, detail_columns = columns
    details: Iterator[FullTextDetail] = map(FullTextDetail, *detail_columns)
    keys, outputs, texts, detail_counts = annotation_columns
    annotations = iter(
        [
            (key, GoldAnnotation(output, text, tuple(islice(details, count))))
            for key, output, text, count in zip(keys, outputs, texts, detail_counts, strict=True)
        ]
    )
    ids, names, external_ids, document_texts, counts = document_columns
    return [
        GoldDocument(document_id, name, external_id, text, dict(islice(annotations, count)))
        for document_id, name, external_id, text, count in zip(
            ids, names, external_ids, document_texts, counts, strict=True
        )
    ]


def prediction_columns(predictions: Mapping[str, PredictionDocument]) -> tuple[Columns, Columns]:
    """(the mapping's keys and documents with their annotation counts, the annotations)."""
    documents = list(predictions.values())
    annotations = [annotation for document in documents for annotation in document.annotations]
    return (
        _columns(
            [
                (key, *_PREDICTION(document), len(document.annotations))
                for key, document in zip(predictions, documents, strict=True)
            ],
            10,
        ),
        _columns(list(map(_PREDICTED, annotations)), 4),
    )


def prediction_documents(columns: tuple[Columns, Columns]) -> dict[str, PredictionDocument]:
    document_columns, annotation_columns = columns
    annotations = map(PredictedAnnotation, *annotation_columns)
    keys, *fields, counts = document_columns
    return {
        key: PredictionDocument(
            document_id,
            context,
            status,
            error,
            tuple(islice(annotations, count)),
            input_tokens,
            output_tokens,
            cost_usd,
            timings,
        )
        for key, (
            document_id,
            context,
            status,
            error,
            input_tokens,
            output_tokens,
            cost_usd,
            timings,
        ), count in zip(keys, zip(*fields, strict=True), counts, strict=True)
    }
