"""Strict coercion: what a raw gold or predicted value may be, and what it may never become."""

import pytest

from metrics.engine.attributes.coercion import CoercionError, coerce_value, parse_number_text
from metrics.engine.attributes.types import AttributeType

BOOL, STRING, INTEGER, FLOAT = (
    AttributeType.BOOL,
    AttributeType.STRING,
    AttributeType.INTEGER,
    AttributeType.FLOAT,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(True, True), (False, False), ("true", True), ("FALSE", False), (" Yes ", True), ("no", False)]
    + [("1", True), ("0", False), (1, True), (0, False)],
)
def test_bool_accepts_only_the_listed_spellings(raw, expected):
    assert coerce_value(raw, BOOL, "en") is expected


@pytest.mark.parametrize("raw", ["y", "n", "maybe", "", "2", 2, 1.0, "True!", [], {}])
def test_bool_rejects_anything_else(raw):
    with pytest.raises(CoercionError):
        coerce_value(raw, BOOL, "en")


def test_1_250_reads_1250_under_en():
    assert coerce_value("1,250", INTEGER, "en") == 1250
    assert coerce_value("1,250.5", FLOAT, "en") == 1250.5


def test_0_45_reads_0_45_under_de():
    assert coerce_value("0,45", FLOAT, "de") == 0.45
    assert coerce_value("1.250,5", FLOAT, "de") == 1250.5
    assert coerce_value("1.250", INTEGER, "de") == 1250


def test_the_same_text_means_what_the_number_format_says():
    assert coerce_value("1.250", FLOAT, "en") == 1.25
    assert coerce_value("1.250", FLOAT, "de") == 1250.0
    with pytest.raises(CoercionError):
        coerce_value("0,45", FLOAT, "en")


@pytest.mark.parametrize(
    "raw", ["", "abc", "12 patients", "1,25", "1,2,3", "1.2.3", "--5", "NaN", "inf", True, [3]]
)
def test_unparseable_numbers_are_errors_never_zero(raw):
    with pytest.raises(CoercionError):
        coerce_value(raw, FLOAT, "en")


def test_an_integer_must_be_integral():
    assert coerce_value(12.0, INTEGER, "en") == 12
    assert coerce_value("-3", INTEGER, "en") == -3
    with pytest.raises(CoercionError, match="not an integer"):
        coerce_value("12.5", INTEGER, "en")


def test_json_numbers_pass_through():
    assert coerce_value(7, FLOAT, "en") == 7.0
    assert coerce_value(2.5, FLOAT, "de") == 2.5


def test_strings_keep_their_text_and_accept_json_numbers():
    assert coerce_value("  Male ", STRING, "en") == "  Male "
    assert coerce_value(42, STRING, "en") == "42"
    with pytest.raises(CoercionError):
        coerce_value(True, STRING, "en")


def test_lists_and_dicts_need_their_json_shape():
    assert coerce_value(("a", "b"), AttributeType.LIST, "en") == ["a", "b"]
    assert coerce_value({"arm": 1}, AttributeType.DICT, "en") == {"arm": 1}
    with pytest.raises(CoercionError):
        coerce_value("a, b", AttributeType.LIST, "en")
    with pytest.raises(CoercionError):
        coerce_value([1], AttributeType.DICT, "en")


def test_null_stays_null():
    assert coerce_value(None, INTEGER, "en") is None


@pytest.mark.parametrize(
    ("text", "number_format", "expected"),
    [("10,000", "en", 10000), ("10.000", "de", 10000), ("-2.5", "en", -2.5), ("1e3", "en", 1000.0)]
    + [(".5", "en", 0.5), ("-.5", "en", -0.5), ("+.35", "en", 0.35), (",5", "de", 0.5)]
    + [("10,00", "en", None), ("1,0000", "en", None), ("12.", "en", None), (".", "en", None)]
    + [(".5", "de", None), (",5", "en", None), ("..5", "en", None), ("-.", "en", None)],
)
def test_parse_number_text(text, number_format, expected):
    assert parse_number_text(text, number_format) == expected
