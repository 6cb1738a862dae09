"""An offline extraction evaluation on two cores: two processes each read, score and write one part
of the gold documents, straight from the files, and this one joins the parts.

Why two processes, and why split before reading: nearly all of an evaluation is Python work that
holds the GIL (building the documents, the comparison loop, encoding the artefacts), so only a second
process uses a second core. A worker forked *after* reading copies every page whose reference counts
it touches (measured: ~195 MB of private memory for one worker), which a memory budget cannot pay.
Split before reading, each process builds only its own documents: the memory is split, not copied.

How the work is split (`Shard`; this process is half 1, a forked one half 2):
- the gold is an EPPI export: its References array is cut in two between two references, without
  parsing (`eppi.split_references`), and each half parses only its part (`read_eppi_gold_part`);
  the halves then exchange their document ids (`_exchange_ids`), so duplicates and the set of gold
  ids are known to each. An export laid out otherwise (no reference starting with its ItemId, say)
  is parsed whole by each half, which builds its slice (`Shard`); half 2 then waits for half 1's
  parse and parses with json, so the two parses' peaks of memory do not add up (`_Baton`). (Parsed
  once before forking, the export's pages were shared, and each process's reference counting
  copied all of them.);
- each reads the prediction lines of its own documents (`read_predictions_jsonl` with
  `owned_document_ids`; other lines are skipped once their document id is read off the raw bytes);
- each scores its documents and writes its part of goldstandard_llm_comparison.csv,
  llm_annotations.json and extraction_metadata.json into the staging folder; half 2 sends, once
  scored, its rows' per-document counts (the intervals' input), then what the metrics read of its
  rows (`MetricRow`), its warnings and its metadata figures;
- this process resamples the intervals on a helper thread while it computes the metrics over all
  rows, writes the other artefacts and joins the parts, byte for byte (the items of the JSON lists in
  the order of their lines in the predictions file).

The artefacts are byte-identical to the one-process path (`tests/artefacts/test_extraction_split.py`
holds the two together). Whatever the split cannot place exactly makes the evaluation run again in
one process, whose answer (or error message) is the reference: an input problem in either half, a
warning of the predictions reader (unknown fields are reported once, at their first line in the
whole file), a line read for the wrong half, gold that is not an EPPI export (JSONL gold is read in
one process), or a process that may not fork (threads, not Linux).
"""

from __future__ import annotations

import contextlib
import heapq
import os
import pickle
import shutil
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for_futures
from dataclasses import dataclass, field
from itertools import islice, starmap
from operator import attrgetter
from pathlib import Path
from typing import Any

from annotations.importers.attribute_jsonl import GoldSet, InputSource, Shard, source_name
from annotations.importers.eppi import ExportNotSplit, read_eppi_gold, read_eppi_gold_part
from annotations.importers.errors import ImportProblem, InputValidationError
from annotations.importers.extraction_predictions import (
    PredictionSet,
    ShardRoutingError,
    read_predictions_jsonl,
)
from annotations.importers.prompts_csv import PromptSet, read_prompts_csv
from metrics import artefacts
from metrics.artefacts import bundle, run_records
from metrics.engine.attributes.comparison import (
    add_unknown_counts,
    compare_document_slice,
    documents_without_context,
    no_context_warning,
    unknown_attribute_warnings,
    unscored_document_ids,
)
from metrics.engine.attributes.evaluation import evaluation_from_rows
from metrics.engine.attributes.parallel import can_fork_workers
from metrics.engine.attributes.types import AttributeType, EvaluationSettings, MetricRow
from metrics.engine.forking import ForkedWork
from metrics.engine.uncertainty.attribute_metrics import attribute_document_counts
from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.extraction_evaluation import (
    ExtractionConfig,
    ExtractionInputs,
    ExtractionRun,
    InputSummary,
    _bulk_allocation,
    _PhaseTimer,
    attribute_warnings_for_code_sets,
    gold_file_format,
    run_metadata,
)
from metrics.intervals import IntervalSettings, extraction_intervals_from_counts
from metrics.memory import release_free_memory

# The share of the documents (and of the export's references, by their bytes) this process, half 1,
# reads and scores. Balanced by measurement on the benchmark: half 1 writes all its parts before it
# joins the run, half 2 its comparison CSV only after it has sent its outcome.
OWN_SHARE = 0.46
# Part files in the staging folder, joined into the artefacts and removed before it is renamed.
_COMPARISON_PART = ".part-2-" + bundle.COMPARISON_CSV
_ANNOTATIONS_PART = ".part-{half}-" + bundle.LLM_ANNOTATIONS_JSON
_METADATA_PART = ".part-{half}-" + bundle.EXTRACTION_METADATA_JSON
_OUTCOME_PART = ".part-2-outcome.pickle"
# What the metrics read of half 2's rows, as pickles of `_ROWS_PER_PIECE` tuples each: half 1 turns
# each piece into MetricRows before it reads the next, never holding all the tuples beside them.
_ROWS_PART = ".part-2-rows.pickle"
_ROWS_PER_PIECE = 10_000
# Documents compared at a time by a half (`_score_half`).
_DOCUMENTS_PER_CHUNK = 2_500
_COUNTS_PART = ".part-2-counts.pickle"
_IDS_PART = ".part-{half}-ids.pickle"
_COPY_BUFFER = 1 << 20


class _Baton:
    """A one-time signal from one process to the other, through a pipe made before the fork.

    Both processes hold both ends after the fork; each closes the end it does not use (`send_here`,
    `wait_here`). A sender that ends without `hand_over` closes its end all the same (at exit, or
    when it is killed), so a waiting process never waits for ever."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()

    def send_here(self) -> None:
        os.close(self._read)
        self._read = -1

    def wait_here(self) -> None:
        os.close(self._write)
        self._write = -1

    def hand_over(self) -> None:
        """Send the signal (once; later calls do nothing)."""
        if self._write >= 0:
            with contextlib.suppress(BrokenPipeError):  # the other process has ended
                os.write(self._write, b".")
            os.close(self._write)
            self._write = -1

    def wait(self) -> bool:
        """Block until the signal (True) or until the sender's end is closed without it (False)."""
        received = os.read(self._read, 1) == b"."
        os.close(self._read)
        self._read = -1
        return received

    def close(self) -> None:
        for end in (self._read, self._write):
            if end >= 0:
                os.close(end)
        self._read = self._write = -1


class _RunInOneProcess(Exception):
    """The split cannot give the one-process answer exactly: run in one process instead."""


@dataclass(frozen=True)
class _WeightedShard(Shard):
    """A Shard whose first slice holds `OWN_SHARE` of the documents (two shards)."""

    def range(self, total: int) -> range:
        cut = round(total * OWN_SHARE)
        return range(0, cut) if self.index == 0 else range(cut, total)


@dataclass
class _ShardOutcome:
    """What one half sends to the joining process (all of it small, or numbers)."""

    gold_warnings: list[ImportProblem]
    n_gold_documents: int  # in the whole file
    n_prediction_lines: int  # in the whole file
    attribute_names: dict[str, str]
    prediction_lines: list[int]  # line numbers of its prediction documents, in file order
    metadata_entries: list[dict[str, Any]]  # in the same order
    gold_without_line: list[str]
    row_warnings: list[str] = field(default_factory=list)
    unknown_predicted: dict[str, int] = field(default_factory=dict)
    unscored: list[str] = field(default_factory=list)
    without_context: list[str] = field(default_factory=list)  # its documents predicted with no context
    # Any warning of the predictions reader sends the run to one process (see the module docstring).
    prediction_warnings: bool = False
    seconds: dict[str, float] = field(default_factory=dict)  # its phases' wall time


@dataclass
class _Split:
    """What both halves share: the inputs, the settings, the staging folder, the signals."""

    gold: InputSource
    predictions: InputSource
    prompt_set: PromptSet
    run_id: str
    settings: EvaluationSettings
    names: dict[str, str]  # "gold" / "prompts" / "predictions" -> the file name used in messages
    staging: Path
    # On the whole-file way (`_read_whole_gold`): half 1 has parsed the gold, and half 2 parses it
    # only then (a parse briefly takes about twice the parsed size: the bytes, orjson's own
    # document, the objects; two at once were the peak).
    gold_read: _Baton = field(default_factory=_Baton)
    # Each half has written the ids of its part of the gold (`_exchange_ids`).
    ids_from_1: _Baton = field(default_factory=_Baton)
    ids_from_2: _Baton = field(default_factory=_Baton)
    # Half 2 has written its rows' per-document counts: half 1 can resample the intervals.
    counted: _Baton = field(default_factory=_Baton)
    # Half 1's helper thread waiting for `counted`, then resampling (`_intervals_once_counted`).
    intervals: Future | None = None

    def close(self) -> None:
        """Half 1, once half 2 has ended: every end of the signals closed, the helper done."""
        self.gold_read.close()
        self.ids_from_1.close()
        self.ids_from_2.close()
        if self.intervals is not None:
            # The helper closes the end it waits on (half 2's end is closed: it returns at once);
            # closing it under the helper could close another file that took its number.
            wait_for_futures([self.intervals])
        else:
            self.counted.close()


def gold_is_splittable(gold: InputSource) -> bool:
    """True when the gold is an EPPI export, which each half can read its part of."""
    return gold_file_format(gold) == "eppi"


def evaluate_extraction_split(
    *,
    gold: InputSource,
    prompts: InputSource,
    predictions: InputSource,
    output_dir: str | Path,
    run_id: str,
    settings: EvaluationSettings,
    config: ExtractionConfig | None = None,
    intervals: IntervalSettings | None = None,
    phase_seconds: dict[str, float] | None = None,
) -> ExtractionRun | None:
    """Evaluate a run in two processes and write its artefact folder (atomically). None, with
    nothing written, when the split cannot give the one-process answer (see the module docstring):
    the caller then runs it in one process."""
    if not can_fork_workers() or not gold_is_splittable(gold):
        return None
    seconds: dict[str, float] = {}  # the phases, reported only if the split run is the answer
    timer = _PhaseTimer(seconds)
    names = {
        role: source_name(source)
        for role, source in (("gold", gold), ("prompts", prompts), ("predictions", predictions))
    }
    with _bulk_allocation():
        try:
            prompt_set = read_prompts_csv(prompts)
        except InputValidationError:
            return None
        try:
            with (
                artefacts.atomic_directory(output_dir) as staging,
                ThreadPoolExecutor(1, "intervals") as helper,
            ):
                split = _Split(gold, predictions, prompt_set, run_id, settings, names, staging)
                half_2 = ForkedWork(_forked_half, split)  # (no thread in this process yet)
                split.gold_read.send_here()
                split.ids_from_1.send_here()
                split.ids_from_2.wait_here()
                split.counted.wait_here()
                try:
                    run = _join_halves(split, half_2, helper, config, intervals or IntervalSettings(), timer)
                finally:
                    split.gold_read.hand_over()  # when half 1 failed before its gold was read
                    half_2.kill()  # nothing once it has ended; else it is no longer wanted
                    split.close()
        except _RunInOneProcess:
            return None
    if phase_seconds is not None:
        phase_seconds.update(seconds)
    return run


def _join_halves(
    split: _Split,
    half_2: ForkedWork,
    helper: ThreadPoolExecutor,
    config: ExtractionConfig | None,
    interval_settings: IntervalSettings,
    timer: _PhaseTimer,
) -> ExtractionRun:
    """Half 1 here while half 2 runs, then the joined run: its metrics and intervals, and every
    artefact in `split.staging`. _RunInOneProcess when the split cannot give the one-process answer."""
    try:
        own, rows, intervals_computed = _own_half(split, helper, interval_settings, timer)
        signals = half_2.results()
        with timer("wait for half 2"):
            next(signals)  # counted
            next(signals)  # its outcome written
        for half in (1, 2):  # both halves read the other's ids long before (`_exchange_ids`)
            (split.staging / _IDS_PART.format(half=half)).unlink(missing_ok=True)
        with timer("join"):
            other = _load(split.staging / _OUTCOME_PART)
            for piece in _load_pieces(split.staging / _ROWS_PART):
                rows.extend(starmap(MetricRow, piece))
        timer.seconds.update(other.seconds)
        if own.prediction_warnings or other.prediction_warnings:
            raise _RunInOneProcess
        with timer("metrics"):
            run = _joined_run(own, other, rows, split, config)
        run.interval_settings = interval_settings
        with timer("wait for half 2"):
            for _ in signals:  # to its end: every part of it is written
                pass
    except (InputValidationError, ShardRoutingError, ValueError, RuntimeError, StopIteration):
        raise _RunInOneProcess from None
    with timer("join the artefacts"):
        _write_joined_artefacts(run, own, other, split.staging)
    with timer("wait for the intervals"):
        try:
            run.intervals = intervals_computed.result()
        except _HalfTwoNotCounted:  # (it died: the other signals said so first)
            raise _RunInOneProcess from None
    _write_metrics_files(run, split.staging)
    return run


def _read_half(shard: Shard, split: _Split) -> tuple[GoldSet, PredictionSet]:
    types = {spec.attribute_id: spec.type for spec in split.prompt_set.attributes}
    try:
        # Each half parses only its part of the references: half the time and memory of the file.
        gold_set = read_eppi_gold_part(
            split.gold,
            name=split.names["gold"],
            attribute_types=types,
            part=shard.index,
            fraction=OWN_SHARE,
            place_part=lambda ids: _exchange_ids(shard, split, ids),
        )
    except ExportNotSplit:  # (both halves see the same layout, so both read the whole file)
        gold_set = _read_whole_gold(shard, split, types)
    finally:
        split.gold_read.hand_over()  # (half 2 waits for it only on the whole file's way)
    prediction_set = read_predictions_jsonl(
        split.predictions,
        name=split.names["predictions"],
        gold_document_ids=set(gold_set.all_document_ids or ()),
        owned_document_ids=set(gold_set.document_ids()),
    )
    return gold_set, prediction_set


def _exchange_ids(shard: Shard, split: _Split, own_ids: list[str]) -> tuple[int, list[str]]:
    """Where this half's part starts among the references, and every gold document id in file
    order: this half's and the other's, each written by its half and signalled. ValueError when an
    id is in both parts (the one-process read reports it)."""
    half = shard.index + 1
    _dump(own_ids, split.staging / _IDS_PART.format(half=half))
    sent, received = (
        (split.ids_from_1, split.ids_from_2) if half == 1 else (split.ids_from_2, split.ids_from_1)
    )
    sent.hand_over()
    if not received.wait():
        raise RuntimeError("the other half ended before it read its part of the gold")
    other_ids = _load(split.staging / _IDS_PART.format(half=3 - half), keep=True)
    if not set(own_ids).isdisjoint(other_ids):
        raise ValueError("a document id is in both parts of the gold")
    # (Every reference of a part has its id here, or the part's read failed: the run is then read
    # in one process.)
    return (0, [*own_ids, *other_ids]) if half == 1 else (len(other_ids), [*other_ids, *own_ids])


def _read_whole_gold(shard: Shard, split: _Split, types: dict[str, AttributeType]) -> GoldSet:
    """Each half parses the whole export and builds its slice of the references (`Shard`)."""
    if shard.index == 0:
        try:
            return read_eppi_gold(
                split.gold,
                name=split.names["gold"],
                attribute_types=types,
                shard=shard,
                on_parsed=split.gold_read.hand_over,
            )
        finally:
            split.gold_read.hand_over()  # (when the read failed before: half 2 must not wait)
    split.gold_read.wait()
    # Half 1 is past its parse's peak by now: the lean parse keeps the two processes' joint peak
    # lower (measured: 390-400 MB with orjson, whose parse needs 60 MB more for 0.25 s less).
    return read_eppi_gold(
        split.gold, name=split.names["gold"], attribute_types=types, shard=shard, lean_parse=True
    )


def _score_half(
    shard: Shard, split: _Split, timer: _PhaseTimer, comparison_csv: Path, *, header: bool
) -> tuple[_ShardOutcome, PredictionSet, list[MetricRow]]:
    """The half read and scored, its comparison rows written to `comparison_csv` as they are made
    (with the header when `header`): its outcome (without counts or rows), its predictions, and
    its rows as MetricRows.

    The documents are compared `_DOCUMENTS_PER_CHUNK` at a time, each chunk's rows written and
    kept only as what the metrics read: the full rows of a whole half (their texts above all) were
    ~30 MB of each process's peak. The same rows, warnings and counts as one call
    (`compare_document_slice` is safe per chunk of documents).
    """
    half = shard.index + 1
    with timer(f"half {half}: load"):
        gold_set, prediction_set = _read_half(shard, split)
    metric_rows: list[MetricRow] = []
    row_warnings: list[str] = []
    unknown: dict[str, int] = {}
    with timer(f"half {half}: score"), open(comparison_csv, "w", encoding="utf-8", newline="") as handle:
        documents = gold_set.documents
        for start in range(0, max(len(documents), 1), _DOCUMENTS_PER_CHUNK):
            rows, warnings, chunk_unknown = compare_document_slice(
                run_id=split.run_id,
                attributes=split.prompt_set.attributes,
                gold_documents=documents[start : start + _DOCUMENTS_PER_CHUNK],
                predictions=prediction_set.documents,
                settings=split.settings,
            )
            artefacts.write_comparison_rows(rows, handle, header=header and start == 0)
            metric_rows.extend(_metric_rows(map(_metric_fields, rows)))
            del rows
            row_warnings.extend(warnings)
            add_unknown_counts(unknown, chunk_unknown)
    documents = prediction_set.documents
    outcome = _ShardOutcome(
        gold_warnings=gold_set.warnings,
        n_gold_documents=len(gold_set.all_document_ids or ()),
        n_prediction_lines=len(documents) + prediction_set.other_lines,
        attribute_names=gold_set.attribute_names,
        prediction_lines=[prediction_set.lines[document_id] for document_id in documents],
        metadata_entries=run_records.metadata_entries(documents),
        gold_without_line=[
            document.document_id for document in gold_set.documents if document.document_id not in documents
        ],
        row_warnings=row_warnings,
        unknown_predicted=unknown,
        unscored=unscored_document_ids(gold_set.documents, split.prompt_set.attributes),
        without_context=documents_without_context(gold_set.documents, documents),
        prediction_warnings=bool(prediction_set.warnings),
    )
    return outcome, prediction_set, metric_rows


def _forked_half(split: _Split) -> Iterator[None]:
    """In the forked process: half 2. Yields each time it has written, in order: its rows'
    per-document counts (for the intervals) once scored (its part of the comparison CSV is written
    as it scores), then its outcome (after its parts of the two JSON records)."""
    split.gold_read.wait_here()
    split.ids_from_1.wait_here()
    split.ids_from_2.send_here()
    split.counted.send_here()
    timer = _PhaseTimer({})
    outcome, prediction_set, rows = _score_half(
        _WeightedShard(1, 2), split, timer, split.staging / _COMPARISON_PART, header=False
    )
    release_free_memory()  # this half's gold documents are freed; their pages go back
    # Through files, not the pipe: the pipe would hold this process until the other one reads, and
    # that one has its own half to finish first. The counts first: the intervals need only them.
    with timer("half 2: counts for the intervals"):
        _dump(attribute_document_counts(rows), split.staging / _COUNTS_PART)
    split.counted.hand_over()
    yield None
    # Its JSON parts next, and the predictions (the contexts, most of this half's memory) go back to
    # the system, before the outcome: half 1 joins the run on receiving it, and its memory then grows
    # (done after, the two processes' memory peaked together: 392-396 MB summed).
    _write_items(2, prediction_set, split, outcome.metadata_entries)
    del prediction_set
    release_free_memory()
    with timer("half 2: send"):
        _dump_pieces(map(_metric_fields, rows), split.staging / _ROWS_PART)
        outcome.seconds = timer.seconds
        _dump(outcome, split.staging / _OUTCOME_PART)
    yield None


class _HalfTwoNotCounted(Exception):
    """Half 2 ended without writing its counts."""


def _intervals_once_counted(
    split: _Split, own_counts: list[DocumentCounts], interval_settings: IntervalSettings
) -> dict[str, dict[str, Any]] | None:
    """On the helper thread: wait for half 2's counts, join them with half 1's (`own_counts`, a
    list this empties, so that they are freed once joined), resample."""
    if not split.counted.wait():
        raise _HalfTwoNotCounted
    counts = DocumentCounts.joined([own_counts.pop(), _load(split.staging / _COUNTS_PART)], consume=True)
    types = {spec.attribute_id: spec.type for spec in split.prompt_set.attributes if spec.is_scored}
    return extraction_intervals_from_counts(counts, types, interval_settings)


def _own_half(
    split: _Split, helper: ThreadPoolExecutor, interval_settings: IntervalSettings, timer: _PhaseTimer
) -> tuple[_ShardOutcome, list[MetricRow], Future]:
    """Half 1: read and scored (its comparison rows written as they are made), its rows counted,
    its JSON parts written. The intervals are then started on the helper thread (they begin once
    half 2 is counted: resampling is numpy work, mostly without the GIL, so it runs beside the
    joining of the run). Returns its outcome, its rows as MetricRows, the intervals to come."""
    outcome, prediction_set, rows = _score_half(
        # The comparison CSV starts with this half: written in place, half 2's rows appended.
        _WeightedShard(0, 2),
        split,
        timer,
        split.staging / bundle.COMPARISON_CSV,
        header=True,
    )
    with timer("half 1: counts for the intervals"):
        counts = [attribute_document_counts(rows)]
    with timer("half 1: write its parts"):
        _write_items(1, prediction_set, split, outcome.metadata_entries)
    # The predictions (the contexts above all) go back to the system before the resampling's arrays
    # come: started beside them, it made the two processes' memory peak together (measured: 405-435
    # MB summed, against 360-390 MB).
    del prediction_set
    release_free_memory()
    intervals_computed = split.intervals = helper.submit(
        _intervals_once_counted, split, counts, interval_settings
    )
    return outcome, rows, intervals_computed


def _dump(value: Any, path: Path) -> None:
    with open(path, "wb") as handle:
        pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)


def _dump_pieces(items: Iterable[Any], path: Path) -> None:
    with open(path, "wb") as handle:
        for piece in iter(lambda: list(islice(items, _ROWS_PER_PIECE)), []):
            pickle.dump(piece, handle, protocol=pickle.HIGHEST_PROTOCOL)


def _load_pieces(path: Path) -> Iterator[list[Any]]:
    with open(path, "rb") as handle:
        while True:
            try:
                yield pickle.load(handle)
            except EOFError:
                break
    os.remove(path)


def _load(path: Path, *, keep: bool = False) -> Any:
    """What `_dump` wrote; the file is removed unless `keep` (the other process may still read
    it, or has yet to)."""
    with open(path, "rb") as handle:
        value = pickle.load(handle)
    if not keep:
        os.remove(path)
    return value


def _write_items(
    half: int, prediction_set: PredictionSet, split: _Split, entries: list[dict[str, Any]]
) -> None:
    """A half's items of the lists of llm_annotations.json and extraction_metadata.json, encoded
    and joined as in the artefact; `_join_list_artefact` puts them together."""
    parts = (
        (
            _ANNOTATIONS_PART,
            run_records.llm_annotation_lines(prediction_set.documents, split.prompt_set.attributes),
        ),
        (_METADATA_PART, run_records.json_items(entries)),
    )
    for name, items in parts:
        with open(split.staging / name.format(half=half), "w", encoding="utf-8", newline="") as handle:
            separator = ""
            for item in items:  # one at a time: all of them are tens of MB
                handle.write(separator)
                handle.write(item)
                separator = run_records.ITEM_SEPARATOR


# A row as it travels from half 2: MetricRow's fields, in order.
_metric_fields = attrgetter(*MetricRow.FIELDS)


def _metric_rows(metric_fields: Iterable[tuple]) -> list[MetricRow]:
    return list(starmap(MetricRow, metric_fields))


def _joined_run(
    mine: _ShardOutcome,
    other: _ShardOutcome,
    rows: list[MetricRow],
    split: _Split,
    config: ExtractionConfig | None,
) -> ExtractionRun:
    prompt_set, run_id, settings, names = split.prompt_set, split.run_id, split.settings, split.names
    unknown = dict(mine.unknown_predicted)
    add_unknown_counts(unknown, other.unknown_predicted)
    evaluation = evaluation_from_rows(
        run_id=run_id,
        attributes=prompt_set.attributes,
        rows=rows,
        row_warnings=[
            *no_context_warning([*mine.without_context, *other.without_context]),
            *mine.row_warnings,
            *other.row_warnings,
            *unknown_attribute_warnings(unknown),
        ],
        unscored=[*mine.unscored, *other.unscored],
        extra_predictions=[],  # a line of a document outside the gold is an input error
        settings=settings,
    )
    gold_warnings = [
        *mine.gold_warnings,
        *other.gold_warnings,
        *attribute_warnings_for_code_sets(prompt_set, mine.attribute_names, names["gold"]),
    ]
    inputs = ExtractionInputs(
        prompts=prompt_set,
        gold=GoldSet(documents=[], attribute_names=mine.attribute_names),
        predictions=PredictionSet(documents={}),
        gold_format="eppi",
        names=names,
    )
    summary = InputSummary(
        n_gold_documents=mine.n_gold_documents,
        n_prediction_lines=mine.n_prediction_lines,
        gold_without_line=[*mine.gold_without_line, *other.gold_without_line],
        warnings=[*prompt_set.warnings, *gold_warnings],
    )
    return ExtractionRun(
        evaluation=evaluation,
        inputs=inputs,
        settings=settings,
        config=dict(config.values) if config else {},
        input_summary=summary,
    )


def _in_line_order(first: tuple[list[int], list[Any]], second: tuple[list[int], list[Any]]) -> list[Any]:
    """The items of both halves in the order of their line numbers in the predictions file."""
    (first_lines, first_items), (second_lines, second_items) = first, second
    if not first_lines or not second_lines or first_lines[-1] < second_lines[0]:
        return [*first_items, *second_items]
    merged = heapq.merge(
        zip(first_lines, first_items, strict=True),
        zip(second_lines, second_items, strict=True),
        key=lambda pair: pair[0],
    )
    return [item for _, item in merged]


def _write_metrics_files(run: ExtractionRun, staging: Path) -> None:
    evaluation, custom = run.evaluation, run.settings.custom_metrics
    artefacts.write_metrics_csv(
        evaluation, staging / bundle.METRICS_CSV, custom_metrics=custom, intervals=run.intervals
    )
    artefacts.write_metrics_json(
        evaluation,
        staging / bundle.METRICS_JSON,
        custom_metrics=custom,
        intervals=run.intervals,
        intervals_config=None if run.interval_settings is None else run.interval_settings.as_config(),
    )


def _write_joined_artefacts(
    run: ExtractionRun, own: _ShardOutcome, other: _ShardOutcome, staging: Path
) -> None:
    """Every artefact but the metrics: the halves' parts joined, and the run's records."""
    comparison_part = staging / _COMPARISON_PART
    with open(staging / bundle.COMPARISON_CSV, "ab") as target, open(comparison_part, "rb") as part:
        shutil.copyfileobj(part, target, _COPY_BUFFER)
    os.remove(comparison_part)

    lines = (own.prediction_lines, other.prediction_lines)
    evaluation, summary = run.evaluation, run.summary()
    _join_list_artefact(
        staging / bundle.LLM_ANNOTATIONS_JSON,
        run_records.llm_annotations_head(evaluation.run_id, run_metadata(run)),
        "documents",
        [staging / _ANNOTATIONS_PART.format(half=half) for half in (1, 2)],
        lines,
    )
    entries = _in_line_order((lines[0], own.metadata_entries), (lines[1], other.metadata_entries))
    head = run_records.metadata_head(
        run_id=evaluation.run_id,
        entries=entries,
        n_gold_documents=summary.n_gold_documents,
        without_line=summary.gold_without_line,
    )
    _join_list_artefact(
        staging / bundle.EXTRACTION_METADATA_JSON,
        head,
        "per_document",
        [staging / _METADATA_PART.format(half=half) for half in (1, 2)],
        lines,
    )
    artefacts.write_config_yaml(run.config_snapshot(), staging / bundle.CONFIG_YAML)
    artefacts.write_prompts_used_csv(run.inputs.prompts.scored, staging / bundle.PROMPTS_USED_CSV)
    artefacts.write_evaluation_log(run.log_lines(), staging / bundle.EVALUATION_LOG)


def _join_list_artefact(
    path: Path, head: dict[str, Any], list_key: str, parts: list[Path], lines: tuple[list[int], list[int]]
) -> None:
    """Write `{**head, list_key: [...]}` from the halves' parts (`_write_items`), their items in the
    order of `lines` (each part's line numbers in the predictions file); the parts are removed."""
    opening, closing = run_records.json_list_frame(head, list_key)
    first, second = lines
    with open(path, "wb") as target:
        target.write(opening.encode())
        if first and second and first[-1] > second[0]:
            # The predictions file is not in gold order: the items interleave by line number.
            separator = run_records.ITEM_SEPARATOR
            texts = [part.read_text(encoding="utf-8") for part in parts]
            items = _in_line_order((first, texts[0].split(separator)), (second, texts[1].split(separator)))
            target.write((run_records.FIRST_ITEM_SEPARATOR + separator.join(items)).encode())
        else:
            separator = run_records.FIRST_ITEM_SEPARATOR
            for part, part_lines in zip(parts, lines, strict=True):
                if part_lines:
                    target.write(separator.encode())
                    with open(part, "rb") as source:
                        shutil.copyfileobj(source, target, _COPY_BUFFER)
                    separator = run_records.ITEM_SEPARATOR
        target.write(closing.encode())
    for part in parts:
        os.remove(part)
