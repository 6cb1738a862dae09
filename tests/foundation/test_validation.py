"""evalproject.validation: what a text or JSON column can store, and where a value breaks it."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from evalproject.validation import (
    MAX_JSON_DEPTH,
    deepest_path,
    json_loads_checked,
    json_problems,
    text_problem,
)

storable_text = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=20)
storable_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | storable_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(storable_text, children, max_size=3),
    max_leaves=15,
)


def nested(depth: int, leaf=0):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def test_text_with_a_nul_or_a_lone_surrogate_or_too_long_is_not_storable():
    assert text_problem("fine", max_length=4) is None
    assert "NUL" in text_problem("a\x00b")
    assert "surrogate" in text_problem("a\ud800")
    assert text_problem("toolong", max_length=3) == "must be at most 3 characters long (it has 7)"


@given(storable_json)
def test_storable_json_has_no_problem_and_survives_strict_json(value):
    assert json_problems(value) == []
    json.dumps(value, allow_nan=False)  # raises for a non-finite number


@given(storable_json, st.sampled_from([math.nan, math.inf, -math.inf, 10**400, "a\x00", "\udfff"]))
def test_an_unstorable_leaf_is_found_at_its_path(value, bad):
    document = {"documents": [{"document_id": "d7", "annotations": [{"output_data": [value, bad]}]}]}

    problems = json_problems(document)

    assert [(problem.path, problem.document_id) for problem in problems] == [
        ("documents[0].annotations[0].output_data[1]", "d7")
    ]


def test_a_key_that_is_not_storable_is_named():
    [problem] = json_problems({"label_map": {"na\x00me": "PERSON_NAME"}})

    assert problem.path == "label_map.'na\\x00me'"
    assert problem.message.startswith("key must not contain the NUL character")


def test_nesting_is_refused_past_the_limit_and_not_before():
    assert json_problems(nested(MAX_JSON_DEPTH - 1)) == []
    [problem] = json_problems({"a": nested(MAX_JSON_DEPTH)})
    assert problem.path == "a" + "[0]" * (MAX_JSON_DEPTH - 1)


@given(st.integers(min_value=0, max_value=MAX_JSON_DEPTH + 20))
def test_the_token_scan_finds_the_same_place_as_the_parsed_walk(depth):
    text = json.dumps({"x": [1, {"y": nested(depth)}]})

    walked = json_problems(json.loads(text))
    scanned = deepest_path(text)

    if walked:
        assert scanned == walked[0].path
    else:
        assert scanned is None


def test_json_too_deep_to_parse_is_one_problem_naming_where():
    text = '{"documents": [{"annotations": ' + "[" * 5000 + "]" * 5000 + "}]}"

    value, [problem] = json_loads_checked(text)

    assert value is None
    assert problem.path.startswith("documents[0].annotations[0][0]")
    assert problem.message == f"is nested deeper than {MAX_JSON_DEPTH} levels"


def test_nan_and_infinity_literals_are_read_so_that_their_place_is_named():
    value, problems = json_loads_checked('{"a": [NaN, 1e309, -Infinity]}')

    assert [problem.path for problem in problems] == ["a[0]", "a[1]", "a[2]"]
