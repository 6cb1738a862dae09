"""`/runs/<id>/`: headline, leakage first (spans), breakdown chart, comparison rows as the API serves them."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.html import escape

from annotations.importers.errors import ImportProblem
from annotations.models import Job, JobKind, JobState
from annotations.services.job_problems import problem_dict
from experiments.models import ExperimentRun, RunStatus

pytestmark = pytest.mark.django_db


def _section(page: str, testid: str) -> str:
    start = page.index(f'data-testid="{testid}"')
    return (
        page[start : start + page[start:].index("</section>")]
        if "</section>" in page[start:]
        else page[start:]
    )


def _row_keys(page: str) -> list[str]:
    table = page[page.index('data-testid="comparison-table"') :]
    table = table[: table.index("</table>")]
    return re.findall(r"<tr><td><a href=\"([^\"]+)\"", table)


def test_the_leakage_block_comes_before_any_other_metric_and_links_the_leaking_documents(bob_browser, spans):
    page = bob_browser.get(f"/runs/{spans.worse}/").content.decode()

    leakage = page.index('data-testid="leakage"')
    assert leakage < page.index('data-testid="headline"') < page.index('data-testid="breakdown-chart"')
    block = _section(page, "leakage")
    assert f'href="/runs/{spans.worse}/documents/letter-1/"' in block
    assert "documents leak" in block


def test_the_headline_shows_each_measure_with_its_interval(bob_browser, spans):
    headline = _section(bob_browser.get(f"/runs/{spans.worse}/").content.decode(), "headline")

    assert "character F1" in headline and "character recall" in headline
    assert re.search(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", headline)


def test_the_breakdown_chart_is_an_svg_per_entity_type(bob_browser, spans):
    page = bob_browser.get(f"/runs/{spans.worse}/").content.decode()

    chart = page[page.index('data-testid="breakdown-chart"') :]
    chart = chart[: chart.index("</div>")]
    assert "<svg" in chart and "PERSON_NAME" in chart and "DATE_OF_BIRTH" in chart


def test_an_attribute_run_shows_accuracy_per_attribute_and_the_match_status_distribution(
    bob_browser, attributes
):
    page = bob_browser.get(f"/runs/{attributes.worse}/").content.decode()

    assert 'data-testid="leakage"' not in page
    breakdown = page[page.index('data-testid="breakdown-chart"') :]
    assert "<svg" in breakdown[: breakdown.index("</div>")] and "Country" in breakdown
    distribution = page[page.index('data-testid="match-status-chart"') :]
    assert "<svg" in distribution and "exact_match" in distribution


def test_a_null_headline_shows_the_missing_predictions_and_the_value_given_a_prediction(
    bob_browser, attributes
):
    headline = _section(bob_browser.get(f"/runs/{attributes.worse}/").content.decode(), "headline")

    mean_age = headline[headline.index("Mean age") :]
    mean_age = mean_age[: mean_age.index("</tr>")]
    assert "null" in mean_age and "2 missing predictions" in mean_age
    assert "given a prediction: 1.00" in mean_age


def test_the_comparison_rows_are_the_apis_rows_for_the_same_filter(bob_browser, bob_client, spans):
    page = bob_browser.get(f"/runs/{spans.worse}/?match_status=missed").content.decode()
    api = bob_client.get(f"/api/v1/runs/{spans.worse}/comparison/?match_status=missed").json()["results"]

    table = page[page.index('data-testid="comparison-table"') :]
    table = table[: table.index("</table>")]
    assert table.count("<tr><td>") == len(api) > 0
    assert table.count(">missed<") == len(api)
    assert ">exact<" not in table


@pytest.mark.parametrize(
    ("query", "expected_status"),
    [("attribute=102", None), ("match_status=exact_match", "exact_match"), ("document=1002", None)],
)
def test_each_filter_of_the_api_filters_the_rows(bob_browser, bob_client, attributes, query, expected_status):
    page = bob_browser.get(f"/runs/{attributes.worse}/?{query}").content.decode()
    api = bob_client.get(f"/api/v1/runs/{attributes.worse}/comparison/?{query}").json()["results"]

    assert len(_row_keys(page)) == len(api) > 0
    if expected_status:
        assert {row["match_status"] for row in api} == {expected_status}


def test_the_entity_type_filter_keeps_one_type(bob_browser, spans):
    page = bob_browser.get(f"/runs/{spans.worse}/?entity_type=PERSON_NAME").content.decode()

    table = page[page.index('data-testid="comparison-table"') :]
    table = table[: table.index("</table>")]
    assert "PERSON_NAME" in table and "DATE_OF_BIRTH" not in table


def test_the_rows_are_paged_by_keyset_and_the_next_page_continues_where_the_first_ended(bob_browser, spans):
    first = bob_browser.get(f"/runs/{spans.worse}/?page_size=3").content.decode()
    next_link = re.search(r'href="([^"]+)#rows" rel="next"', first).group(1).replace("&amp;", "&")

    second = bob_browser.get(next_link).content.decode()

    assert "cursor=" in next_link
    assert len(_row_keys(first)) == 3
    assert 'rel="prev"' in second
    whole = bob_browser.get(f"/runs/{spans.worse}/?page_size=1000").content.decode()
    assert _row_keys(whole)[3:6] == _row_keys(second)[:3]


def test_the_csv_link_is_the_apis_export_with_the_same_filters(bob_browser, spans):
    page = bob_browser.get(f"/runs/{spans.worse}/?match_status=missed").content.decode()

    link = re.search(r'<a href="([^"]+)" data-testid="csv-link"', page).group(1).replace("&amp;", "&")
    assert link == f"/api/v1/runs/{spans.worse}/comparison/?format=csv&match_status=missed"
    response = bob_browser.get(link)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")


def test_an_invalid_cursor_is_a_404_page_with_the_reason_as_in_the_api(bob_browser, spans):
    response = bob_browser.get(f"/runs/{spans.worse}/?cursor=not-a-cursor")

    assert response.status_code == 404
    assert b"Invalid cursor" in response.content


def test_while_the_run_is_scoring_the_page_shows_the_jobs_progress_and_follows_it(bob_browser, spans):
    run = ExperimentRun.objects.get(pk=spans.better)
    job = Job.objects.create(
        kind=JobKind.SCORING, project=run.project, state=JobState.RUNNING, progress_done=2, progress_total=4
    )
    ExperimentRun.objects.filter(pk=run.pk).update(status=RunStatus.SCORING, scoring_job=job)

    page = bob_browser.get(f"/runs/{run.pk}/").content.decode()

    progress = _section(page, "progress")
    assert 'data-state="running"' in progress and f'data-job-url="/api/v1/jobs/{job.pk}/"' in progress
    assert "<span data-progress-done>2</span> of <span data-progress-total>4</span>" in progress
    assert "/static/web/progress.js" in page
    assert "<span data-progress-chunks hidden>" in progress  # not counted in chunks (yet)


def test_a_scoring_in_chunks_shows_its_chunks_beside_its_documents(bob_browser, spans):
    run = ExperimentRun.objects.get(pk=spans.better)
    job = Job.objects.create(
        kind=JobKind.SCORING,
        project=run.project,
        state=JobState.RUNNING,
        progress_done=1000,
        progress_total=2500,
        chunks_done=2,
        chunks_total=5,
    )
    ExperimentRun.objects.filter(pk=run.pk).update(status=RunStatus.SCORING, scoring_job=job)

    progress = _section(bob_browser.get(f"/runs/{run.pk}/").content.decode(), "progress")

    assert (
        "<span data-progress-done>1000</span> of <span data-progress-total>2500</span> documents"
        "<span data-progress-chunks>, chunk <span data-progress-chunks-done>2</span> of "
        "<span data-progress-chunks-total>5</span></span>"
    ) in progress


def test_a_scoring_jobs_problems_show_in_its_progress_panel_in_the_one_problem_shape(bob_browser, spans):
    run = ExperimentRun.objects.get(pk=spans.better)
    job = Job.objects.create(
        kind=JobKind.SCORING,
        project=run.project,
        state=JobState.RUNNING,
        warnings=[problem_dict(ImportProblem("no prediction", document_id="letter-2", field="spans"))],
        errors=[problem_dict("the worker stopped")],
    )
    ExperimentRun.objects.filter(pk=run.pk).update(status=RunStatus.SCORING, scoring_job=job)

    problems = _section(bob_browser.get(f"/runs/{run.pk}/").content.decode(), "progress")

    assert (
        '<li class="problem-error" data-problem="error"><strong>error</strong>: the worker stopped'
        in problems
    )
    warning = problems[problems.index('data-problem="warning"') :]
    assert "no prediction" in warning and "document letter-2" in warning and "field spans" in warning


def test_an_unknown_query_parameter_is_the_apis_400(bob_browser, bob_client, spans):
    page = bob_browser.get(f"/runs/{spans.worse}/?matchstatus=missed")
    api = bob_client.get(f"/api/v1/runs/{spans.worse}/comparison/?matchstatus=missed")

    assert page.status_code == api.status_code == 400
    assert api.json()["matchstatus"][0].startswith("unknown query parameter; this operation takes: ")
    assert b"matchstatus: unknown query parameter; this operation takes: " in page.content


def test_a_match_status_of_the_other_kind_is_the_apis_400_listing_the_runs_statuses(
    bob_browser, bob_client, spans
):
    page = bob_browser.get(f"/runs/{spans.worse}/?match_status=exact_match")
    api = bob_client.get(f"/api/v1/runs/{spans.worse}/comparison/?match_status=exact_match")

    assert page.status_code == api.status_code == 400
    reason = api.json()["match_status"][0]
    assert "missed" in reason and escape(reason).encode() in page.content


def test_a_scoring_that_does_not_exist_is_the_apis_404(bob_browser, bob_client, spans):
    assert bob_browser.get(f"/runs/{spans.worse}/?scoring=99").status_code == 404
    assert bob_client.get(f"/api/v1/runs/{spans.worse}/comparison/?scoring=99").status_code == 404


def test_the_attribute_filter_takes_a_label_as_the_api_does(bob_browser, bob_client, attributes):
    page = bob_browser.get(f"/runs/{attributes.worse}/?attribute=Country").content.decode()
    api = bob_client.get(f"/api/v1/runs/{attributes.worse}/comparison/?attribute=Country").json()

    assert len(_row_keys(page)) == len(api["results"]) > 0


def test_an_empty_form_field_is_no_filter(bob_browser, spans):
    everything = _row_keys(bob_browser.get(f"/runs/{spans.worse}/").content.decode())
    blank = _row_keys(
        bob_browser.get(f"/runs/{spans.worse}/?match_status=&entity_type=&document=").content.decode()
    )

    assert blank == everything


def test_asking_the_page_for_a_format_goes_to_the_apis_answer_of_the_same_query(bob_browser, spans):
    response = bob_browser.get(f"/runs/{spans.worse}/?match_status=missed&format=csv")

    assert response.status_code == 302
    assert response["Location"] == f"/api/v1/runs/{spans.worse}/comparison/?match_status=missed&format=csv"


def test_a_finished_run_has_no_progress_panel(bob_browser, spans):
    assert 'data-testid="progress"' not in bob_browser.get(f"/runs/{spans.better}/").content.decode()


def test_charlie_the_outsider_gets_404(charlie_browser, spans):
    assert charlie_browser.get(f"/runs/{spans.worse}/").status_code == 404


def test_each_chart_downloads_as_an_svg_file(bob_browser, attributes):
    for name in ("breakdown-chart", "match-status-chart"):
        response = bob_browser.get(f"/runs/{attributes.worse}/?svg={name}")

        assert response.status_code == 200
        assert response["Content-Type"] == "image/svg+xml"
        assert f'filename="run-{attributes.worse}-{name}.svg"' in response["Content-Disposition"]
        assert response.content.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns=')
    assert bob_browser.get(f"/runs/{attributes.worse}/?svg=nothing").status_code == 404


def test_the_match_status_counts_are_read_once_per_scoring(bob_browser, attributes):
    bob_browser.get(f"/runs/{attributes.worse}/")

    with CaptureQueriesContext(connection) as second:
        page = bob_browser.get(f"/runs/{attributes.worse}/").content.decode()

    assert not [query for query in second.captured_queries if "GROUP BY" in query["sql"]]
    assert "exact_match" in page[page.index('data-testid="match-status-chart"') :]


def test_a_long_list_of_leaking_documents_is_cut_and_says_how_many_there_are(bob_browser, spans, monkeypatch):
    monkeypatch.setattr("web.views.runs.LEAKED_SHOWN", 1)

    block = _section(bob_browser.get(f"/runs/{spans.worse}/").content.decode(), "leakage")

    assert block.count(f'href="/runs/{spans.worse}/documents/') == 1
    assert "The first 1 of" in block and 'href="?match_status=missed#rows"' in block
