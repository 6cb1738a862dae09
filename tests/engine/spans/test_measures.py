"""Measures from counts: each family's table, and the exactly rounded sum that macro means divide (math.fsum's)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from metrics.engine.spans.measures import exactly_rounded_sum, family_measures
from metrics.engine.spans.nervaluate_counts import COUNT_NAMES
from metrics.engine.spans.score import CONFUSION_NAMES, FAMILIES


@given(st.lists(st.floats(min_value=0.0, max_value=1e300, allow_subnormal=True), max_size=60))
def test_the_sum_of_non_negative_floats_is_fsums_to_the_last_bit(values):
    assert exactly_rounded_sum(np.array(values, dtype=np.float64)).hex() == math.fsum(values).hex()


@given(
    st.lists(st.integers(0, 10**6), max_size=40), st.lists(st.integers(1, 10**6), min_size=40, max_size=40)
)
def test_ratios_of_counts_sum_as_fsum_sums_them(numerators, denominators):
    values = [n / d for n, d in zip(numerators, denominators, strict=False)]
    assert exactly_rounded_sum(np.array(values)) == math.fsum(values)


@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False, max_value=1e300, min_value=-1e300), max_size=20)
)
def test_negative_values_are_summed_as_fsum_sums_them(values):
    assert exactly_rounded_sum(np.array(values, dtype=np.float64)) == math.fsum(values)


def test_an_infinite_value_sums_to_infinity():
    assert exactly_rounded_sum(np.array([1.0, math.inf])) == math.inf


def test_nothing_sums_to_zero():
    assert exactly_rounded_sum(np.zeros(0)) == 0.0
    assert exactly_rounded_sum(np.zeros(3)) == 0.0


@given(st.lists(st.integers(0, 50), min_size=5, max_size=5))
def test_a_familys_measures_of_integer_totals_equal_those_of_float_sums(counts):
    # results.json applies them to integer totals, the bootstrap to float sums: the same bits.
    for family, names in (*FAMILIES, ("chars_typed", CONFUSION_NAMES)):
        integers = {f"{family}.{name}": np.array([count]) for name, count in zip(names, counts, strict=False)}
        floats = {name: column.astype(np.float64) for name, column in integers.items()}
        for measure in family_measures(family, names).values():
            np.testing.assert_array_equal(measure(integers), measure(floats))


def test_nervaluate_gives_half_credit_for_partial_matches_in_the_partial_schema_only():
    counts = dict(
        zip(COUNT_NAMES, (1, 0, 2, 1, 0), strict=True)
    )  # correct, incorrect, partial, missed, spurious
    for schema, expected in (("strict", 1 / 3), ("partial", 2 / 3)):
        family = f"nervaluate.{schema}"
        sums = {f"{family}.{name}": np.array([count]) for name, count in counts.items()}
        measures = family_measures(family, COUNT_NAMES)
        assert (int(measures["possible"](sums)[0]), int(measures["actual"](sums)[0])) == (4, 3)
        assert measures["precision"](sums)[0] == expected


def test_only_false_positives_give_a_confusion_f1_of_zero():
    def f1(tp, fp, fn):
        sums = {
            "chars.all.tp": np.array([tp]),
            "chars.all.fp": np.array([fp]),
            "chars.all.fn": np.array([fn]),
        }
        return family_measures("chars.all", CONFUSION_NAMES)["f1"](sums)[0]

    assert f1(0, 3, 0) == 0.0
    assert np.isnan(f1(0, 0, 0))
    assert f1(1, 1, 2) == 2 / 5
