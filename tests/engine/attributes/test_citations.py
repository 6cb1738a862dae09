"""EPPI citation markup: the citation page, the highlighted text, the raw details."""

import pytest

from metrics.engine.attributes.citations import citation_highlights, citation_page, parse_citation
from metrics.engine.attributes.types import FullTextDetail


def test_the_page_is_the_first_page_marker():
    assert citation_page("Page 4:\n[¬s]text[¬e] see also Page 9: more") == "4"
    assert citation_page("no marker here") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('Page 3:\n[¬s]"120 adults were enrolled"[¬e]', ["120 adults were enrolled"]),
        ("Page 3:\n[¬s]first[¬e] and [¬s]'second'[¬e]", ["first", "second"]),
        ('Page 3:\n[¬s]"an unclosed highlight\nthat runs on', ["an unclosed highlight that runs on"]),
        ('Page 12: "no markup at all"', ["no markup at all"]),
        ("Page 3:\n[¬s]  [¬e]", []),
        ("“curly quotes”", ["curly quotes"]),
        ("Page 1: [¬s]closed[¬e] then [¬s]left open", ["closed"]),
        ("Page 1: [¬s]nested [¬s]start[¬e]", ["nested start"]),
    ],
)
def test_highlights_come_from_closed_spans_then_an_unclosed_span_then_the_bare_text(text, expected):
    assert citation_highlights(text) == expected


def test_several_entries_are_joined_with_a_colon():
    citation = parse_citation(
        (
            FullTextDetail(text='Page 3:\n[¬s]"120 adults"[¬e]'),
            FullTextDetail(text="Page 5:\n[¬s]mean age 54[¬e]"),
            FullTextDetail(text="Page 3:\n[¬s]again page three[¬e]"),
        )
    )
    assert citation.page == "3: 5"
    assert citation.highlight_text == "120 adults: mean age 54: again page three"
    assert citation.highlights == ("120 adults", "mean age 54", "again page three")
    assert (
        citation.raw_details
        == 'Page 3:\n[¬s]"120 adults"[¬e]: Page 5:\n[¬s]mean age 54[¬e]: Page 3:\n[¬s]again page three[¬e]'
    )


def test_no_details_means_empty_citation_columns():
    citation = parse_citation(())
    assert (citation.raw_details, citation.page, citation.highlight_text, citation.highlights) == (
        None,
        None,
        None,
        (),
    )
