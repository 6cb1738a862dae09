"""Paired comparison of two runs on the same documents: same draws for both, honest p-values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metrics.engine.uncertainty.bootstrap import IntervalSettings
from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.engine.uncertainty.measures import MetricDefinition, f1, ratio, recall
from metrics.engine.uncertainty.paired import bootstrap_p_value, compare_runs
from tests.engine.uncertainty.reference import cluster_bootstrap_ci


def run(seed: int, n_documents: int = 80, hit_rate: float = 0.8, prefix: str = "doc") -> DocumentCounts:
    rng = np.random.default_rng(seed)
    gold = rng.poisson(5, n_documents)
    tp = rng.binomial(gold, hit_rate)
    return DocumentCounts(
        [f"{prefix}-{i:03d}" for i in range(n_documents)],
        {"tp": tp, "fn": gold - tp, "fp": rng.poisson(1, n_documents)},
    )


METRICS = {"recall": recall("tp", "fn"), "f1": f1("tp", "fp", "fn")}


def test_identical_runs_differ_by_exactly_zero_with_p_one():
    comparison = compare_runs(run(1), run(1), METRICS)
    for result in comparison.metrics.values():
        assert result.as_dict() == {
            "a": result.a,
            "b": result.a,
            "delta": 0.0,
            "ci_low": 0.0,
            "ci_high": 0.0,
            "p_value": 1.0,
            "p_adjusted": 1.0,
        }


def test_identical_runs_with_non_integer_counts_still_give_p_one():
    errors = np.random.default_rng(4).exponential(1.7, 60)
    counts = DocumentCounts([f"d{i}" for i in range(60)], {"abs_error": errors, "rows": np.ones(60)})
    result = compare_runs(counts, counts, {"mae": ratio("abs_error", "rows")}).metrics["mae"]
    assert (result.delta, result.p_value) == (0.0, 1.0)


def test_delta_is_b_minus_a_and_a_clearly_better_run_is_significant():
    worse, better = run(2, hit_rate=0.6), run(2, hit_rate=0.9)
    result = compare_runs(worse, better, {"recall": recall("tp", "fn")}, IntervalSettings(seed=3)).metrics[
        "recall"
    ]
    assert result.delta == pytest.approx(result.b - result.a)
    assert result.delta > 0.2
    assert 0 < result.ci_low < result.delta < result.ci_high
    assert result.p_value == pytest.approx(2 / 2001)  # no resample crosses zero: the smallest p


def test_documents_only_one_run_predicted_are_listed_and_left_out():
    a = run(5)
    b_rows = {
        document_id: {name: float(values[i]) for name, values in a.columns.items()}
        for i, document_id in enumerate(a.document_ids)
    }
    del b_rows["doc-000"], b_rows["doc-001"]
    b_rows["extra-1"] = {"tp": 100.0, "fn": 0.0, "fp": 0.0}
    comparison = compare_runs(a, DocumentCounts.from_rows(b_rows), METRICS)
    assert comparison.only_in_a == ("doc-000", "doc-001")
    assert comparison.only_in_b == ("extra-1",)
    assert comparison.documents_compared == 78
    # On the shared documents the runs are the same: the extra document did not enter.
    assert comparison.metrics["recall"].delta == 0.0
    assert comparison.as_dict()["only_in_b"] == ["extra-1"]


def test_the_same_seed_gives_the_same_comparison_and_records_its_settings():
    settings = IntervalSettings(seed=12, resamples=800)
    first = compare_runs(run(6), run(7), METRICS, settings)
    assert first == compare_runs(run(6), run(7), METRICS, settings)
    stored = first.as_dict()
    assert (stored["level"], stored["resamples"], stored["seed"]) == (0.95, 800, 12)
    assert stored["method"] == "paired_cluster_bootstrap_percentile"
    assert stored["p_value_methods"] == {"recall": "paired_bootstrap", "f1": "paired_bootstrap"}


def test_pairing_makes_the_interval_narrower_than_comparing_independent_samples():
    # Both runs see the same hard and easy documents; pairing cancels that shared variation.
    rng = np.random.default_rng(9)
    gold = rng.poisson(8, 150)
    difficulty = rng.beta(2, 1, 150)
    tp_a = rng.binomial(gold, difficulty * 0.9)
    tp_b = np.minimum(gold, tp_a + rng.binomial(1, 0.3, 150))
    ids = [f"d{i}" for i in range(150)]
    a = DocumentCounts(ids, {"tp": tp_a, "fn": gold - tp_a})
    b = DocumentCounts(ids, {"tp": tp_b, "fn": gold - tp_b})
    paired = compare_runs(a, b, {"recall": recall("tp", "fn")}).metrics["recall"]
    unpaired_b = DocumentCounts([f"other-{i}" for i in range(150)], b.columns)
    alone_a = cluster_bootstrap_ci(a, recall("tp", "fn"))
    alone_b = cluster_bootstrap_ci(unpaired_b, recall("tp", "fn"), seed=1)
    # The width of a difference of two independent estimates: the root of the summed squared widths.
    independent_width = np.hypot(alone_a.high - alone_a.low, alone_b.high - alone_b.low)
    assert paired.ci_high - paired.ci_low < independent_width / 3


def test_accuracy_uses_the_exact_mcnemar_test_on_discordant_rows():
    ids = [f"d{i}" for i in range(30)]
    correct_a = np.array([1] * 20 + [0] * 10)
    correct_b = np.array([1] * 15 + [0] * 5 + [1] * 8 + [0] * 2)  # 5 rows only a got, 8 only b got
    accuracy = MetricDefinition(ratio("correct", "rows"), correctness=("correct", "rows"))
    comparison = compare_runs(
        DocumentCounts(ids, {"correct": correct_a, "rows": np.ones(30)}),
        DocumentCounts(ids, {"correct": correct_b, "rows": np.ones(30)}),
        {"accuracy": accuracy},
    )
    result = comparison.metrics["accuracy"]
    assert result.p_value == pytest.approx(stats.binomtest(5, 13, 0.5).pvalue)
    assert result.delta == pytest.approx(23 / 30 - 20 / 30)
    assert comparison.as_dict()["p_value_methods"] == {"accuracy": "mcnemar_exact"}


def test_mcnemar_refuses_counts_that_are_not_one_row_per_document():
    accuracy = MetricDefinition(ratio("correct", "rows"), correctness=("correct", "rows"))
    counts = DocumentCounts(["a", "b"], {"correct": [2, 1], "rows": [3, 1]})
    with pytest.raises(ValueError, match="one 'rows' row per document"):
        compare_runs(counts, counts, {"accuracy": accuracy})


def test_holm_adjusts_within_a_family_and_leaves_other_metrics_alone():
    a, b = run(10, hit_rate=0.75), run(11, hit_rate=0.8)
    family = {
        "recall.TYPE_A": MetricDefinition(recall("tp", "fn"), family="per_type.recall"),
        "f1.TYPE_A": MetricDefinition(f1("tp", "fp", "fn"), family="per_type.recall"),
        "alone": MetricDefinition(recall("tp", "fn")),
    }
    results = compare_runs(a, b, family).metrics
    raw = sorted([results["recall.TYPE_A"].p_value, results["f1.TYPE_A"].p_value])
    adjusted = sorted([results["recall.TYPE_A"].p_adjusted, results["f1.TYPE_A"].p_adjusted])
    assert adjusted[0] == pytest.approx(min(1.0, 2 * raw[0]))
    assert adjusted[1] == pytest.approx(max(adjusted[0], raw[1]))
    assert results["alone"].p_adjusted == results["alone"].p_value


def test_a_metric_undefined_in_either_run_is_compared_as_null():
    a = DocumentCounts(["x", "y"], {"tp": [0, 0], "fp": [0, 0], "fn": [2, 1]})
    b = DocumentCounts(["x", "y"], {"tp": [1, 1], "fp": [0, 1], "fn": [1, 0]})
    result = compare_runs(a, b, {"precision": ratio("tp", {"tp": 1, "fp": 1})}).metrics["precision"]
    assert result.a is None and result.b == pytest.approx(2 / 3)
    assert (result.delta, result.ci_low, result.ci_high, result.p_value, result.p_adjusted) == (None,) * 5


def test_bootstrap_p_value_is_twice_the_smaller_tail_with_a_plus_one():
    deltas = np.array([-0.1, 0.2, 0.3, 0.4, np.nan])  # 4 defined, 1 at or below zero
    assert bootstrap_p_value(deltas) == pytest.approx(2 * (1 + 1) / (4 + 1))
    assert bootstrap_p_value(np.zeros(10)) == 1.0
    assert bootstrap_p_value(np.array([np.nan])) is None


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(0, 9), st.floats(0, 50)),
        min_size=1,
        max_size=12,
    )
)
def test_any_run_compared_with_itself_has_delta_zero_and_p_one(rows):
    columns = dict(zip(("tp", "fp", "fn", "abs_error"), map(list, zip(*rows, strict=True)), strict=True))
    counts = DocumentCounts([f"d{i}" for i in range(len(rows))], {**columns, "rows": [1] * len(rows)})
    metrics = {**METRICS, "mae": ratio("abs_error", "rows")}
    for result in compare_runs(counts, counts, metrics, IntervalSettings(resamples=100)).metrics.values():
        if result.a is not None:
            assert (result.delta, result.ci_low, result.ci_high, result.p_value) == (0.0, 0.0, 0.0, 1.0)
