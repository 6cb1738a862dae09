"""The two-process path of `evaluate_span_paths` gives exactly what the one-process path gives.

Two JSONL files with enough documents are scored by this process and a forked child, each owning the
documents whose id hashes to it. Whatever the input (problems, warnings, ids the line pattern misreads,
predictions in another order or missing), the results, warnings and errors are those of one process.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from annotations.importers.errors import InputValidationError
from bench.spans.corpus import write_corpus
from metrics import span_evaluation
from metrics.intervals import IntervalSettings
from metrics.span_evaluation import evaluate_span_paths, score_span_paths

CHEAP_INTERVALS = IntervalSettings(resamples=50)


@pytest.fixture
def parallel_runs(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Lowers the document threshold so small corpora take the two-process path; records each
    attempt's outcome (True: scored in two processes, False: fell back)."""
    monkeypatch.setattr(span_evaluation, "PARALLEL_MIN_DOCUMENTS", 5)
    outcomes: list[bool] = []
    original = span_evaluation._load_and_score_in_parallel

    def recording(*args, **kwargs):
        scored = original(*args, **kwargs)
        outcomes.append(scored is not None)
        return scored

    monkeypatch.setattr(span_evaluation, "_load_and_score_in_parallel", recording)
    return outcomes


def one_process(monkeypatch: pytest.MonkeyPatch, function, *args, **kwargs):
    with monkeypatch.context() as patch:
        patch.setenv("EVALPROJECT_SPAN_PROCESSES", "1")
        return function(*args, **kwargs)


def corpus(tmp_path: Path, documents: int = 120, seed: int = 3) -> tuple[Path, Path]:
    gold, predictions, _, _ = write_corpus(tmp_path, documents, seed)
    return gold, predictions


def rewrite(path: Path, edit) -> Path:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in edit(lines)))
    return path


def both_ways(monkeypatch, gold, predictions, **options):
    parallel = evaluate_span_paths(gold, predictions, intervals=CHEAP_INTERVALS, **options)
    single = one_process(
        monkeypatch, evaluate_span_paths, gold, predictions, intervals=CHEAP_INTERVALS, **options
    )
    return parallel, single


def test_plain_corpus_is_scored_in_two_processes_with_identical_results(tmp_path, monkeypatch, parallel_runs):
    gold, predictions = corpus(tmp_path)
    parallel, single = both_ways(monkeypatch, gold, predictions, include_sensitive_text=True)
    assert parallel_runs == [True]
    assert parallel == single


def test_shuffled_and_missing_predictions_and_awkward_ids(tmp_path, monkeypatch, parallel_runs):
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
    parallel, single = both_ways(monkeypatch, gold, predictions)
    assert parallel_runs == [True]
    assert parallel == single


def test_a_misleading_id_pattern_falls_back_to_one_process(tmp_path, monkeypatch, parallel_runs):
    gold, predictions = corpus(tmp_path, documents=60)

    def mislead(lines):
        # A nested "document_id" before the real one: the line pattern reads the wrong id.
        return [{"meta": {"document_id": f"other-{k}"}, **record} for k, record in enumerate(lines)]

    rewrite(predictions, mislead)
    parallel, single = both_ways(monkeypatch, gold, predictions)
    assert parallel_runs == [False]
    assert parallel == single


def test_unknown_labels_fall_back_and_warn_as_one_process_does(tmp_path, monkeypatch, parallel_runs):
    gold, predictions = corpus(tmp_path, documents=40)

    def unknown(lines):
        for record in lines[::3]:
            for entity in record["entities"][:1]:
                entity["entity_type"] = "Stationsname"
        return lines

    rewrite(predictions, unknown)
    parallel, single = both_ways(monkeypatch, gold, predictions)
    assert parallel_runs == [False]
    assert parallel["warnings"] and parallel == single


def test_problems_are_reported_as_one_process_reports_them(tmp_path, monkeypatch, parallel_runs):
    gold, predictions = corpus(tmp_path, documents=40)

    def broken(lines):
        lines[4]["entities"][0]["end"] = 10**6
        lines[9]["document_id"] = "not-in-gold"
        return [*lines, lines[2]]

    rewrite(predictions, broken)
    with pytest.raises(InputValidationError) as parallel:
        evaluate_span_paths(gold, predictions, intervals=CHEAP_INTERVALS)
    with pytest.raises(InputValidationError) as single:
        one_process(monkeypatch, evaluate_span_paths, gold, predictions, intervals=CHEAP_INTERVALS)
    assert parallel_runs == [False]
    assert parallel.value.problems == single.value.problems


def test_score_span_paths_gives_the_same_scores_in_two_processes(tmp_path, monkeypatch, parallel_runs):
    gold, predictions = corpus(tmp_path, documents=80)
    parallel = score_span_paths(gold, predictions)
    single = one_process(monkeypatch, score_span_paths, gold, predictions)
    assert parallel_runs == [True]
    assert parallel == single


def test_one_process_inside_a_daemonic_process_or_for_small_inputs(tmp_path, monkeypatch, parallel_runs):
    gold, predictions = corpus(tmp_path, documents=40)

    class Daemonic:
        daemon = True

    with monkeypatch.context() as patch:
        patch.setattr(span_evaluation.multiprocessing, "current_process", lambda: Daemonic())
        evaluate_span_paths(gold, predictions, intervals=CHEAP_INTERVALS)
    assert parallel_runs == []
    monkeypatch.setattr(span_evaluation, "PARALLEL_MIN_DOCUMENTS", 2_000)
    evaluate_span_paths(gold, predictions, intervals=CHEAP_INTERVALS)
    assert parallel_runs == []
