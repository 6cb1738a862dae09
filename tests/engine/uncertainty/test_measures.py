"""The columns a set of metrics reads (`columns_read`): what the bootstrap keeps of a count table,
and what a comparison's McNemar test needs beside the measures."""

from __future__ import annotations

from metrics.engine.uncertainty.measures import (
    HarmonicMean,
    MetricDefinition,
    columns_read,
    precision,
    ratio,
    recall,
)


def test_the_columns_of_every_measure_are_read_together():
    assert columns_read([precision("tp", "fp"), ratio("abs_error", "rows")]) == {
        "tp",
        "fp",
        "abs_error",
        "rows",
    }


def test_a_comparisons_correctness_columns_are_read_beside_its_measure():
    accuracy = MetricDefinition(
        ratio("correct", "rows", null_if_any=("missing",)), correctness=("correct", "rows")
    )
    leakage = MetricDefinition(ratio("leaked", "documents"), correctness=("leaked", "trials"))
    assert columns_read([accuracy, leakage]) == {
        "correct",
        "rows",
        "missing",
        "leaked",
        "documents",
        "trials",
    }


def test_a_harmonic_mean_reads_the_columns_of_both_its_measures():
    assert HarmonicMean(recall("tp", "fn"), precision("tp", "fp")).columns == {"tp", "fn", "fp"}
