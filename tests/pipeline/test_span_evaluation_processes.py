"""`evaluate_span_paths(processes=2)` gives exactly what one process gives.

The paired documents are cut in chunks (a few documents each here, so that every run has several),
scored by a local process pool and merged in gold order. Whatever the input (problems, warnings,
awkward ids, predictions in another order or missing), results, warnings and errors are those of
one process.
"""

from __future__ import annotations

import json
import random
from contextlib import contextmanager
from pathlib import Path

import pytest

from annotations.importers.errors import InputValidationError
from bench.spans.corpus import write_corpus
from metrics.pipeline import span_evaluation
from metrics.pipeline import spans as span_pipeline
from metrics.pipeline.executors import ProcessPool
from metrics.pipeline.intervals import IntervalSettings
from metrics.pipeline.span_evaluation import evaluate_span_paths, score_span_paths
from tests.engine.spans.results import same_scores

CHEAP_INTERVALS = IntervalSettings(resamples=50)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(span_pipeline, "CHUNK_DOCUMENTS", 7)


def corpus(tmp_path: Path, documents: int = 120, seed: int = 3) -> tuple[Path, Path]:
    gold, predictions, _, _ = write_corpus(tmp_path, documents, seed)
    return gold, predictions


def rewrite(path: Path, edit) -> Path:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in edit(lines)))
    return path


def both_ways(gold, predictions, **options):
    pooled = evaluate_span_paths(gold, predictions, intervals=CHEAP_INTERVALS, processes=2, **options)
    single = evaluate_span_paths(gold, predictions, intervals=CHEAP_INTERVALS, **options)
    return pooled, single


def test_a_plain_corpus_scored_in_two_processes_gives_the_one_process_results(tmp_path):
    gold, predictions = corpus(tmp_path)
    parallel, single = both_ways(gold, predictions, include_sensitive_text=True)
    assert parallel == single


def test_shuffled_and_missing_predictions_and_awkward_ids(tmp_path):
    gold, predictions = corpus(tmp_path, documents=150, seed=5)
    awkward = ['doc "quoted"', "doc\\back", "dök-ü", "doc\u2028sep", "😀"]

    def rename(lines):
        for record, name in zip(lines, awkward, strict=False):
            record["document_id"] = name
        return lines

    rewrite(gold, rename)

    def shuffle_and_drop(lines):
        lines = rename(lines)
        random.Random(1).shuffle(lines)
        return [record for k, record in enumerate(lines) if k % 7]

    rewrite(predictions, shuffle_and_drop)
    # An escaped id as some writers put it (\u escapes for plain letters), and keys in another order.
    text = predictions.read_text(encoding="utf-8").splitlines()
    escaped = json.dumps(json.loads(text[0]), ensure_ascii=True)
    record = json.loads(text[1])
    reordered = json.dumps({"entities": record["entities"], "document_id": record["document_id"]})
    predictions.write_text("\n".join([escaped, reordered, "", *text[2:]]) + "\n", encoding="utf-8")
    parallel, single = both_ways(gold, predictions)
    assert parallel == single


def test_a_nested_document_id_key_changes_nothing(tmp_path):
    gold, predictions = corpus(tmp_path, documents=60)

    def mislead(lines):
        # A nested "document_id" before the real one: the line pattern reads the wrong id.
        return [{"meta": {"document_id": f"other-{k}"}, **record} for k, record in enumerate(lines)]

    rewrite(predictions, mislead)
    parallel, single = both_ways(gold, predictions)
    assert parallel == single


def test_unknown_labels_warn_as_one_process_does(tmp_path):
    gold, predictions = corpus(tmp_path, documents=40)

    def unknown(lines):
        for record in lines[::3]:
            for entity in record["entities"][:1]:
                entity["entity_type"] = "Stationsname"
        return lines

    rewrite(predictions, unknown)
    parallel, single = both_ways(gold, predictions)
    assert parallel["warnings"] and parallel == single


def test_problems_are_reported_as_one_process_reports_them(tmp_path):
    gold, predictions = corpus(tmp_path, documents=40)

    def broken(lines):
        lines[4]["entities"][0]["end"] = 10**6
        lines[9]["document_id"] = "not-in-gold"
        return [*lines, lines[2]]

    rewrite(predictions, broken)
    with pytest.raises(InputValidationError) as parallel:
        evaluate_span_paths(gold, predictions, intervals=CHEAP_INTERVALS, processes=2)
    with pytest.raises(InputValidationError) as single:
        evaluate_span_paths(gold, predictions, intervals=CHEAP_INTERVALS)
    assert parallel.value.problems == single.value.problems


def test_score_span_paths_gives_the_same_scores_in_two_processes(tmp_path):
    gold, predictions = corpus(tmp_path, documents=80)
    parallel = score_span_paths(gold, predictions, executor=ProcessPool(2))
    single = score_span_paths(gold, predictions)
    assert same_scores(parallel.scores, single.scores)
    assert (parallel.predicted_ids, parallel.warnings) == (single.predicted_ids, single.warnings)


@pytest.mark.parametrize(
    ("processes", "events"),
    [
        (2, ["workers kept", "workers ended", "intervals"]),  # one run of resamples: summed here
        (4, ["workers kept", "intervals", "workers ended"]),  # two runs: summed by the workers
    ],
)
def test_the_workers_serve_the_intervals_only_when_they_sum_the_resamples(
    tmp_path, monkeypatch, processes, events
):
    seen: list[str] = []
    kept = ProcessPool.kept

    @contextmanager
    def recorded_kept(self):
        with kept(self):
            seen.append("workers kept")
            yield
        seen.append("workers ended")

    count_table = span_evaluation.interval_count_table

    def recorded_count_table(*args, **options):
        seen.append("intervals")
        return count_table(*args, **options)

    monkeypatch.setattr(ProcessPool, "kept", recorded_kept)
    monkeypatch.setattr(span_evaluation, "interval_count_table", recorded_count_table)
    gold, predictions = corpus(tmp_path, documents=30)
    evaluate_span_paths(gold, predictions, intervals=CHEAP_INTERVALS, processes=processes)
    assert seen == events
