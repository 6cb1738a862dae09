"""`/runs/<id>/documents/<external_id>/`: gold, predicted and missed characters; an attribute document's rows."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db


def _marked(page: str, kind: str) -> list[str]:
    return re.findall(rf'data-span="{kind}"[^>]*>([^<]*)<', page)


def test_a_span_document_marks_gold_predicted_and_missed_characters(bob_browser, spans):
    # letter-1: the name is found, the birth date half found (39-44 of 39-49), the ID number missed.
    page = bob_browser.get(f"/runs/{spans.worse}/documents/letter-1/").content.decode()

    assert "Anna Berger" in _marked(page, "predicted")
    assert "4711-22" in _marked(page, "missed")
    assert any(text.startswith("12.03") for text in _marked(page, "predicted"))
    assert ".1961" in _marked(page, "missed")
    assert page.count('data-span="gold"') >= 4


def test_each_highlight_shows_its_type_and_a_wrong_type_is_marked(bob_browser, spans):
    # The fixture predicts OTHER_DATE over the gold DATE_OF_BIRTH and URL over the EMAIL.
    page = bob_browser.get(f"/runs/{spans.worse}/documents/letter-1/").content.decode()

    assert "gold: DATE_OF_BIRTH" in page and "pred: OTHER_DATE" in page
    assert "data-type-mismatch" in page
    assert 'title="gold EMAIL; predicted URL (wrong type)"' in page


def test_a_prediction_outside_the_gold_is_marked_as_predicted_alone(bob_browser, spans):
    page = bob_browser.get(f"/runs/{spans.worse}/documents/letter-3/").content.decode()

    assert 'class="predicted spurious" data-span="predicted"' in page
    assert 'data-span="missed"' not in page


def test_an_attribute_document_shows_gold_and_model_values_citation_and_the_marked_context(
    bob_browser, attributes
):
    page = bob_browser.get(f"/runs/{attributes.worse}/documents/1001/").content.decode()

    rows = page[page.index('data-testid="document-rows"') :]
    rows = rows[: rows.index("</table>")]
    assert "Kenya" in rows and "Kenia" in rows  # gold and the model's value
    assert "The trial was conducted in Kenya" in rows  # the citation highlight
    text = page[page.index('data-testid="document-text"') :]
    assert re.search(r'<mark class="gold-value" data-gold="102"[^>]*>Kenya', text)
    assert re.search(r'<mark class="gold-value" data-gold="103"[^>]*>120', text)


def test_the_text_is_escaped(bob_browser, spans, project):
    document = project.documents.get(external_id="letter-3")
    document.text = "<script>alert(1)</script>" + document.text[25:]
    document.save()

    page = bob_browser.get(f"/runs/{spans.worse}/documents/letter-3/").content.decode()

    assert "<script>alert(1)" not in page and "&lt;script&gt;" in page


def test_an_unknown_document_and_an_outsider_get_404(bob_browser, charlie_browser, spans):
    assert bob_browser.get(f"/runs/{spans.worse}/documents/no-such-letter/").status_code == 404
    assert charlie_browser.get(f"/runs/{spans.worse}/documents/letter-1/").status_code == 404
