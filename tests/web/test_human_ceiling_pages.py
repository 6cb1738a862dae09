"""The human ceiling, the paired test's verdict and the gold status beside a run's numbers, on the run,
compare and project pages: what the API serves (metrics, compare), never a second computation."""

from __future__ import annotations

import pytest

from experiments.models import ExperimentRun, RunSource
from tests.agreement.test_several_annotators_import import import_export
from tests.api.runs_support import create_run, finalize, post_documents
from tests.gold_history.support import V1, import_gold
from tests.services.test_gold_import_fixtures import media_root  # noqa: F401 (a fixture)
from web.formatting import with_interval

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media_root")]


@pytest.fixture
def silent_pipeline(project, alice_client, django_capture_on_commit_callbacks) -> int:
    """alice's export with alice as gold (bob and carol become human runs), and a pipeline that found
    nothing: well below the humans."""
    import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    run = create_run(alice_client, kind="spans", name="silent")
    documents = [{"document_id": document_id, "entities": []} for document_id in ("doc-1", "doc-2")]
    assert post_documents(alice_client, run["id"], documents).status_code in (200, 201)
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, run["id"])
    return run["id"]


def _section(page: str, testid: str, end: str = "</section>") -> str:
    start = page.index(f'data-testid="{testid}"')
    return page[start : start + page[start:].index(end)]


def _entry(ceiling: dict, name: str = "micro.chars.all.f1") -> dict:
    return next(entry for entry in ceiling["metrics"] if entry["name"] == name)


def _verdict(annotator: dict) -> str:
    """What the page says of the paired test against one annotator (`model_below`)."""
    name = annotator["name"]
    return {
        True: f"<strong>below {name}</strong>",
        False: f"not below {name}",
        None: f"no paired test against {name}",
    }[annotator["model_below"]]


def _figure(figures: dict) -> str:
    return with_interval(figures["value"], figures["ci_low"], figures["ci_high"])


def test_the_run_page_puts_each_annotators_figure_and_the_verdict_beside_character_f1(
    silent_pipeline, bob_browser, bob_client
):
    ceiling = bob_client.get(f"/api/v1/runs/{silent_pipeline}/metrics/").json()["human_ceiling"]
    headline = _section(bob_browser.get(f"/runs/{silent_pipeline}/").content.decode(), "headline", "</dl>")

    f1 = headline[headline.index("character F1") : headline.index("character recall")]
    for annotator in _entry(ceiling)["annotators"]:
        assert f"{annotator['name']}</a> {_figure(annotator)}" in f1
        assert _verdict(annotator) in f1
    assert any(annotator["model_below"] for annotator in _entry(ceiling)["annotators"])
    assert "annotators" not in headline[headline.index("character recall") :]


def test_the_run_page_lists_every_measure_of_the_ceiling_with_its_paired_test(
    silent_pipeline, bob_browser, bob_client
):
    ceiling = bob_client.get(f"/api/v1/runs/{silent_pipeline}/metrics/").json()["human_ceiling"]
    table = _section(
        bob_browser.get(f"/runs/{silent_pipeline}/").content.decode(), "human-ceiling-table", "</table>"
    )

    assert f"gold (v{ceiling['gold_version']})" in table
    assert table.count("<tr><td>") == len(ceiling["metrics"]) == 3
    for entry in ceiling["metrics"]:
        assert _figure(entry["model"]) in table
    assert "span F1 (overlap)" in table and "strict F1 (nervaluate)" in table
    assert table.count('data-testid="ceiling-verdict"') == 3 * len(ceiling["human_runs"])


def test_a_run_without_human_runs_shows_no_ceiling(bob_browser, spans):
    page = bob_browser.get(f"/runs/{spans.worse}/").content.decode()

    assert 'data-testid="human-ceiling' not in page


def test_the_run_page_says_the_gold_status_the_api_serves(silent_pipeline, bob_browser, bob_client):
    status = bob_client.get(f"/api/v1/runs/{silent_pipeline}/metric-values/").json()["gold_status"]

    page = bob_browser.get(f"/runs/{silent_pipeline}/").content.decode()

    assert status["is_latest"] and f'data-testid="gold-status">{status["text"]}</span>' in page


def test_a_run_scored_on_an_older_gold_says_so_on_each_page_its_numbers_appear(
    project, alice_client, bob_client, bob_browser, django_capture_on_commit_callbacks
):
    import_gold(alice_client, django_capture_on_commit_callbacks, V1)
    run = create_run(alice_client, kind="spans", name="early")
    assert post_documents(alice_client, run["id"], [{"document_id": "d1", "entities": []}]).status_code in (
        200,
        201,
    )
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, run["id"])
    import_gold(
        alice_client,
        django_capture_on_commit_callbacks,
        {"d2": [(5, 13, "PHONE"), (0, 4, "OTHER_PII")], "d4": [(4, 11, "PERSON_NAME")]},
    )
    status = bob_client.get(f"/api/v1/runs/{run['id']}/metric-values/").json()["gold_status"]
    assert not status["is_latest"] and status["text"].startswith("scored on gold v1; v2 has ")

    shown = f'data-testid="gold-status">{status["text"]}</span>'
    assert shown in bob_browser.get(f"/runs/{run['id']}/").content.decode()
    runs_table = _section(
        bob_browser.get(f"/projects/{project.slug}/").content.decode(), "runs-table", "</table>"
    )
    assert shown in runs_table


def test_the_project_runs_table_shows_the_ceiling_of_the_chosen_headline(
    project, silent_pipeline, bob_browser, bob_client
):
    ceiling = bob_client.get(f"/api/v1/runs/{silent_pipeline}/metrics/").json()["human_ceiling"]
    table = _section(bob_browser.get(f"/projects/{project.slug}/").content.decode(), "runs-table", "</table>")

    row = table[table.index(f'href="/runs/{silent_pipeline}/"') :]
    row = row[: row.index("</tr>")]
    for annotator in _entry(ceiling)["annotators"]:
        assert f"{annotator['name']}</a> {_figure(annotator)}" in row
        assert _verdict(annotator) in row
    strict = bob_browser.get(f"/projects/{project.slug}/?metric=micro.nervaluate.strict.f1").content.decode()
    strict_row = strict[strict.index(f'href="/runs/{silent_pipeline}/"') :]
    strict_entry = _entry(ceiling, "micro.nervaluate.strict.f1")
    assert _figure(strict_entry["annotators"][0]) in strict_row[: strict_row.index("</tr>")]


def test_the_compare_page_shows_both_runs_ceilings_and_gold_statuses(
    silent_pipeline, bob_browser, bob_client
):
    human = ExperimentRun.objects.get(source=RunSource.HUMAN, name="carol")
    query = f"a={human.pk}&b={silent_pipeline}&resamples=100"
    body = bob_client.get(f"/api/v1/runs/compare/?{query}").json()

    page = bob_browser.get(f"/compare/?{query}").content.decode()

    section = _section(page, "compare-ceiling")
    assert section.count('data-testid="human-ceiling-table"') == 2
    for side in ("a", "b"):
        for entry in body["human_ceiling"][side]["metrics"]:
            assert _figure(entry["model"]) in section
        assert f'data-testid="gold-status">{body["gold_status"][side]["text"]}</span>' in page
    assert "<strong>below bob</strong>" in section
