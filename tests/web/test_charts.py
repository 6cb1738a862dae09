"""web.charts and web.formatting: how a number and a chart read."""

from __future__ import annotations

from web.charts import MATCH_STATUS_CATEGORIES, Bar, IntervalPoint, interval_chart, stacked_bar_chart
from web.formatting import number, p_value, with_interval


def test_an_estimate_reads_with_its_interval_in_brackets():
    assert with_interval(0.8612, 0.8411, 0.8823) == "0.86 [0.84, 0.88]"
    assert with_interval(0.86, None, None) == "0.86"
    assert with_interval(None, 0.1, 0.2) == "–"


def test_a_blank_is_a_dash_never_a_zero_and_zero_has_no_sign():
    assert number(None) == "–"
    assert number(-0.004) == "0.00"
    assert number(-0.04) == "-0.04"
    assert number(1250) == "1,250"
    assert p_value(0.0004) == "<0.001" and p_value(0.0123) == "0.012"


def test_an_interval_chart_is_an_svg_with_text_for_every_estimate_and_escaped_labels():
    svg = interval_chart(
        [IntervalPoint("<b>run</b>", 0.9, 0.85, 0.95), IntervalPoint("null run", None, note="not scored")],
        title="t",
    )

    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "&lt;b&gt;run&lt;/b&gt;" in svg and "<b>" not in svg
    assert "0.90 [0.85, 0.95]" in svg and "not scored" in svg


def test_a_not_significant_point_is_hollow_and_a_significant_one_filled():
    svg = interval_chart(
        [IntervalPoint("a", 0.1, -0.1, 0.3, emphasised=False), IntervalPoint("b", 0.2, 0.1, 0.3)],
        title="t",
        domain=None,
        reference=0.0,
        legend="hollow: not significant",
    )

    assert svg.count('fill="#fff" stroke="#0072B2"') == 1
    assert svg.count('fill="#0072B2" stroke="#0072B2"') == 1
    assert "hollow: not significant" in svg


def test_bar_categories_differ_by_hatching_as_well_as_colour():
    svg = stacked_bar_chart(
        [Bar("Country", {"exact_match": 3, "extraction_error_good_source": 1})],
        categories=MATCH_STATUS_CATEGORIES,
        title="t",
    )

    assert '<pattern id="hatch-' in svg and 'fill="url(#hatch-' in svg
    assert "Country: exact_match 3 of 4" in svg
