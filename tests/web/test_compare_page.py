"""`/compare/?a=&b=`: paired deltas with CI, p and Holm p; a forest plot; the rows whose outcome changed."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db


def test_the_paired_table_has_delta_ci_p_and_holm_p_per_entity_type(bob_browser, spans):
    page = bob_browser.get(f"/compare/?a={spans.worse}&b={spans.better}").content.decode()

    table = page[page.index('data-testid="paired-table"') :]
    table = table[: table.index("</table>")]
    assert "Holm p" in table
    assert "PERSON_NAME: character recall" in table and "overall: character F1" in table
    assert re.search(r"-?\d\.\d\d \[-?\d\.\d\d, -?\d\.\d\d\]", table)


def test_the_paired_table_of_attribute_runs_has_a_row_per_attribute(bob_browser, attributes):
    page = bob_browser.get(f"/compare/?a={attributes.worse}&b={attributes.better}").content.decode()

    table = page[page.index('data-testid="paired-table"') :]
    for label in ("Randomised", "Country", "Participants", "Mean age"):
        assert f"{label}: accuracy" in table


def test_the_forest_plot_is_an_svg_with_a_zero_line(bob_browser, spans):
    page = bob_browser.get(f"/compare/?a={spans.worse}&b={spans.better}").content.decode()

    chart = page[page.index('data-testid="delta-chart"') :]
    chart = chart[: chart.index("</div>")]
    assert "<svg" in chart and 'stroke-dasharray="4 3"' in chart


def test_the_changed_rows_link_to_their_documents(bob_browser, spans):
    page = bob_browser.get(f"/compare/?a={spans.worse}&b={spans.better}").content.decode()

    changed = page[page.index('data-testid="changed-rows"') :]
    assert f'href="/runs/{spans.better}/documents/letter-1/"' in changed


def test_runs_of_different_kinds_answer_409_with_the_reason(alice_browser, spans, attributes):
    response = alice_browser.get(f"/compare/?a={spans.worse}&b={attributes.worse}")

    assert response.status_code == 409
    assert b"different projects" in response.content


def test_a_missing_run_parameter_is_a_400_naming_it(bob_browser, spans):
    response = bob_browser.get(f"/compare/?a={spans.worse}")

    assert response.status_code == 400
    assert b"b: This field is required." in response.content


def test_charlie_the_outsider_gets_404(charlie_browser, spans):
    assert charlie_browser.get(f"/compare/?a={spans.worse}&b={spans.better}").status_code == 404


def test_an_unknown_query_parameter_is_the_apis_400(bob_browser, bob_client, spans):
    query = f"a={spans.worse}&b={spans.better}&resample=10"
    page = bob_browser.get(f"/compare/?{query}")
    api = bob_client.get(f"/api/v1/runs/compare/?{query}")

    assert page.status_code == api.status_code == 400
    assert api.json()["resample"][0].startswith("unknown query parameter; this operation takes: ")
    assert b"resample: unknown query parameter" in page.content


def test_the_apis_parameters_are_the_pages_and_its_json_link_keeps_them(bob_browser, bob_client, spans):
    query = f"a={spans.worse}&b={spans.better}&resamples=50&seed=7"
    page = bob_browser.get(f"/compare/?{query}").content.decode()
    api = bob_client.get(f"/api/v1/runs/compare/?{query}").json()

    assert f"{api['paired']['resamples']} resamples" in page and api["paired"]["resamples"] == 50
    assert f'href="/api/v1/runs/compare/?{query.replace("&", "&amp;")}"' in page


def test_without_the_paired_tests_the_page_still_shows_the_changed_rows(bob_browser, spans):
    page = bob_browser.get(f"/compare/?a={spans.worse}&b={spans.better}&paired=false").content.decode()

    assert "paired tests not run" in page
    assert f'href="/runs/{spans.better}/documents/letter-1/"' in page
