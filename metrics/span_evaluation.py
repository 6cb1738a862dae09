"""Span evaluation from files: import gold and predictions, pair them, score them, build results.json.

The glue between the importers (`annotations.importers`, plain Python) and the span engine
(`metrics.engine.spans`). It imports nothing from Django, so the offline `evaluate_spans` command,
the server's scoring jobs and the benchmark all run the same code.

Memory and speed: gold is loaded whole (it must be: a prediction can name any gold document), but
predictions are streamed. Each predicted document is checked, paired with its gold document, scored
and dropped; the gold document is dropped too. Only per-document scores stay.

Two JSONL files of at least PARALLEL_MIN_DOCUMENTS documents are read and scored by two processes
(this one and a forked child), each owning the documents whose id hashes to it; anything unusual (a
problem, a warning, a daemonic process such as a Celery worker) takes the one-process path, so
results, warnings and errors are always those of one process. See `_load_and_score_in_parallel`.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import pickle
import re
import sys
import time
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any, cast

from annotations.importers.errors import ImportProblem, InputValidationError, ProblemCollector
from annotations.importers.labels import LabelMap, LabelResolver, load_label_map
from annotations.importers.sources import ArchiveLimits, InMemorySource, SourceInput
from annotations.importers.span_jsonl import iter_jsonl_lines, offsets_problem, text_mismatch_problem
from annotations.importers.span_types import SpanAnnotation, SpanDocument
from annotations.importers.spans import iter_span_documents, load_span_corpus, select_annotator
from metrics.engine.spans import (
    DocumentScore,
    DocumentSpans,
    LeakedSpan,
    Span,
    aggregate,
    score_document_batch,
)
from metrics.engine.spans.batch import BATCH_DOCUMENTS
from metrics.engine.uncertainty import CLOPPER_PEARSON_METHOD
from metrics.intervals import (
    DEFAULT_INTERVALS,
    IntervalSettings,
    attach_span_intervals,
    span_results_intervals,
)
from metrics.memory import release_free_memory

FORMAT_VERSION = 1

ProgressCallback = Callable[[int, int], None]
"""Called with (documents scored, documents in gold) as scoring advances."""


def evaluate_span_paths(
    gold_path: SourceInput,
    predictions_path: SourceInput,
    *,
    label_map_path: str | os.PathLike[str] | None = None,
    restrict_to_gt_types: bool = False,
    include_sensitive_text: bool = False,
    progress: ProgressCallback | None = None,
    gold_annotator: str | None = None,
    limits: ArchiveLimits | None = None,
    intervals: IntervalSettings = DEFAULT_INTERVALS,
    phase_seconds: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Score predictions against gold and return the results body (SEMANTICS.md section 1).

    Raises InputValidationError listing every problem in either input; nothing is scored then.
    The body is the engine's (micro, macro, leakage, per_type, per_document,
    restricted_predictions_dropped) plus `format_version`, `documents`, `config` and `warnings`.
    Confidence intervals sit beside their metrics as `<metric>_ci` (`metrics.intervals`), computed by
    default; their settings are recorded at `config.intervals` (`intervals.resamples == 0`: none).
    `phase_seconds`, when given, receives the wall time of "load and score", "aggregate" and
    "intervals".
    """
    with paused_garbage_collection():
        return _evaluate_span_paths(
            gold_path,
            predictions_path,
            label_map_path=label_map_path,
            restrict_to_gt_types=restrict_to_gt_types,
            include_sensitive_text=include_sensitive_text,
            progress=progress,
            gold_annotator=gold_annotator,
            limits=limits or ArchiveLimits(),
            intervals=intervals,
            timer=_PhaseTimer(phase_seconds),
        )


def _evaluate_span_paths(
    gold_path: SourceInput,
    predictions_path: SourceInput,
    *,
    label_map_path: str | os.PathLike[str] | None,
    restrict_to_gt_types: bool,
    include_sensitive_text: bool,
    progress: ProgressCallback | None,
    gold_annotator: str | None,
    limits: ArchiveLimits,
    intervals: IntervalSettings,
    timer: _PhaseTimer,
) -> dict[str, Any]:
    with timer("load and score"):
        scored = _load_and_score(
            gold_path,
            predictions_path,
            label_map_path=label_map_path,
            restrict_to_gt_types=restrict_to_gt_types,
            progress=progress,
            gold_annotator=gold_annotator,
            limits=limits,
        )
    # Intervals first: their count tables are freed before the results body (a row per document)
    # is built, so the two never sit in memory together. Both read only the scores.
    release_free_memory()  # what loading freed (the gold documents) goes back before the next peak
    with timer("intervals"):
        span_intervals = span_results_intervals(scored.scores, intervals)
    release_free_memory()
    with timer("aggregate"):
        results = aggregate(scored.scores, include_sensitive_text=include_sensitive_text)
    attach_span_intervals(results, span_intervals)
    return {
        "format_version": FORMAT_VERSION,
        "documents": scored.gold_count,
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


@dataclass
class ScoredSpanDocuments:
    """Every gold document scored against one prediction set, before aggregation."""

    scores: list[DocumentScore]  # one per gold document, in gold order
    gold_count: int
    predicted_ids: frozenset[str]  # the documents the prediction set holds (the others predicted nothing)
    warnings: list[ImportProblem]


def score_span_paths(
    gold_path: SourceInput,
    predictions_path: SourceInput,
    *,
    label_map_path: str | os.PathLike[str] | None = None,
    restrict_to_gt_types: bool = False,
    gold_annotator: str | None = None,
    limits: ArchiveLimits | None = None,
) -> ScoredSpanDocuments:
    """Read, check, pair and score, as `evaluate_span_paths` does, and stop before aggregating (for
    the paired comparison of two runs). Raises InputValidationError listing every problem."""
    with paused_garbage_collection():
        return _load_and_score(
            gold_path,
            predictions_path,
            label_map_path=label_map_path,
            restrict_to_gt_types=restrict_to_gt_types,
            progress=None,
            gold_annotator=gold_annotator,
            limits=limits or ArchiveLimits(),
        )


def _load_and_score(
    gold_path: SourceInput,
    predictions_path: SourceInput,
    *,
    label_map_path: str | os.PathLike[str] | None,
    restrict_to_gt_types: bool,
    progress: ProgressCallback | None,
    gold_annotator: str | None,
    limits: ArchiveLimits,
) -> ScoredSpanDocuments:
    label_map = load_label_map(label_map_path)
    if _can_score_in_parallel(
        gold_path, predictions_path, restrict_to_gt_types=restrict_to_gt_types, gold_annotator=gold_annotator
    ):
        scored = _load_and_score_in_parallel(
            gold_path, predictions_path, label_map=label_map, progress=progress
        )
        if scored is not None:
            return scored
        # Something was not plain (a problem, a warning, a worker that failed): the one-process path
        # reads everything again and reports it exactly as it always does.
    gold_problems: list[ImportProblem] = []
    try:
        gold_corpus = load_span_corpus(gold_path, label_map=label_map, limits=limits, role="gold")
        gold_documents = select_annotator(gold_corpus, gold_annotator, source=str(gold_path))
    except InputValidationError as error:
        gold_problems = error.problems
        gold_documents = []

    problems = ProblemCollector()
    labels = LabelResolver(label_map, input_name=str(predictions_path))
    predicted = iter_span_documents(
        predictions_path, role="predictions", labels=labels, limits=limits, problems=problems
    )
    if gold_problems:
        # Pairing against broken gold would only add noise, but the predictions' own problems
        # (malformed lines, bad offsets) are worth reporting in the same pass.
        for _ in predicted:
            pass
        raise InputValidationError([*gold_problems, *problems.errors])

    allowed_types = (
        frozenset(span.entity_type for document in gold_documents for span in document.spans)
        if restrict_to_gt_types
        else None
    )
    pairing = SpanPairing(gold_documents, problems)
    gold_warnings = gold_corpus.warnings
    # From here on the pairing holds the only references to gold, and frees each document once scored.
    del gold_corpus, gold_documents
    scores: list[tuple[int, DocumentScore]] = []
    total = pairing.gold_count
    for batch in _batches(pairing.pair_stream(predicted)):
        if problems.errors:
            continue  # the run will fail; keep reading only to report every problem
        positions = [position for position, _ in batch]
        batch_scores = score_document_batch(
            [document for _, document in batch], allowed_predicted_types=allowed_types
        )
        scores.extend(zip(positions, batch_scores, strict=True))
        if progress is not None:
            progress(len(scores), total)
    problems.raise_if_errors()

    # Scores are put back in gold order, so results never depend on the order of the predictions.
    scores.sort(key=lambda item: item[0])
    warnings = [*gold_warnings, *problems.warnings, *labels.warnings()]
    if pairing.predicted_count == 0:
        warnings.append(
            ImportProblem(
                "predictions hold no documents: every gold span counts as missed", file=str(predictions_path)
            )
        )
    return ScoredSpanDocuments(
        scores=[score for _, score in scores],
        gold_count=total,
        predicted_ids=frozenset(pairing.predicted_ids),
        warnings=warnings,
    )


# Two processes (the parent and one forked child) score from this many gold documents on; below it,
# starting a process costs more than it saves.
PARALLEL_MIN_DOCUMENTS = 2_000
_PARALLEL_PROCESSES = 2
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
# Where a line names its document, found without parsing the line: the hint routes the line to the
# process that owns the document, and is checked against the parsed id (see _owned_lines).
_DOCUMENT_ID_HINT = re.compile(rb'"document_id"\s*:\s*"((?:[^"\\]|\\.)*)"')
# The usual case, tried first from the key on: a value without escapes (one character class, no
# alternation per character).
_PLAIN_ID_VALUE = re.compile(rb'\s*:\s*"([^"\\]*)"')
_ID_KEY = b'"document_id"'


def _can_score_in_parallel(
    gold_path: SourceInput,
    predictions_path: SourceInput,
    *,
    restrict_to_gt_types: bool,
    gold_annotator: str | None,
) -> bool:
    """Two processes only for the plain case: two JSONL files, a fork-capable platform, not inside a
    daemonic process (a Celery worker may not have children), and enough documents to pay off."""
    if restrict_to_gt_types or gold_annotator is not None:
        return False
    if "fork" not in multiprocessing.get_all_start_methods() or multiprocessing.current_process().daemon:
        return False
    billiard = sys.modules.get("billiard")  # Celery's fork of multiprocessing keeps its own record
    if billiard is not None and getattr(billiard.current_process(), "daemon", False):
        return False
    if os.environ.get("EVALPROJECT_SPAN_PROCESSES") == "1":
        return False
    for path in (gold_path, predictions_path):
        if isinstance(path, InMemorySource) or not str(path).lower().endswith(_JSONL_SUFFIXES):
            return False
        if not os.path.isfile(path):
            return False
    return _has_lines(gold_path, PARALLEL_MIN_DOCUMENTS)


def _has_lines(path: str | os.PathLike[str], wanted: int) -> bool:
    """True when the file holds at least `wanted` line breaks (reads only as far as it must)."""
    found = 0
    with open(path, "rb") as stream:
        while found < wanted:
            block = stream.read(1 << 20)
            if not block:
                return False
            found += block.count(b"\n")
    return True


def _owner(document_id: str, parts: int) -> int:
    """The process that scores a document: a stable hash of its id (never Python's salted hash)."""
    return zlib.crc32(document_id.encode("utf-8", "surrogatepass")) % parts


class _Share:
    """The lines of a JSONL file one process reads: those whose document it owns.

    A line's document id is found by a pattern (no parse); a line where the pattern finds nothing is
    read by every process, each keeping the document only if it owns it. `misrouted` is set when a
    parsed id differs from its line's hint: then the shares are wrong and the caller falls back.
    """

    def __init__(self, path: str | os.PathLike[str], part: int, parts: int) -> None:
        self.path, self.part, self.parts = path, part, parts
        self.hinted: dict[int, str] = {}
        self.misrouted = False

    def lines(self) -> Iterator[tuple[int, bytes]]:
        search = _DOCUMENT_ID_HINT.search
        plain_value = _PLAIN_ID_VALUE.match
        key_length = len(_ID_KEY)
        part, parts = self.part, self.parts
        with open(self.path, "rb") as stream:
            for line_number, raw_line in enumerate(stream, start=1):
                key = raw_line.find(_ID_KEY)
                found = None if key < 0 else plain_value(raw_line, key + key_length) or search(raw_line, key)
                if found is None:
                    yield line_number, raw_line
                    continue
                raw_id = found.group(1)
                try:
                    document_id = (
                        json.loads(b'"' + raw_id + b'"') if b"\\" in raw_id else raw_id.decode("utf-8")
                    )
                except ValueError:
                    yield line_number, raw_line  # not a decodable id: let the parse decide
                    continue
                if _owner(document_id, parts) == part:
                    self.hinted[line_number] = document_id
                    yield line_number, raw_line

    def keep(self, documents: Iterable[SpanDocument]) -> Iterator[SpanDocument]:
        """The documents this process owns, checking each hinted line's parsed id."""
        part, parts, hinted = self.part, self.parts, self.hinted
        for document in documents:
            hint = hinted.pop(document.line, None)  # type: ignore[arg-type]
            if hint is not None:
                if hint != document.document_id:
                    self.misrouted = True
                yield document
            elif _owner(document.document_id, parts) == part:
                yield document


# What a share sends back: (gold line, document id, counts as bytes, types, leaked spans as tuples,
# dropped by type) per scored document; tuples, bytes and strings pickle in C.
_ScoreRow = tuple[int, str, bytes, tuple[str, ...], tuple, tuple[tuple[str, int], ...]]


@dataclass
class _ShareResult:
    plain: bool  # False: a problem, a warning or a misrouted line; the caller falls back
    rows: list[tuple[int, DocumentScore]]
    gold_count: int
    predicted_ids: list[str]


def _score_share(
    gold_path: str | os.PathLike[str],
    predictions_path: str | os.PathLike[str],
    label_map: LabelMap,
    part: int,
    parts: int,
    progress: ProgressCallback | None = None,
) -> _ShareResult:
    """Read, check, pair and score the documents one process owns (see `_Share`)."""
    problems = ProblemCollector()
    gold_labels = LabelResolver(label_map, input_name=str(gold_path))
    gold_share = _Share(gold_path, part, parts)
    gold_documents = list(
        gold_share.keep(
            iter_jsonl_lines(
                gold_share.lines(), source=str(gold_path), role="gold", labels=gold_labels, problems=problems
            )
        )
    )
    if problems.errors or problems.warnings or gold_share.misrouted or gold_labels.warnings():
        return _ShareResult(False, [], 0, [])
    pairing = SpanPairing(gold_documents, problems)
    gold_lines = {document.document_id: document.line for document in gold_documents}
    del gold_documents
    labels = LabelResolver(label_map, input_name=str(predictions_path))
    predicted_share = _Share(predictions_path, part, parts)
    predicted = predicted_share.keep(
        iter_jsonl_lines(
            predicted_share.lines(),
            source=str(predictions_path),
            role="predictions",
            labels=labels,
            problems=problems,
        )
    )
    rows: list[tuple[int, DocumentScore]] = []
    estimated_total = pairing.gold_count * parts
    for batch in _batches(pairing.pair_stream(predicted)):
        if problems.errors:
            break
        documents = [document for _, document in batch]
        lines = [gold_lines[document.document_id] for document in documents]
        rows.extend(zip(lines, score_document_batch(documents), strict=True))
        if progress is not None:
            progress(min(len(rows) * parts, estimated_total), estimated_total)
    if problems.errors or problems.warnings or predicted_share.misrouted or labels.warnings():
        return _ShareResult(False, [], 0, [])
    return _ShareResult(True, rows, pairing.gold_count, list(pairing.predicted_ids))


def _score_row(line: int, score: DocumentScore) -> _ScoreRow:
    leaked = tuple(tuple(span) for span in score.leaked_spans)
    return (line, score.document_id, score.counts.tobytes(), score.types, leaked, score.dropped_by_type)


def _from_score_row(row: _ScoreRow) -> tuple[int, DocumentScore]:
    line, document_id, counts, types, leaked, dropped = row
    score = DocumentScore(
        document_id=document_id,
        counts=array("i", counts),
        types=tuple(map(sys.intern, types)),  # as score_document does: one string per type
        leaked_spans=tuple(LeakedSpan(*span) for span in leaked),
        dropped_by_type=dropped,
    )
    return line, score


def _load_and_score_in_parallel(
    gold_path: SourceInput,
    predictions_path: SourceInput,
    *,
    label_map: LabelMap,
    progress: ProgressCallback | None,
) -> ScoredSpanDocuments | None:
    """`_load_and_score` in two processes, each owning the documents whose id hashes to it; None when
    the input is not plain (any problem or warning), for the caller to run the one-process path.

    This process scores one share, a forked child the other (reading the files itself, so nothing
    big is shared and copy-on-write copies nothing). The child sends its scores back through a pipe
    as plain tuples. Scores are merged in gold line order, which is gold order: with no problem
    every non-blank gold line is one document. DocumentScores are those `score_document` gives in the
    one-process path, so every number is the same.
    """
    gold_path = cast("str | os.PathLike[str]", gold_path)
    predictions_path = cast("str | os.PathLike[str]", predictions_path)
    parts = _PARALLEL_PROCESSES
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child, measured by the parallel tests' results
        status = 1
        try:
            os.close(read_end)
            result = _score_share(gold_path, predictions_path, label_map, 1, parts)
            with os.fdopen(write_end, "wb") as stream:
                pickle.dump(
                    (
                        result.plain,
                        [_score_row(line, score) for line, score in result.rows],
                        result.gold_count,
                        result.predicted_ids,
                    ),
                    stream,
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    child_result: tuple | None = None
    reader = os.fdopen(read_end, "rb")
    try:
        own = _score_share(gold_path, predictions_path, label_map, 0, parts, progress)
        try:
            child_result = pickle.load(reader)
        except Exception:  # a child that failed half-way: the one-process path will say why
            child_result = None
    finally:
        # Closed before waiting: a child still writing gets a broken pipe and ends, never blocks.
        reader.close()
        _, status = os.waitpid(child, 0)
    if child_result is None or os.waitstatus_to_exitcode(status) != 0:
        return None
    child_plain, child_rows, child_gold_count, child_predicted_ids = child_result
    if not (own.plain and child_plain):
        return None
    rows = own.rows
    rows.extend(map(_from_score_row, child_rows))
    del child_rows, child_result
    rows.sort(key=lambda item: item[0])
    total = own.gold_count + child_gold_count
    if total == 0:
        return None  # "no gold documents": the one-process path says so
    if progress is not None:
        progress(total, total)
    predicted_ids = frozenset(own.predicted_ids).union(child_predicted_ids)
    warnings = []
    if not predicted_ids:
        warnings.append(
            ImportProblem(
                "predictions hold no documents: every gold span counts as missed", file=str(predictions_path)
            )
        )
    return ScoredSpanDocuments(
        scores=[score for _, score in rows], gold_count=total, predicted_ids=predicted_ids, warnings=warnings
    )


def pair_span_documents(
    gold_documents: Iterable[SpanDocument], predicted_documents: Iterable[SpanDocument]
) -> list[DocumentSpans]:
    """Pair each gold document with its predictions, in gold order, checking that they belong together.

    A gold document without predictions predicted nothing. Raises InputValidationError listing every
    problem: duplicate ids, predictions for unknown documents, predictions whose `text` differs from
    the gold text, prediction offsets or entity texts that do not fit the gold text.
    """
    problems = ProblemCollector()
    pairing = SpanPairing(gold_documents, problems)
    paired = sorted(pairing.pair_stream(predicted_documents), key=lambda item: item[0])
    problems.raise_if_errors()
    return [document_spans for _, document_spans in paired]


class SpanPairing:
    """Pairs a stream of predicted documents with gold documents (one annotation per document).

    Gold documents are held by id and released once paired, so memory shrinks as predictions stream
    (provided the caller drops its own references to them). Problems go to `problems`; a document
    with problems is not yielded.
    """

    def __init__(self, gold_documents: Iterable[SpanDocument], problems: ProblemCollector):
        self.problems = problems
        self.predicted_count = 0
        self._pending: dict[str, tuple[int, SpanDocument]] = {}
        self._predicted_at: dict[str, tuple[str, int | None]] = {}
        for position, document in enumerate(gold_documents):
            first = self._pending.setdefault(document.document_id, (position, document))
            if first[1] is not document:
                problems.error(
                    f"duplicate document id (first seen at {first[1].location()})",
                    file=document.source,
                    line=document.line,
                    document_id=document.document_id,
                    field="document_id",
                )
        self.gold_count = len(self._pending)

    @property
    def predicted_ids(self) -> Iterable[str]:
        """The ids of the predicted documents read so far (paired or not)."""
        return self._predicted_at.keys()

    def pair_stream(self, predicted_documents: Iterable[SpanDocument]) -> Iterator[tuple[int, DocumentSpans]]:
        """Yield (gold position, paired document) for every prediction, then for unpredicted gold."""
        for predicted in predicted_documents:
            self.predicted_count += 1
            paired = self._pair(predicted)
            if paired is not None:
                yield paired
        for position, gold in self._pending.values():
            yield position, _document_spans(gold, [])
        self._pending.clear()

    def _pair(self, predicted: SpanDocument) -> tuple[int, DocumentSpans] | None:
        document_id = predicted.document_id
        where = {"file": predicted.source, "line": predicted.line, "document_id": document_id}
        earlier = self._predicted_at.get(document_id)
        if earlier is not None:
            first_seen = earlier[0] if earlier[1] is None else f"{earlier[0]}:{earlier[1]}"
            self.problems.error(
                f"duplicate document id (first seen at {first_seen})", field="document_id", **where
            )
            return None
        self._predicted_at[document_id] = (predicted.source, predicted.line)
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


def _batches(paired: Iterator[tuple[int, DocumentSpans]]) -> Iterator[list[tuple[int, DocumentSpans]]]:
    """Paired documents in lists of BATCH_DOCUMENTS, for `score_document_batch`; a paired document is
    held only until its batch is scored."""
    while batch := list(islice(paired, BATCH_DOCUMENTS)):
        yield batch


@contextmanager
def paused_garbage_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large data set is built and scored.

    Loading creates millions of long-lived objects; each allocation burst triggers collections
    that walk all of them again, which doubled loading time in measurement. The data holds no
    reference cycles (reference counting frees everything), so pausing loses nothing.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _PhaseTimer:
    """Adds the wall time of each named phase to a dict, when the caller passed one."""

    def __init__(self, seconds: dict[str, float] | None) -> None:
        self.seconds = seconds

    @contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            if self.seconds is not None:
                self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - start
