"""Clopper–Pearson intervals, the exact McNemar test and Holm's adjustment, against known values."""

from __future__ import annotations

import pytest
from scipy import stats

from metrics.engine.uncertainty.exact import clopper_pearson, holm_adjust, mcnemar_exact


@pytest.mark.parametrize(("k", "n"), [(0, 1), (0, 20), (3, 20), (10, 20), (19, 20), (20, 20), (7, 1000)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_clopper_pearson_equals_scipys_exact_binomial_interval(k, n, level):
    interval = clopper_pearson(k, n, level)
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    assert interval.low == pytest.approx(expected.low, abs=1e-12)
    assert interval.high == pytest.approx(expected.high, abs=1e-12)


def test_clopper_pearson_edges_are_closed_at_zero_and_one():
    # k = 0: low is 0 and high is 1 - (alpha/2)^(1/n); k = n mirrors it.
    none_leaked = clopper_pearson(0, 10)
    assert none_leaked.low == 0.0
    assert none_leaked.high == pytest.approx(1 - 0.025 ** (1 / 10))
    all_leaked = clopper_pearson(10, 10)
    assert all_leaked.high == 1.0
    assert all_leaked.low == pytest.approx(0.025 ** (1 / 10))


def test_clopper_pearson_records_its_method_without_resampling_settings():
    assert clopper_pearson(2, 50).as_dict() == {
        "low": pytest.approx(0.004881, abs=1e-6),
        "high": pytest.approx(0.137138, abs=1e-6),
        "level": 0.95,
        "method": "clopper_pearson",
        "resamples": None,
        "seed": None,
    }


def test_clopper_pearson_of_no_documents_is_null():
    interval = clopper_pearson(0, 0)
    assert (interval.low, interval.high) == (None, None)


@pytest.mark.parametrize(("k", "n"), [(-1, 5), (6, 5), (0, -1)])
def test_clopper_pearson_rejects_impossible_counts(k, n):
    with pytest.raises(ValueError, match="0 <= k <= n"):
        clopper_pearson(k, n)


@pytest.mark.parametrize(("b", "c"), [(1, 0), (5, 5), (12, 3), (0, 9), (40, 25)])
def test_mcnemar_equals_a_two_sided_binomial_test_on_the_discordant_pairs(b, c):
    assert mcnemar_exact(b, c) == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, abs=1e-15)


def test_mcnemar_without_discordant_pairs_is_one():
    assert mcnemar_exact(0, 0) == 1.0


def test_mcnemar_known_value():
    # 10 discordant pairs all one way: p = 2 * 0.5^10.
    assert mcnemar_exact(10, 0) == pytest.approx(2 / 1024)


def test_holm_against_a_hand_computed_example():
    # Sorted: 0.01 (x4 = 0.04), 0.02 (x3 = 0.06), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> running max 0.06).
    assert holm_adjust([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])


def test_holm_caps_at_one_and_keeps_the_order_of_the_raw_p_values():
    assert holm_adjust([0.5, 0.2, 0.9]) == pytest.approx([1.0, 0.6, 1.0])


def test_holm_passes_none_through_and_does_not_count_it():
    assert holm_adjust([None, 0.01, None, 0.04]) == pytest.approx([None, 0.02, None, 0.04])
    assert holm_adjust([]) == []


def test_holm_rejects_a_value_that_is_not_a_probability():
    with pytest.raises(ValueError, match="p-values"):
        holm_adjust([0.1, 1.5])
