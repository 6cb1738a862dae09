"""`/projects/<slug>/`: runs table, leaderboard chart, split panel, gold versions."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotations.models import Membership
from annotations.roles import Role
from tests.web.support import perfect_span_predictions, scored_run

pytestmark = pytest.mark.django_db

INTERVAL = r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]"


def test_the_runs_table_links_each_run_with_status_stage_gold_model_cost_and_headline(bob_browser, spans):
    page = bob_browser.get("/projects/letters/").content.decode()

    table = page[page.index('data-testid="runs-table"') :]
    table = table[: table.index("</table>")]
    for run in (spans.worse, spans.better):
        assert f'href="/runs/{run}/"' in table
    assert table.count("scored") >= 2 and "gpt-4o-mini" in table and ">all<" in table
    assert 'data-testid="gold-status">scored on gold v1, the latest</span>' in table
    assert re.search(INTERVAL, table), "the headline is shown with its 95% CI"
    assert "1.00 [1.00, 1.00]" in table  # the perfect tagger's character F1


def test_the_leaderboard_is_an_svg_that_ranks_the_better_run_first(bob_browser, spans):
    page = bob_browser.get("/projects/letters/").content.decode()

    chart = page[page.index('data-testid="leaderboard-chart"') :]
    assert chart.index("<svg") < chart.index("</div>")
    assert chart.index("perfect tagger") < chart.index("sloppy tagger")


def test_a_null_headline_shows_the_missing_predictions_and_the_value_given_a_prediction(
    bob_browser, attributes
):
    # Mean age (104): the fixture LLM gave no value for two documents, so its accuracy is null.
    page = bob_browser.get("/projects/trials/?metric=104").content.decode()

    row = page[page.index(f'href="/runs/{attributes.worse}/"') :]
    row = row[: row.index("</tr>")]
    assert 'data-testid="null-headline"' in row
    assert "2 missing predictions" in row
    assert 'data-testid="given-prediction"' in row and "given a prediction: 1.00" in row


def test_the_split_panel_shows_phase_documents_per_stage_and_the_chosen_configuration(
    alice_browser, held_back
):
    page = alice_browser.get("/projects/split/").content.decode()

    panel = page[page.index('data-testid="split-panel"') :]
    panel = panel[: panel.index("</section>")]
    assert "dev_val_test" in panel and "development" in panel
    assert "none yet" in panel


def test_the_gold_versions_are_listed(bob_browser, spans):
    page = bob_browser.get("/projects/letters/").content.decode()

    versions = page[page.index('data-testid="gold-versions"') :]
    assert ">v1<" in versions and "spans_gold.jsonl" in versions


def test_charlie_the_outsider_gets_404(charlie_browser, spans):
    assert charlie_browser.get("/projects/letters/").status_code == 404


def test_an_auditor_gets_403_as_from_the_api(bob, bob_browser, spans):
    Membership.objects.filter(user=bob).update(role=Role.AUDITOR)

    response = bob_browser.get("/projects/letters/")

    assert response.status_code == 403
    assert b"viewer role" in response.content


def test_the_page_costs_the_same_queries_for_two_runs_or_three(bob_browser, alice_client, spans, commit):
    with CaptureQueriesContext(connection) as two_runs:
        bob_browser.get("/projects/letters/")
    scored_run(
        alice_client,
        slug="letters",
        kind="spans",
        name="third tagger",
        documents=perfect_span_predictions(),
        commit=commit,
    )
    with CaptureQueriesContext(connection) as three_runs:
        page = bob_browser.get("/projects/letters/").content.decode()

    assert "third tagger" in page
    assert len(three_runs) == len(two_runs)
