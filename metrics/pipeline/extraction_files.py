"""The offline extraction evaluation's chunks and their scorer. On the fast path a chunk is a byte
range of an EPPI export's References and one of the predictions' lines (in gold order), read by the
process that scores it; its scorer returns its parts of the two large artefacts already encoded.

It goes only where the validating readers would raise no error and word the same warnings. Anything
it is not sure of makes it answer None, and the caller reads the inputs again with the validating
readers, whose documents are cut into chunks (`document_chunks`) for the same scorer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from annotations.importers.attribute_jsonl import GoldSet
from annotations.importers.eppi import read_code_set_names, read_eppi_references
from annotations.importers.errors import ImportProblem
from annotations.importers.extraction_predictions import KNOWN_FIELDS, PredictionSet, read_prediction_record
from annotations.importers.json_lines import NOT_PARSED, parse_json_bytes
from annotations.importers.prompts_csv import PromptSet
from metrics.artefacts.comparison import comparison_csv
from metrics.artefacts.run_records import (
    ITEM_SEPARATOR,
    MetadataTotals,
    json_items,
    llm_annotation_lines,
    metadata_entries,
    metadata_totals,
)
from metrics.engine.attributes.comparison import documents_without_context
from metrics.engine.attributes.metrics import MetricColumns, metric_columns
from metrics.engine.attributes.types import (
    AttributeSpec,
    EvaluationSettings,
    GoldDocument,
    PredictionDocument,
)
from metrics.engine.uncertainty.attribute_metrics import counts_of_metric_columns
from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.pipeline.attributes import (
    AttributeChunk,
    AttributePartial,
    compare_attribute_chunk,
    merge_attribute_partials,
)
from metrics.pipeline.jsonl_lines import (
    ByteRange,
    chunk_bounds,
    line_document_ids,
    line_ends,
    positions_in_gold,
)
from metrics.pipeline.phases import paused_garbage_collection

# References per chunk at most, and input bytes (the references' and their lines') per chunk at most
# (beyond a chunk's first reference): a chunk's inputs, rows and encoded parts stay a few tens of MB
# whether its documents are short (the standard bench: 2,500 documents, 13 MB) or long.
CHUNK_DOCUMENTS = 2_500
CHUNK_BYTES = 16 << 20


class _Export(msgspec.Struct):
    References: list[msgspec.Raw]
    CodeSets: msgspec.Raw = msgspec.Raw(b"[]")


class _ReferenceId(msgspec.Struct):
    ItemId: int | str


@dataclass(frozen=True)
class ExtractionFileChunk:
    run_id: str
    attributes: Sequence[AttributeSpec]
    settings: EvaluationSettings
    attribute_names: Mapping[str, str]
    gold_file: str  # the name problems would carry (any problem makes the chunk "not sure")
    gold: ByteRange  # References[first_reference:...] and the separators between them
    first_reference: int
    document_ids: tuple[str, ...]  # as the plan read them: the chunk checks the parsed ones
    predictions_file: str
    predictions: ByteRange | None  # the lines of these documents, in order; None: none has one
    first_line: int
    predicted_ids: tuple[str, ...]
    # A folder where the scorer leaves its parts of the two large artefacts as files, or None to
    # return them as bytes. A pool's worker would otherwise pickle them (most of its result) into
    # a pipe, and the evaluating process copy them out of it again.
    parts_folder: str | None = None

    def documents(self) -> ExtractionDocumentChunk | None:
        """The chunk's bytes read and checked, or None when not sure."""
        gold = _gold_documents(self)
        predictions = None if gold is None else _predictions(self)
        if gold is None or predictions is None:
            return None
        documents, gold_warnings = gold
        return ExtractionDocumentChunk(
            self.run_id,
            self.attributes,
            self.settings,
            gold_documents=documents,
            predictions=predictions,
            first_reference=self.first_reference,
            lines=predictions,
            parts_folder=self.parts_folder,
            gold_warnings=gold_warnings,
        )


@dataclass
class ExtractionDocumentChunk(AttributeChunk):
    """An attribute chunk read, with the prediction lines whose records it writes (when read whole, a
    slice of the file's, which need not follow the gold's order) and the export reader's warnings."""

    first_reference: int
    lines: Mapping[str, PredictionDocument]
    parts_folder: str | None = None
    gold_warnings: list[ImportProblem] = field(default_factory=list)

    def documents(self) -> ExtractionDocumentChunk:
        return self


@dataclass
class ExtractionInputs:
    """A run's three inputs read whole by the validating readers (`read_extraction_inputs`)."""

    prompts: PromptSet
    gold: GoldSet
    predictions: PredictionSet
    gold_format: str
    names: dict[str, str]  # "gold" / "prompts" / "predictions" -> the file name used in messages

    @property
    def warnings(self) -> list[ImportProblem]:
        return [*self.prompts.warnings, *self.gold.warnings, *self.predictions.warnings]


def document_chunks(
    inputs: ExtractionInputs, *, run_id: str, settings: EvaluationSettings
) -> list[ExtractionDocumentChunk]:
    """The documents the validating readers read, in chunks of CHUNK_DOCUMENTS gold documents and
    as many prediction lines (at least one chunk, so that the schema is checked)."""
    gold_documents, predictions = inputs.gold.documents, inputs.predictions.documents
    attributes = tuple(inputs.prompts.attributes)
    lines = list(predictions.items())
    chunks = []
    for start in range(0, max(len(gold_documents), len(lines), 1), CHUNK_DOCUMENTS):
        gold = gold_documents[start : start + CHUNK_DOCUMENTS]
        scored = {
            document.document_id: predictions[document.document_id]
            for document in gold
            if document.document_id in predictions
        }
        own_lines = dict(lines[start : start + CHUNK_DOCUMENTS])
        chunks.append(ExtractionDocumentChunk(run_id, attributes, settings, gold, scored, start, own_lines))
    return chunks


@dataclass
class ExtractionPartial:
    comparison_csv: bytes | Path  # the chunk's rows, without the header (or the file holding them)
    # The chunk's items of the `documents` list, joined by ITEM_SEPARATOR (or the file holding them).
    llm_annotations: bytes | Path
    metadata: str  # the chunk's items of extraction_metadata.json's list, joined by ITEM_SEPARATOR
    metadata_totals: MetadataTotals
    counts: DocumentCounts
    metric_columns: MetricColumns  # attributes numbered by their position in the chunk's
    comparison: AttributePartial  # without its rows, which the fields above hold encoded
    without_context: list[str]
    gold_warnings: list[ImportProblem]  # the export reader's, of these references, in order


def merge_extraction_partials(partials: Sequence[ExtractionPartial]) -> ExtractionPartial:
    """The run's result: every chunk's parts in chunk order, but the two large ones (written as
    the chunks came)."""
    totals = MetadataTotals()
    for partial in partials:
        totals.add(partial.metadata_totals)
    return ExtractionPartial(
        comparison_csv=b"",
        llm_annotations=b"",
        metadata=ITEM_SEPARATOR.join(partial.metadata for partial in partials if partial.metadata),
        metadata_totals=totals,
        counts=DocumentCounts.joined([partial.counts for partial in partials], consume=True),
        metric_columns=MetricColumns.joined([partial.metric_columns for partial in partials]),
        comparison=merge_attribute_partials(partial.comparison for partial in partials),
        without_context=[document for partial in partials for document in partial.without_context],
        gold_warnings=[warning for partial in partials for warning in partial.gold_warnings],
    )


@dataclass
class ExtractionFilePlan:
    chunks: list[ExtractionFileChunk]
    gold_ids: list[str]
    predicted_ids: list[str]
    attribute_names: dict[str, str]


def plan_extraction_file_chunks(
    *,
    gold: str | os.PathLike,
    predictions: str | os.PathLike,
    gold_file: str,
    predictions_file: str,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    settings: EvaluationSettings,
) -> ExtractionFilePlan | None:
    """The chunks of an EPPI export and its predictions, or None when the fast path is not sure."""
    references = _reference_ranges(str(gold))
    if references is None:
        return None
    gold_ids, offsets, ends, code_sets = references
    attribute_names, problems = read_code_set_names(code_sets, gold_file)
    if problems.errors or problems.warnings:
        return None
    lines = _prediction_lines(str(predictions), gold_ids)
    if lines is None:
        return None
    predicted_ids, line_starts, line_stops, gold_positions = lines
    chunks = []
    # A reference's bytes and its line's count against CHUNK_BYTES.
    sizes = np.asarray(ends, dtype=np.int64) - np.asarray(offsets, dtype=np.int64)
    np.add.at(
        sizes,
        gold_positions,
        np.asarray(line_stops, dtype=np.int64) - np.asarray(line_starts, dtype=np.int64),
    )
    for first, last in chunk_bounds(np.cumsum(sizes), CHUNK_DOCUMENTS, CHUNK_BYTES):
        line_first, line_last = np.searchsorted(gold_positions, [first, last]).tolist()
        chunks.append(
            ExtractionFileChunk(
                run_id=run_id,
                attributes=tuple(attributes),
                settings=settings,
                attribute_names=attribute_names,
                gold_file=gold_file,
                gold=ByteRange(str(gold), offsets[first], ends[last - 1]),
                first_reference=first,
                document_ids=tuple(gold_ids[first:last]),
                predictions_file=predictions_file,
                predictions=ByteRange(str(predictions), line_starts[line_first], line_stops[line_last - 1])
                if line_last > line_first
                else None,
                first_line=line_first + 1,
                predicted_ids=tuple(predicted_ids[line_first:line_last]),
            )
        )
    return ExtractionFilePlan(chunks, gold_ids, predicted_ids, attribute_names)


def _reference_ranges(path: str) -> tuple[list[str], list[int], list[int], Any] | None:
    """(the ItemIds, start and end offsets of each reference, the parsed CodeSets), or None."""
    with open(path, "rb") as file:
        data = file.read()
    try:
        export = msgspec.json.decode(data, type=_Export)
        item_ids = [msgspec.json.decode(raw, type=_ReferenceId).ItemId for raw in export.References]
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    code_sets = parse_json_bytes(bytes(export.CodeSets))
    if code_sets is NOT_PARSED or not item_ids:
        return None
    ids = [str(item_id) if item_id.__class__ is int else item_id.strip() for item_id in item_ids]
    if not all(ids) or len(set(ids)) != len(ids):
        return None
    offsets, ends = [], []
    position = data.find(b"[", data.find(b'"References"')) + 1
    for raw in export.References:
        # Between two items of the array there is only a comma and white space, never a "{".
        position = data.find(b"{", position)
        if not data.startswith(raw, position):
            return None  # the first "References" was inside a text, or the key is repeated
        offsets.append(position)
        position += len(raw)
        ends.append(position)
    # A key outside the References array, once more: only the validating reader may decide which
    # one counts ("References" or "CodeSets" inside a reference is a text or a reference's field).
    outside = (data[: offsets[0]], data[ends[-1] :])
    if (
        sum(part.count(b'"References"') for part in outside) != 1
        or sum(part.count(b'"CodeSets"') for part in outside) > 1
    ):
        return None
    return ids, offsets, ends, code_sets


def _prediction_lines(
    path: str, gold_ids: Sequence[str]
) -> tuple[list[str], list[int], list[int], np.ndarray] | None:
    """(the id of each line, line starts and ends, each line's position in the gold), or None
    unless every line names a distinct gold document, in gold order."""
    ends = line_ends(path)
    if not len(ends):
        return [], [], [], ends
    starts = np.concatenate(([0], ends[:-1])).astype(np.int64)
    ids = line_document_ids(path, starts, ends)
    positions = None if ids is None or None in ids else positions_in_gold(ids, gold_ids)  # type: ignore[arg-type]
    if positions is None or np.any(np.diff(positions) < 0):
        return None
    return ids, starts.tolist(), ends.tolist(), positions  # type: ignore[return-value]


def score_extraction_chunk(chunk: ExtractionFileChunk | ExtractionDocumentChunk) -> ExtractionPartial | None:
    """Read, check and score one chunk, and encode its parts of the artefacts; None when not sure."""
    with paused_garbage_collection():
        read = chunk.documents()
        if read is None:
            return None
        compared = compare_attribute_chunk(read)
        rows, compared.rows = compared.rows, []  # they leave the chunk encoded
        annotations = ITEM_SEPARATOR.join(llm_annotation_lines(read.lines, chunk.attributes))
        entries = metadata_entries(read.lines)
        columns = metric_columns(
            rows, {spec.attribute_id: index for index, spec in enumerate(chunk.attributes)}
        )
        return ExtractionPartial(
            comparison_csv=_part(read, "csv", "".join(comparison_csv(rows, header=False)).encode("utf-8")),
            llm_annotations=_part(read, "json", annotations.encode("utf-8")),
            metadata=ITEM_SEPARATOR.join(json_items(entries)),
            metadata_totals=metadata_totals(entries),
            counts=counts_of_metric_columns(
                columns,
                [row.document_id for row in rows],
                [(spec.attribute_id, spec.type) for spec in chunk.attributes],
            ),
            metric_columns=columns,
            comparison=compared,
            without_context=documents_without_context(read.gold_documents, read.predictions),
            gold_warnings=read.gold_warnings,
        )


def _part(chunk: ExtractionDocumentChunk, suffix: str, data: bytes) -> bytes | Path:
    """`data`, or the file of `chunk.parts_folder` it is written to (an empty part stays bytes)."""
    if chunk.parts_folder is None or not data:
        return data
    path = Path(chunk.parts_folder) / f".part-{chunk.first_reference}.{suffix}"
    path.write_bytes(data)
    return path


def _gold_documents(chunk: ExtractionFileChunk) -> tuple[list[GoldDocument], list[ImportProblem]] | None:
    """The chunk's documents and the reader's warnings about them (each about one reference), or
    None on any error."""
    references = parse_json_bytes(b"[" + chunk.gold.read() + b"]")
    if references is NOT_PARSED or len(references) != len(chunk.document_ids):
        return None
    types = {spec.attribute_id: spec.type for spec in chunk.attributes}
    documents, _, problems = read_eppi_references(
        references,
        first_index=chunk.first_reference,
        attribute_types=types,
        attribute_names=chunk.attribute_names,
        file=chunk.gold_file,
    )
    if problems.errors or tuple(document.document_id for document in documents) != chunk.document_ids:
        return None
    return documents, problems.warnings


def _predictions(chunk: ExtractionFileChunk) -> dict[str, PredictionDocument] | None:
    if chunk.predictions is None:
        return {}
    lines = chunk.predictions.read_lines()
    if len(lines) != len(chunk.predicted_ids):
        return None
    documents: dict[str, PredictionDocument] = {}
    attribute_ids: dict[str, str] = {}
    for number, (raw, document_id) in enumerate(
        zip(lines, chunk.predicted_ids, strict=True), start=chunk.first_line
    ):
        record = parse_json_bytes(raw)
        if record is NOT_PARSED or record.__class__ is not dict or not KNOWN_FIELDS.issuperset(record):
            return None
        document, problems = read_prediction_record(
            record, file=chunk.predictions_file, line=number, attribute_ids=attribute_ids
        )
        if document is None or problems.errors or problems.warnings or document.document_id != document_id:
            return None
        documents[document_id] = document
    return documents
