"""Verbatim grounding scores: how well a snippet is found in the context the model read."""

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from metrics.engine.attributes.text_search import collapse_whitespace
from metrics.engine.attributes.verbatim import (
    FuzzyScores,
    occurs_on_number_boundaries,
    settled_pct_of_collapsed,
)
from tests.engine.attributes.test_support import verbatim_fuzzy_pct

CONTEXT = "Methods: 120 adults, mean age 54.3 years, were randomised. Follow-up was 12 weeks."


@pytest.mark.parametrize("snippet", [None, "", "   "])
def test_an_empty_snippet_scores_0(snippet):
    assert verbatim_fuzzy_pct(snippet, CONTEXT) == 0.0


def test_an_empty_context_scores_0():
    assert verbatim_fuzzy_pct("120 adults", "") == 0.0


def test_a_verbatim_snippet_scores_100_whatever_its_whitespace():
    assert verbatim_fuzzy_pct("mean age  54.3\nyears", CONTEXT) == 100.0


def test_case_is_kept():
    assert verbatim_fuzzy_pct("METHODS: 120 ADULTS", CONTEXT) < 100.0


@pytest.mark.parametrize(
    ("snippet", "expected"), [("12", 100.0), ("120", 100.0), ("54", 0.0), ("3", 0.0), ("20", 0.0)]
)
def test_short_digit_snippets_must_stand_as_whole_numbers(snippet, expected):
    assert verbatim_fuzzy_pct(snippet, CONTEXT) == expected


def test_number_boundaries_treat_separators_between_digits_as_part_of_the_number():
    assert not occurs_on_number_boundaries("3", "54.3 years")
    assert occurs_on_number_boundaries("3", "group 3.")
    assert occurs_on_number_boundaries("12", "(n=12, 40%)")


def test_a_short_snippet_that_occurs_scores_100():
    assert verbatim_fuzzy_pct("age", CONTEXT) == 100.0


def test_a_short_snippet_that_does_not_occur_falls_back_to_partial_ratio():
    assert verbatim_fuzzy_pct("agX", CONTEXT) == round(fuzz.partial_ratio("agX", CONTEXT), 2)


def test_other_snippets_score_the_partial_ratio_with_two_decimals():
    snippet = "mean age 54 years were randomized"
    score = verbatim_fuzzy_pct(snippet, CONTEXT)
    assert score == round(fuzz.partial_ratio(snippet, CONTEXT), 2)
    assert 0.0 < score < 100.0
    assert score == round(score, 2)


@settings(max_examples=300, deadline=None)
@given(
    snippet=st.text(alphabet="12ab \n\t", max_size=8),
    context=st.text(alphabet="12ab \n.,", max_size=30),
)
def test_a_snippet_collapsed_ahead_settles_by_the_rules_without_partial_ratio(snippet, context):
    collapsed_snippet, collapsed_context = collapse_whitespace(snippet), collapse_whitespace(context)
    if not collapsed_snippet or not collapsed_context:
        expected = 0.0
    elif len(collapsed_snippet) < 4 and collapsed_snippet.isdigit():
        expected = 100.0 if occurs_on_number_boundaries(collapsed_snippet, collapsed_context) else 0.0
    elif collapsed_snippet in collapsed_context:
        expected = 100.0
    else:
        expected = None
    assert settled_pct_of_collapsed(collapsed_snippet, collapsed_context) == expected


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(alphabet="abcAB xy1é", min_size=1, max_size=12),
            st.text(alphabet="abcAB xy1é", max_size=80),
        ),
        max_size=12,
    ),
    st.integers(1, 5),
)
def test_fuzzy_scores_of_the_helper_thread_are_one_partial_ratio_per_pair(pairs, batch):
    fuzzy = FuzzyScores(batch=batch)
    positions = [fuzzy.add(snippet, context) for snippet, context in pairs]
    assert positions == list(range(len(pairs)))
    assert fuzzy.scores() == [round(fuzz.partial_ratio(snippet, context), 2) for snippet, context in pairs]
    # No thread outlives the scores: the evaluating process may fork afterwards.
    assert threading.active_count() == 1


def test_fuzzy_scores_close_their_thread_when_the_caller_stops_early():
    fuzzy = FuzzyScores(batch=1)
    fuzzy.add("abc", "xxabdxx")
    fuzzy.close()
    assert threading.active_count() == 1
