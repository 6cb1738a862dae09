"""The seeded draw: the same seed and documents give the same draw, and strata get their share."""

from __future__ import annotations

import random

import pytest

from experiments.splits import draw, proportional_allocation
from experiments.splits.draw import Candidate, stratum_of


def _candidates(count: int, strata: tuple[str, ...] = ("",)) -> list[Candidate]:
    return [
        Candidate(pk=i, external_id=f"doc-{i:03d}", stratum=strata[i % len(strata)]) for i in range(count)
    ]


def test_the_same_seed_draws_the_same_documents_whatever_their_order():
    candidates = _candidates(40)
    shuffled = list(candidates)
    random.Random(3).shuffle(shuffled)

    assert draw(candidates, n=10, seed=7) == draw(shuffled, n=10, seed=7)


def test_another_seed_draws_other_documents():
    candidates = _candidates(40)

    assert draw(candidates, n=10, seed=7) != draw(candidates, n=10, seed=8)


def test_the_draw_is_a_documented_numpy_permutation_of_the_documents_sorted_by_external_id():
    import numpy as np

    candidates = _candidates(12)
    expected_positions = np.random.default_rng(42).permutation(12)[:4]

    drawn = draw(list(reversed(candidates)), n=4, seed=42)

    assert [c.external_id for c in drawn] == sorted(f"doc-{p:03d}" for p in expected_positions)


def test_a_stratified_draw_gives_each_stratum_its_proportional_share():
    candidates = _candidates(30, strata=("a", "a", "b"))

    drawn = draw(candidates, n=9, seed=1, stratified=True)

    assert sorted(c.stratum for c in drawn) == ["a"] * 6 + ["b"] * 3


def test_leftover_places_go_to_the_largest_remainders():
    assert proportional_allocation({"a": 5, "b": 3, "c": 2}, 5) == {"a": 3, "b": 1, "c": 1}
    assert sum(proportional_allocation({"a": 1, "b": 1, "c": 1}, 2).values()) == 2


def test_a_document_without_the_stratification_key_forms_its_own_stratum():
    assert stratum_of({"ward": "surgery"}, "ward") == "surgery"
    assert stratum_of({}, "ward") == ""
    assert stratum_of({"ward": None}, "ward") == ""


def test_it_cannot_draw_more_documents_than_there_are():
    with pytest.raises(ValueError, match="cannot draw 5 of 4"):
        draw(_candidates(4), n=5, seed=0)
