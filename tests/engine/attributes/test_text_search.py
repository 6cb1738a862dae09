"""'Gold value found in text': word-bounded strings, near windows in citations, whole numbers."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from metrics.engine.attributes.text_search import (
    SearchableText,
    near_window_in,
    normalise_for_search,
    number_in,
    occurs_on_word_boundaries,
    read_numbers,
    token_value,
)


def test_male_is_not_found_in_female():
    assert not occurs_on_word_boundaries("male", "the participants were female")
    assert not occurs_on_word_boundaries("male", "males only")
    assert occurs_on_word_boundaries("male", "female and male participants")


def test_strings_are_compared_whitespace_collapsed_and_casefolded():
    text = SearchableText("Patients had  Type 2\nDiabetes.", "en")
    assert text.contains_string(normalise_for_search("type 2 diabetes"))
    assert not text.contains_string(normalise_for_search("type 2 diabete"))


def test_an_empty_value_is_never_found():
    assert not SearchableText("anything", "en").contains_string("")


def test_boundaries_only_bind_word_characters_at_the_needle_ends():
    assert occurs_on_word_boundaries("(itt)", "analysis(itt) was used")


def test_a_near_window_is_not_an_exact_find():
    citation = "participants received metformine twice daily"
    assert not SearchableText(citation, "en").contains_string("metformin twice")
    assert near_window_in("metformin twice", citation, 0.9)
    assert not near_window_in("insulin twice", citation, 0.9)


def test_a_near_window_spans_as_many_words_as_the_value():
    assert near_window_in("randomised controlled", "a randomized controlled trial", 0.9)
    assert not near_window_in("randomised controlled trial design", "a trial", 0.9)


def test_10_000_yields_no_0_and_no_10():
    assert read_numbers("we enrolled 10,000 patients", "en") == [10000.0]
    text = SearchableText("we enrolled 10,000 patients", "en")
    assert text.contains_number(10000, 0.0)
    assert not text.contains_number(0, 0.0)
    assert not text.contains_number(10, 0.0)


def test_a_grouped_number_matches_only_when_the_format_reads_it_so():
    # Under de, "10,000" is ten with three decimals: a legitimate reading, and never 10000.
    assert read_numbers("10,000 Patienten", "de") == [10.0]
    assert not SearchableText("10,000 Patienten", "de").contains_number(10000, 0.0)
    assert SearchableText("1.250,5 mg", "de").contains_number(1250.5, 0.0)
    assert read_numbers("aged 12,15 years", "en") == []


def test_numbers_are_signed_decimals_when_the_sign_starts_a_word():
    assert read_numbers("change of -5 and +2.5", "en") == [-5.0, 2.5]
    assert read_numbers("ages 10-20", "en") == [10.0, 20.0]
    assert read_numbers("COVID-19", "en") == [19.0]


def test_digits_glued_to_words_are_not_numbers():
    assert read_numbers("arm B2 and x12", "en") == []
    assert read_numbers("n=12; p<0.05.", "en") == [0.05, 12.0]


def test_floats_match_within_the_relative_tolerance():
    assert number_in(0.3, [0.1 + 0.2], 1e-9)
    assert not number_in(0.3, [0.31], 1e-9)
    assert SearchableText("mean 0.30000000000000004", "en").contains_number(0.3, 1e-9)


TEXT_ALPHABET = st.sampled_from(list("0123456789.,+- ab_"))


def test_values_below_one_and_zero_are_found_as_written():
    def found(text: str, value: float, number_format: str = "en") -> bool:
        return SearchableText(text, number_format).contains_number(value, 1e-9)

    text = "p = 0.046 in arm A, .05 in arm B and 0,045 in arm C"
    assert found(text, 0.046) and found(text, 0.05)
    assert not found(text, 0.045)  # "0,045" is 45 under en
    assert found(text, 0.045, "de")
    assert not found("0.0461", 0.046)
    assert found("0.04600000000001", 0.046) and found("0.04599999999999", 0.046)
    assert found("10, 20 and 0.5 but 0.00", 0.0)
    assert not found("10, 20 and 0.5", 0.0)


@pytest.mark.parametrize("value", [10, 100, 1000])
def test_the_number_search_never_finds_a_part_of_a_larger_number(value):
    assert not SearchableText("10000 and 1,000,000", "en").contains_number(value, 0.0)


def every_window_reaches(needle: str, haystack: str, threshold: float) -> bool:
    words, width = haystack.split(), len(needle.split())
    return width > 0 and any(
        Levenshtein.normalized_similarity(needle, " ".join(words[i : i + width])) >= threshold
        for i in range(len(words) - width + 1)
    )


WORDY = st.text(st.sampled_from(list("abcde  ")), max_size=40).map(lambda text: " ".join(text.split()))


@settings(max_examples=500, deadline=None)
@given(needle=WORDY, haystack=WORDY, threshold=st.sampled_from([0.0, 0.3, 0.6, 0.75, 0.9, 1.0]))
def test_the_near_window_search_agrees_with_comparing_every_window(needle, haystack, threshold):
    assert near_window_in(needle, haystack, threshold) == every_window_reaches(needle, haystack, threshold)


def numbers_by_every_token(text: str, number_format: str) -> list[float]:
    """read_numbers by its definition: every token of `[.,]?\\d+(?:[.,]\\d+)*` that reads as a number."""
    tokens = re.finditer(r"[.,]?\d+(?:[.,]\d+)*", text)
    values = [token_value(text, token.start(), token.end(), number_format) for token in tokens]
    return sorted(value for value in values if value is not None)


@settings(max_examples=600, deadline=None)
@given(
    text=st.text(st.sampled_from(list("0123456789.,,..+- ab_(٣")), max_size=40),
    number_format=st.sampled_from(["en", "de"]),
)
def test_reading_numbers_from_their_digits_finds_every_token(text, number_format):
    assert read_numbers(text, number_format) == numbers_by_every_token(text, number_format)


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(st.text(st.sampled_from(list("0123456789.,,..+- ab_")), max_size=40), max_size=25),
    other_digit=st.sampled_from(["", "٣"]),
    number_format=st.sampled_from(["en", "de"]),
)
def test_a_long_text_is_read_token_by_token_whatever_its_length_and_digits(
    pieces, other_digit, number_format
):
    # An ASCII text's digits are found in its bytes translated; with a digit outside ASCII in it, by
    # the regex.
    text = other_digit.join(pieces) + " 1" * 130
    assert read_numbers(text, number_format) == numbers_by_every_token(text, number_format)


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(TEXT_ALPHABET, max_size=30),
    values=st.lists(
        st.one_of(st.integers(-2000, 2000).map(float), st.sampled_from([0.05, 0.5, 1.25, 1250.5])), max_size=6
    ),
    number_format=st.sampled_from(["en", "de"]),
)
def test_a_text_searched_for_many_numbers_answers_each_as_a_fresh_text(text, values, number_format):
    searched = SearchableText(text, number_format)
    for value in values:
        assert searched.contains_number(value, 0.0) == SearchableText(text, number_format).contains_number(
            value, 0.0
        )
