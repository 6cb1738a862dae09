"""Cluster bootstrap intervals: documents are resampled, intervals are reproducible, nulls are honest."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metrics.engine.uncertainty.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    IntervalSettings,
    cluster_bootstrap_intervals,
    resample_columns,
)
from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.engine.uncertainty.measures import f1, precision, ratio, recall
from tests.engine.uncertainty.reference import cluster_bootstrap_ci


def span_counts(n_documents: int = 60, seed: int = 1) -> DocumentCounts:
    rng = np.random.default_rng(seed)
    return DocumentCounts(
        [f"doc-{i:03d}" for i in range(n_documents)],
        {
            "tp": rng.poisson(4, n_documents),
            "fp": rng.poisson(1, n_documents),
            "fn": rng.poisson(1, n_documents),
        },
    )


def test_the_same_input_and_seed_give_the_same_interval():
    first = cluster_bootstrap_ci(span_counts(), f1("tp", "fp", "fn"), seed=7)
    second = cluster_bootstrap_ci(span_counts(), f1("tp", "fp", "fn"), seed=7)
    assert first == second


def test_a_different_seed_gives_a_different_interval():
    first = cluster_bootstrap_ci(span_counts(), f1("tp", "fp", "fn"), seed=7)
    second = cluster_bootstrap_ci(span_counts(), f1("tp", "fp", "fn"), seed=8)
    assert (first.low, first.high) != (second.low, second.high)
    assert (first.seed, second.seed) == (7, 8)


def test_the_order_of_documents_does_not_change_the_interval():
    counts = span_counts()
    order = np.random.default_rng(3).permutation(counts.n_documents)
    shuffled = DocumentCounts(
        [counts.document_ids[i] for i in order],
        {name: values[order] for name, values in counts.columns.items()},
    )
    assert cluster_bootstrap_ci(shuffled, recall("tp", "fn")) == cluster_bootstrap_ci(
        counts, recall("tp", "fn")
    )


def test_the_interval_records_how_it_was_made():
    interval = cluster_bootstrap_ci(span_counts(), precision("tp", "fp"))
    stored = interval.as_dict()
    assert set(stored) == {"low", "high", "level", "method", "resamples", "seed"}
    assert stored["level"] == 0.95
    assert stored["method"] == "cluster_bootstrap_percentile"
    assert stored["resamples"] == DEFAULT_RESAMPLES == 2000
    assert stored["seed"] == DEFAULT_SEED
    assert 0 < stored["low"] < stored["high"] < 1


def test_many_metrics_from_one_set_of_draws_equal_each_metric_alone():
    counts = span_counts()
    metrics = {"precision": precision("tp", "fp"), "recall": recall("tp", "fn"), "f1": f1("tp", "fp", "fn")}
    together = cluster_bootstrap_intervals(counts, metrics, IntervalSettings(resamples=500, seed=11))
    for name, metric in metrics.items():
        assert together[name] == cluster_bootstrap_ci(counts, metric, resamples=500, seed=11)


def test_counts_consumed_by_the_bootstrap_give_the_same_intervals_and_are_left_empty():
    metrics = {"precision": precision("tp", "fp"), "recall": recall("tp", "fn")}
    fixed = IntervalSettings(resamples=300, seed=5)
    kept = cluster_bootstrap_intervals(span_counts(), metrics, fixed)
    counts = span_counts()
    assert cluster_bootstrap_intervals(counts, metrics, fixed, consume=True) == kept
    assert counts.columns == {}


def test_it_resamples_documents_so_correlated_spans_travel_together():
    # Two documents: one all hits, one all misses. Resampling documents can only give recall 0, 0.5 or 1
    # (both copies of one document, or one of each); resampling spans would give many other values.
    counts = DocumentCounts(["good", "bad"], {"tp": [10, 0], "fn": [0, 10]})
    interval = cluster_bootstrap_ci(counts, recall("tp", "fn"), level=0.5, resamples=4000)
    assert {interval.low, interval.high} <= {0.0, 0.5, 1.0}


def test_it_agrees_with_scipy_percentile_bootstrap_for_a_mean():
    errors = np.random.default_rng(5).exponential(2.0, size=30)
    counts = DocumentCounts([f"d{i}" for i in range(30)], {"abs_error": errors, "rows": np.ones(30)})
    ours = cluster_bootstrap_ci(counts, ratio("abs_error", "rows"), resamples=20_000, seed=1)
    theirs = stats.bootstrap((errors,), np.mean, method="percentile", n_resamples=20_000, random_state=2)
    # Monte-Carlo error of a 2.5% quantile from 20,000 resamples is about 0.01 here (standard error of
    # the mean ~0.35); 0.05 is five of those.
    assert ours.low == pytest.approx(theirs.confidence_interval.low, abs=0.05)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, abs=0.05)


def test_it_agrees_with_scipy_paired_percentile_bootstrap_for_a_ratio_of_sums():
    rng = np.random.default_rng(6)
    tp, fp = rng.poisson(5, 40).astype(float), rng.poisson(2, 40).astype(float)
    counts = DocumentCounts([f"d{i}" for i in range(40)], {"tp": tp, "fp": fp})

    def pooled_precision(tp_sample, fp_sample, axis=-1):
        return tp_sample.sum(axis=axis) / (tp_sample.sum(axis=axis) + fp_sample.sum(axis=axis))

    ours = cluster_bootstrap_ci(counts, precision("tp", "fp"), resamples=20_000, seed=1)
    theirs = stats.bootstrap(
        (tp, fp), pooled_precision, paired=True, method="percentile", n_resamples=20_000, random_state=2
    )
    assert ours.low == pytest.approx(theirs.confidence_interval.low, abs=0.01)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, abs=0.01)


def test_a_metric_undefined_in_every_resample_has_null_bounds():
    counts = DocumentCounts(["a", "b"], {"tp": [0, 0], "fp": [0, 0], "fn": [3, 1]})
    interval = cluster_bootstrap_ci(counts, precision("tp", "fp"))
    assert (interval.low, interval.high) == (None, None)
    assert interval.as_dict()["resamples"] == 2000


def test_a_metric_null_on_the_full_data_has_a_null_interval():
    # The seed's rule: a set with a missing prediction has no accuracy. Resamples that happen to miss
    # that document must not produce an interval for a number that is not reported.
    counts = DocumentCounts(
        [f"d{i}" for i in range(50)], {"correct": [1] * 49 + [0], "rows": [1] * 50, "missing": [0] * 49 + [1]}
    )
    interval = cluster_bootstrap_ci(counts, ratio("correct", "rows", null_if_any=("missing",)))
    assert (interval.low, interval.high) == (None, None)


def test_resamples_where_the_metric_is_undefined_are_dropped():
    # Only one of five documents has predictions: a resample without it (P = 0.8^5 = 0.33) has no
    # precision, and every other resample has precision 0.75.
    counts = DocumentCounts(list("abcde"), {"tp": [3, 0, 0, 0, 0], "fp": [1, 0, 0, 0, 0]})
    interval = cluster_bootstrap_ci(counts, precision("tp", "fp"), resamples=1000)
    assert interval.low == interval.high == 0.75


def test_no_documents_give_a_null_interval():
    interval = cluster_bootstrap_ci(DocumentCounts([], {"tp": [], "fn": []}), recall("tp", "fn"))
    assert (interval.low, interval.high) == (None, None)


@pytest.mark.parametrize(
    ("settings_", "message"),
    [
        ({"level": 1.0}, "level"),
        ({"level": 0}, "level"),
        ({"resamples": 0}, "resamples"),
        ({"resamples": 10.5}, "resamples"),
        ({"seed": -1}, "seed"),
    ],
)
def test_it_rejects_settings_that_make_no_interval(settings_, message):
    with pytest.raises(ValueError, match=message):
        cluster_bootstrap_ci(span_counts(), recall("tp", "fn"), **settings_)


def test_it_rejects_duplicate_documents_and_non_finite_counts():
    with pytest.raises(ValueError, match="duplicate document ids: a"):
        DocumentCounts(["a", "a"], {"tp": [1, 2]})
    with pytest.raises(ValueError, match="not a finite number"):
        DocumentCounts(["a", "b"], {"tp": [1, np.nan]})
    with pytest.raises(ValueError, match="shape"):
        DocumentCounts(["a", "b"], {"tp": [1, 2, 3]})


@settings(max_examples=40, deadline=None)
@given(
    tp=st.lists(st.integers(0, 20), min_size=1, max_size=15),
    extra=st.lists(st.integers(0, 20), min_size=15, max_size=15),
    level=st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]),
)
def test_bounds_are_ordered_and_lie_in_the_metric_range(tp, extra, level):
    n = len(tp)
    counts = DocumentCounts([f"d{i}" for i in range(n)], {"tp": tp, "fn": extra[:n]})
    interval = cluster_bootstrap_ci(counts, recall("tp", "fn"), level=level, resamples=200)
    if sum(tp) + sum(extra[:n]) == 0:
        assert interval.low is None and interval.high is None
    else:
        assert 0.0 <= interval.low <= interval.high <= 1.0


def test_runs_resampled_together_each_get_their_own_sums_from_the_same_draws():
    rng = np.random.default_rng(8)
    ids = [f"d{i}" for i in range(300)]
    a = DocumentCounts(ids, {"tp": rng.integers(0, 5, 300), "fn": rng.integers(0, 3, 300)})
    b = DocumentCounts(ids, {"tp": rng.integers(0, 5, 300)})
    together_a, together_b = resample_columns([a, b], 250, 6)
    (alone_a,) = resample_columns([a], 250, 6)
    (alone_b,) = resample_columns([b], 250, 6)
    assert set(together_a) == set(together_b) == {"tp", "fn"}
    assert np.array_equal(together_a["tp"], alone_a["tp"]) and np.array_equal(together_a["fn"], alone_a["fn"])
    assert np.array_equal(together_b["tp"], alone_b["tp"])
    assert not together_b["fn"].any()  # b never counted fn: zero in every resample


def test_an_undefined_interval_is_stored_as_null():
    assert Interval(None, None, 0.95, "cluster_bootstrap_percentile", 10, 1).stored() is None
    defined = Interval(0.25, 0.75, 0.95, "cluster_bootstrap_percentile", 10, 1)
    assert defined.stored() == {
        "low": 0.25,
        "high": 0.75,
        "level": 0.95,
        "method": "cluster_bootstrap_percentile",
        "resamples": 10,
        "seed": 1,
    }


def test_interval_settings_name_every_bad_value():
    with pytest.raises(ValueError) as bad:
        IntervalSettings(level=1.0, resamples=-1, seed=True)
    assert str(bad.value) == (
        "level: must be a number between 0 and 1 (exclusive), got 1.0; "
        "resamples: must be an integer >= 0 (0 turns intervals off), got -1; "
        "seed: must be an integer >= 0, got True"
    )


def test_zero_resamples_turn_the_intervals_off_and_the_config_says_so():
    off = IntervalSettings(resamples=0)
    assert not off.enabled
    assert off.as_config(exact_method="clopper_pearson") == {
        "level": 0.95,
        "resamples": 0,
        "seed": DEFAULT_SEED,
        "method": None,
        "leakage_method": None,
    }
    assert IntervalSettings().as_config()["method"] == "cluster_bootstrap_percentile"
