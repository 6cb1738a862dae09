"""Measures from counts: the exactly rounded sum that macro means divide is math.fsum's."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from metrics.engine.spans.measures import exactly_rounded_sum


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
