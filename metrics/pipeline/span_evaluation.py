"""Span evaluation from files to results.json. Two plain JSONL files take the fast path
(`span_file_plan`, `span_file_read`): each chunk is read by whoever scores it, so no process holds the
whole gold text. Any other input, and any the fast path is not sure of, takes the validating path,
which words every problem: gold is loaded whole (a prediction can name any gold document),
predictions are streamed. Both merge in gold order, so nothing depends on how many processes scored.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, cast

import numpy as np

from annotations.importers.errors import ImportProblem, InputValidationError, ProblemCollector
from annotations.importers.labels import LabelMap, LabelResolver, load_label_map
from annotations.importers.sources import ArchiveLimits, SourceInput
from annotations.importers.span_jsonl import offsets_problem, text_mismatch_problem
from annotations.importers.span_types import SpanAnnotation, SpanDocument
from annotations.importers.spans import iter_span_documents, load_span_corpus, select_annotator
from metrics.engine.spans.aggregate import aggregate
from metrics.engine.spans.score_table import SpanScores
from metrics.engine.spans.types import DocumentSpans, Span
from metrics.engine.uncertainty.exact import CLOPPER_PEARSON_METHOD
from metrics.pipeline.executors import Executor, InProcess, ProcessPool, local_executor
from metrics.pipeline.intervals import (
    DEFAULT_INTERVALS,
    IntervalSettings,
    attach_span_intervals,
    interval_count_table,
    span_table_intervals,
    sums_in_pool,
)
from metrics.pipeline.phases import PhaseTimer, paused_garbage_collection, release_free_memory
from metrics.pipeline.span_file_plan import NotSure, SpanFileChunk, plan_span_file_chunks
from metrics.pipeline.span_file_read import LinesDoNotPair, score_span_file_chunk
from metrics.pipeline.spans import (
    ProgressCallback,
    SpanPartial,
    merge_span_partials,
    score_span_chunk,
    span_chunks,
)

FORMAT_VERSION = 1
NO_PREDICTIONS = "predictions hold no documents: every gold span counts as missed"


def evaluate_span_paths(
    gold_path: SourceInput,
    predictions_path: SourceInput,
    *,
    label_map_path: str | os.PathLike[str] | None = None,
    restrict_to_gt_types: bool = False,
    include_sensitive_text: bool = False,
    progress: ProgressCallback | None = None,
    gold_annotator: str | None = None,
    intervals: IntervalSettings = DEFAULT_INTERVALS,
    phase_seconds: dict[str, float] | None = None,
    processes: int = 1,
) -> dict[str, Any]:
    """The results body (docs/semantics.md section 1); InputValidationError lists every problem."""
    timer = PhaseTimer(phase_seconds)
    executor = local_executor(processes)
    with paused_garbage_collection():
        with ExitStack() as workers:
            # A pool's workers serve every pass of the scoring, and then the intervals' sums when they
            # sum the resamples (a second set would start while both cores idle). They end before the
            # results body is built: the pool's queue holds the last run's pickle (the packed table)
            # as long as it serves.
            if isinstance(executor, ProcessPool):
                workers.enter_context(executor.kept())
            with timer("load and score"):
                scored = score_span_paths(
                    gold_path,
                    predictions_path,
                    label_map_path=label_map_path,
                    restrict_to_gt_types=restrict_to_gt_types,
                    gold_annotator=gold_annotator,
                    executor=executor,
                    progress=progress,
                    keep_leaked=include_sensitive_text,
                )
            if not sums_in_pool(executor):
                workers.close()  # the resamples are summed here: the workers' memory goes back now
            release_free_memory()  # what loading freed (the gold documents) goes back before the next peak
            with timer("intervals"):
                span_intervals = _intervals_summing_scores(
                    scored, intervals, executor, keep_leaked=include_sensitive_text
                )
        release_free_memory()
        with timer("aggregate"):
            results = aggregate(scored.scores, include_sensitive_text=include_sensitive_text)
        attach_span_intervals(results, span_intervals)
        return {
            "format_version": FORMAT_VERSION,
            "documents": len(scored.scores),
            "config": {
                "input": str(gold_path),
                "predictions": str(predictions_path),
                "label_map": None if label_map_path is None else str(label_map_path),
                "restrict_to_gt_types": restrict_to_gt_types,
                "include_sensitive_text": include_sensitive_text,
                "gold_annotator": gold_annotator,
                "intervals": intervals.as_config(exact_method=CLOPPER_PEARSON_METHOD),
            },
            **results,
            "warnings": [warning.as_dict() for warning in scored.warnings],
        }


def _intervals_summing_scores(
    scored: ScoredSpanDocuments, intervals: IntervalSettings, executor: Executor, *, keep_leaked: bool
) -> dict[str, Any]:
    """The intervals of `scored`, whose scores then keep only what aggregate reads (each type's rows
    summed). Intervals first: their count table is freed before the results body (a row per
    document) is built. A thread sums the rows while this one resamples, whose product waits on its
    tallies about half the time (bench/spans/README.md)."""
    table = interval_count_table(scored.scores, intervals)

    def sum_type_rows() -> None:
        scored.scores = scored.scores.with_type_rows_summed(keep_leaked=keep_leaked)
        release_free_memory()  # the rows go back before the results body is built

    with ThreadPoolExecutor(max_workers=1) as side:
        summing = side.submit(sum_type_rows)
        span_intervals = {} if table is None else span_table_intervals(table, intervals, executor)
        summing.result()
    return span_intervals


@dataclass
class ScoredSpanDocuments:
    """Every gold document scored against one prediction set, before aggregation."""

    scores: SpanScores  # one per gold document, in gold order
    predicted_ids: frozenset[str]  # the documents the prediction set holds (the others predicted nothing)
    warnings: list[ImportProblem]


def score_span_paths(
    gold_path: SourceInput,
    predictions_path: SourceInput,
    *,
    label_map_path: str | os.PathLike[str] | None = None,
    restrict_to_gt_types: bool = False,
    gold_annotator: str | None = None,
    executor: Executor | None = None,
    progress: ProgressCallback | None = None,
    keep_leaked: bool = True,
) -> ScoredSpanDocuments:
    """`evaluate_span_paths` up to aggregating (the paired comparison's). `keep_leaked` False: the
    scores list no leaked span (their counts stay); only a body with sensitive text reads them."""
    executor = executor or InProcess()
    if isinstance(executor, ProcessPool):
        # The fast path's reader imports the validating path's scorer too: one preload serves both.
        executor.start(score_span_file_chunk)
    reading = _Reading(
        gold_path,
        predictions_path,
        load_label_map(label_map_path),
        restrict_to_gt_types,
        executor,
        progress,
        keep_leaked,
    )
    with paused_garbage_collection():
        if gold_annotator is None:
            try:
                return _score_plain_files(reading)
            except NotSure:
                pass  # the validating path reads both inputs again, and words what was wrong
        return _read_validate_and_score(reading, gold_annotator)


@dataclass(frozen=True)
class _Reading:
    """What either reader is given: the two inputs, and how to score them."""

    gold_path: SourceInput
    predictions_path: SourceInput
    label_map: LabelMap
    restrict_to_gt_types: bool
    executor: Executor
    progress: ProgressCallback | None
    keep_leaked: bool


def _score_plain_files(reading: _Reading) -> ScoredSpanDocuments:
    """The fast path (`span_file_plan`, `span_file_read`): two plain JSONL files, each chunk read by
    whoever scores it. Raises NotSure when it is not sure of something."""
    executor = reading.executor
    plan = partial(
        plan_span_file_chunks,
        reading.gold_path,
        reading.predictions_path,
        label_map=reading.label_map,
        keep_leaked=reading.keep_leaked,
    )
    chunks = plan()
    try:
        scored = _score_file_chunks(chunks, executor, reading.progress)
    except LinesDoNotPair:  # line k of the predictions was not the document of gold's line k
        scored = None
    if scored is None:  # out of the handler: the first pass's merge, held by its traceback, is let go
        chunks = plan(by_document_id=True)
        scored = _score_file_chunks(chunks, executor, reading.progress)
    scores, unpredicted_ids = scored
    document_ids = set(scores.document_ids)
    if len(document_ids) != sum(chunk.documents for chunk in chunks):
        raise NotSure  # a duplicate document id: the validating reader names both lines
    if reading.restrict_to_gt_types:
        # Scored unrestricted, as if every predicted type were in gold; if some were not, score again
        # knowing gold's types (restricting to types that every prediction has changes nothing).
        present, totals = scores.type_totals()
        gold, predicted = totals[:, 0] > 0, totals[:, 1] > 0  # TYPE_STORED_FIELDS starts "gold", "predicted"
        if np.any(predicted & ~gold):
            allowed = frozenset(scores.type_names[code] for code in present[gold].tolist())
            del scores, scored  # before the second pass's
            restricted = [replace(chunk, allowed_predicted_types=allowed) for chunk in chunks]
            scores, _ = _score_file_chunks(restricted, executor, None)
    return ScoredSpanDocuments(
        scores=scores, predicted_ids=frozenset(document_ids.difference(unpredicted_ids)), warnings=[]
    )


def _score_file_chunks(
    chunks: list[SpanFileChunk], executor: Executor, progress: ProgressCallback | None
) -> tuple[SpanScores, set[str]]:
    """Every chunk scored and merged, and the documents without a prediction line; NotSure from the
    first chunk that was not sure (the chunks after it are then not read)."""
    unpredicted_ids: set[str] = set()

    def partials() -> Iterator[SpanPartial]:
        for scored, unpredicted in executor.map(score_span_file_chunk, chunks):
            unpredicted_ids.update(unpredicted)
            yield scored

    scores, _ = merge_span_partials(partials(), sum(chunk.documents for chunk in chunks), progress)
    return scores, unpredicted_ids


def _read_validate_and_score(reading: _Reading, gold_annotator: str | None) -> ScoredSpanDocuments:
    """The validating path: every input the importers read, every problem worded."""
    gold_path, predictions_path, label_map = reading.gold_path, reading.predictions_path, reading.label_map
    limits = ArchiveLimits()
    problems = ProblemCollector()
    labels = LabelResolver(label_map, input_name=str(predictions_path))
    predicted = iter_span_documents(  # read after gold: a generator
        predictions_path, role="predictions", labels=labels, limits=limits, problems=problems
    )
    try:
        gold_corpus = load_span_corpus(gold_path, label_map=label_map, limits=limits, role="gold")
        gold_documents = select_annotator(gold_corpus, gold_annotator, source=str(gold_path))
    except InputValidationError as error:
        # Pairing against broken gold would only add noise, but the predictions' own problems
        # (malformed lines, bad offsets) are worth reporting in the same pass.
        for _ in predicted:
            pass
        raise InputValidationError([*error.problems, *problems.errors]) from None
    allowed_types = (
        frozenset(span.entity_type for document in gold_documents for span in document.spans)
        if reading.restrict_to_gt_types
        else None
    )
    pairing = SpanPairing(gold_documents, problems)
    gold_warnings = gold_corpus.warnings
    # From here on the pairing holds the only references to gold, and frees each document once scored.
    del gold_corpus, gold_documents
    # After the first problem the pairs are still read (to report every problem) but no longer scored:
    # the run will fail. The merge puts scores back in gold order, whatever the predictions' order.
    paired = (item for item in pairing.pair_stream(predicted) if not problems.errors)
    chunks = span_chunks(paired, allowed_predicted_types=allowed_types, keep_leaked=reading.keep_leaked)
    scores, _ = merge_span_partials(
        reading.executor.map(score_span_chunk, chunks), pairing.gold_count, reading.progress
    )
    problems.raise_if_errors()
    warnings = [*gold_warnings, *problems.warnings, *labels.warnings()]
    if not pairing.predicted_at:
        warnings.append(ImportProblem(NO_PREDICTIONS, file=str(predictions_path)))
    return ScoredSpanDocuments(
        scores=scores,
        predicted_ids=frozenset(pairing.predicted_at),
        warnings=warnings,
    )


def pair_span_documents(
    gold_documents: Iterable[SpanDocument], predicted_documents: Iterable[SpanDocument]
) -> list[DocumentSpans]:
    """Each gold document with its predictions (none: it predicted nothing), in gold order;
    InputValidationError lists every problem of the pairing."""
    problems = ProblemCollector()
    pairing = SpanPairing(gold_documents, problems)
    paired = sorted(pairing.pair_stream(predicted_documents), key=lambda item: item[0])
    problems.raise_if_errors()
    return [document_spans for _, document_spans in paired]


class SpanPairing:
    """Pairs a stream of predicted documents with gold documents (each id once). Gold documents are
    released once paired, so memory shrinks as predictions stream (if the caller holds none of them);
    a document with problems is not yielded."""

    def __init__(self, gold_documents: Iterable[SpanDocument], problems: ProblemCollector):
        self.problems = problems
        self._pending = {
            document.document_id: (position, document) for position, document in enumerate(gold_documents)
        }
        self.gold_count = len(self._pending)
        # Where each predicted document read so far (paired or not) was first seen.
        self.predicted_at: dict[str, str] = {}

    def pair_stream(self, predicted_documents: Iterable[SpanDocument]) -> Iterator[tuple[int, DocumentSpans]]:
        """Yield (gold position, paired document) for every prediction, then for unpredicted gold."""
        for predicted in predicted_documents:
            paired = self._pair(predicted)
            if paired is not None:
                yield paired
        for position, gold in self._pending.values():
            yield position, _document_spans(gold, [])
        self._pending.clear()

    def _pair(self, predicted: SpanDocument) -> tuple[int, DocumentSpans] | None:
        document_id = predicted.document_id
        where = {"file": predicted.source, "line": predicted.line, "document_id": document_id}
        earlier = self.predicted_at.get(document_id)
        if earlier is not None:
            self.problems.error(
                f"duplicate document id (first seen at {earlier})", field="document_id", **where
            )
            return None
        self.predicted_at[document_id] = predicted.location()
        entry = self._pending.pop(document_id, None)
        if entry is None:
            self.problems.error(
                "prediction for a document that is not in the gold data", field="document_id", **where
            )
            return None
        position, gold = entry
        if predicted.text is not None and predicted.text != gold.text:
            self.problems.error(
                f"text differs from the gold text of this document ({_first_difference(predicted.text, gold.text)})",
                field="text",
                **where,
            )
            return None
        if predicted.text is None and not _fits_gold_text(
            predicted.spans, gold.text or "", self.problems, where
        ):
            return None
        return position, _document_spans(gold, predicted.spans)


def _fits_gold_text(
    spans: Sequence[SpanAnnotation], text: str, problems: ProblemCollector, where: dict[str, Any]
) -> bool:
    """Check predicted spans that came without their document's text against the gold text."""
    valid = True
    text_length = len(text)
    for index, span in enumerate(spans):
        if span.end > text_length:
            problems.error(
                offsets_problem(span.start, span.end, text_length), field=f"entities[{index}].end", **where
            )
            valid = False
        elif span.text is not None and text[span.start : span.end] != span.text:
            problems.error(
                text_mismatch_problem(span.start, span.end, span.text, text[span.start : span.end]),
                field=f"entities[{index}].text",
                **where,
            )
            valid = False
    return valid


def _first_difference(predicted: str, gold: str) -> str:
    """Where two texts part, without quoting them: error messages may end up in logs."""
    if len(predicted) != len(gold):
        return f"{len(predicted)} code points instead of {len(gold)}"
    position = len(os.path.commonprefix([predicted, gold]))
    return f"first difference at code point {position}"


def _document_spans(gold: SpanDocument, predicted: Sequence[SpanAnnotation]) -> DocumentSpans:
    # The importer's spans go to the engine as they are: `SpanAnnotation` starts with the engine
    # `Span`'s fields (start, end, entity_type), and the engine reads only those. Rebuilding two
    # million frozen `Span`s would cost seconds of a benchmark whose whole budget is about twelve.
    return DocumentSpans(
        gold.document_id, gold.text or "", cast(Sequence[Span], gold.spans), cast(Sequence[Span], predicted)
    )
