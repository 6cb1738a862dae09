"""Attribute agreement: Cohen's kappa for two annotators, Krippendorff's alpha for more and for numbers."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from metrics.engine.agreement.attributes import AttributeRatings, attribute_agreement
from metrics.engine.attributes.types import AttributeType
from metrics.engine.uncertainty.bootstrap import IntervalSettings

SETTINGS = IntervalSettings(resamples=200)


def test_two_annotators_on_a_bool_get_cohens_kappa_and_percent_agreement():
    alice = [True, True, False, False, True, False]
    bob = [True, False, False, False, True, True]
    ratings = {f"d{i}": {"alice": a, "bob": b} for i, (a, b) in enumerate(zip(alice, bob, strict=True))}
    (entry,) = attribute_agreement(
        [AttributeRatings("smoker", AttributeType.BOOL, ratings)], settings=SETTINGS
    )
    assert entry["measure"] == "cohen_kappa"
    assert entry["value"] == pytest.approx(cohen_kappa_score(alice, bob), abs=1e-12)
    assert entry["percent_agreement"] == pytest.approx(4 / 6)
    assert entry["value_ci"]["low"] <= entry["value"] <= entry["value_ci"]["high"]


def test_three_annotators_on_a_string_get_nominal_alpha():
    values = {
        "d1": {"a": "male", "b": "male", "c": "male"},
        "d2": {"a": "female", "b": "male", "c": "female"},
        "d3": {"a": "female", "b": "female"},
        "d4": {"a": "male"},
    }
    (entry,) = attribute_agreement([AttributeRatings("sex", AttributeType.STRING, values)], settings=SETTINGS)
    codes = {"female": 0, "male": 1}
    reliability = np.array(
        [[codes[values[d][a]] if a in values[d] else np.nan for d in ("d1", "d2", "d3")] for a in "abc"]
    )
    assert entry["measure"] == "krippendorff_alpha_nominal"
    assert entry["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal"), abs=1e-12
    )
    # d1: 3 of 3 pairs agree, d2: 1 of 3, d3: 1 of 1.
    assert entry["percent_agreement"] == pytest.approx(5 / 7)
    assert entry["single_annotator_documents"] == ["d4"]


def test_numbers_get_interval_alpha():
    values = {
        "d1": {"a": 10, "b": 12},
        "d2": {"a": 30, "b": 30},
        "d3": {"a": 55, "b": 50},
        "d4": {"a": 7, "b": 7},
    }
    (entry,) = attribute_agreement(
        [AttributeRatings("age", AttributeType.INTEGER, values)], settings=SETTINGS
    )
    reliability = np.array([[values[d][a] for d in sorted(values)] for a in "ab"], dtype=float)
    assert entry["measure"] == "krippendorff_alpha_interval"
    assert entry["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=reliability, level_of_measurement="interval"), abs=1e-12
    )
    assert entry["percent_agreement"] == pytest.approx(0.5)


def test_a_single_value_everywhere_has_no_kappa():
    values = {"d1": {"a": True, "b": True}, "d2": {"a": True, "b": True}}
    (entry,) = attribute_agreement([AttributeRatings("x", AttributeType.BOOL, values)], settings=SETTINGS)
    assert entry["value"] is None and entry["value_ci"] is None
    assert entry["percent_agreement"] == 1.0
