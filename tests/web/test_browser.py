"""The pages in a real browser (Debian's chromium through pytest-playwright) against live_server.

Each visit records every request the page makes and every console message: nothing may go to another
host, and no page may log a JavaScript error.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import Page, expect

from annotations.importers.errors import ImportProblem
from annotations.models import Job, JobKind, JobState
from annotations.services.job_problems import problem_dict
from experiments.models import ExperimentRun
from tests.api.runs_support import SPANS, load_span_gold
from tests.web.support import HELD_BACK, attribute_story, held_back_story, span_story

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


class Visits:
    """A page whose requests and console errors are recorded from the first visit on."""

    def __init__(self, page: Page, base: str):
        self.page, self.base = page, base
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def open(self, path: str, status: int = 200):
        response = self.page.goto(self.base + path)
        assert response is not None and response.status == status, (path, response and response.status)
        return response

    def foreign_requests(self) -> list[str]:
        own = urlparse(self.base).netloc
        return [
            url for url in self.requests if urlparse(url).scheme != "data" and urlparse(url).netloc != own
        ]


def _log_in(page: Page, base: str, user) -> None:
    """Reuse a server-side session: the login form itself is exercised in test_login_and_logout."""
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": base}])


def _stories_commit():
    return contextlib.nullcontext()


@pytest.fixture
def visits(page: Page, live_server) -> Visits:
    return Visits(page, live_server.url)


def _expect_chart(page: Page, testid: str) -> None:
    chart = page.get_by_test_id(testid)
    expect(chart).to_be_visible()
    expect(chart.locator("svg").first).to_be_visible()


def test_login_and_logout(visits, project, bob):
    visits.open("/projects/letters/")
    expect(visits.page).to_have_url(f"{visits.base}/accounts/login/?next=/projects/letters/")

    visits.page.fill("input[name=username]", "bob")
    visits.page.fill("input[name=password]", "bob-password")
    visits.page.click("button[type=submit]")
    expect(visits.page).to_have_url(f"{visits.base}/projects/letters/")
    expect(visits.page.get_by_test_id("runs-table")).to_be_visible()

    visits.page.get_by_test_id("logout").click()
    expect(visits.page).to_have_url(f"{visits.base}/accounts/login/")
    visits.open("/", status=200)
    expect(visits.page).to_have_url(f"{visits.base}/accounts/login/?next=/")
    assert visits.errors == [] and visits.foreign_requests() == []


def test_every_page_of_a_span_project(visits, project, alice, bob, alice_client, tmp_path):
    story = span_story(project, alice_client, _stories_commit)
    _log_in(visits.page, visits.base, bob)

    visits.open("/")
    expect(visits.page.get_by_role("link", name="Discharge letters")).to_be_visible()
    visits.open("/projects/letters/")
    expect(visits.page.get_by_test_id("runs-table")).to_contain_text("perfect tagger")
    _expect_chart(visits.page, "leaderboard-chart")
    visits.open(f"/runs/{story.worse}/")
    expect(visits.page.get_by_test_id("leakage")).to_be_visible()
    expect(visits.page.get_by_test_id("headline")).to_contain_text("character F1")
    _expect_chart(visits.page, "breakdown-chart")
    expect(visits.page.get_by_test_id("comparison-table")).to_be_visible()
    visits.page.get_by_test_id("leakage").get_by_role("link", name="letter-1").click()
    expect(visits.page).to_have_url(f"{visits.base}/runs/{story.worse}/documents/letter-1/")
    expect(visits.page.locator('[data-testid=document-text] [data-span="missed"]').first).to_be_visible()
    expect(visits.page.locator('[data-testid=document-text] [data-span="predicted"]').first).to_be_visible()
    expect(visits.page.locator('[data-testid=document-text] [data-span="gold"]').first).to_be_visible()
    visits.open(f"/compare/?a={story.worse}&b={story.better}")
    expect(visits.page.get_by_test_id("paired-table")).to_contain_text("Holm p")
    _expect_chart(visits.page, "delta-chart")

    # A second gold version: each run says it was scored on v1, and the diff is one click away.
    load_span_gold(project, gold=_gold_with_letter_1_retyped(tmp_path))
    visits.open("/projects/letters/")
    expect(visits.page.get_by_test_id("runs-table").get_by_test_id("gold-status").first).to_contain_text(
        "scored on gold v1; v2 has as many spans"
    )
    visits.page.get_by_test_id("gold-diff-link").click()
    expect(visits.page).to_have_url(f"{visits.base}/projects/letters/gold/1/diff/2/")
    expect(visits.page.get_by_test_id("gold-diff-documents")).to_contain_text("PERSON_NAME → OTHER_PII")
    expect(visits.page.get_by_test_id("gold-diff-summary")).to_contain_text("OTHER_PII")

    assert visits.foreign_requests() == []
    assert visits.errors == []


def _gold_with_letter_1_retyped(folder: Path) -> Path:
    """The stories' span gold with letter-1's name typed OTHER_PII: one span changed in place."""
    lines = [json.loads(line) for line in (SPANS / "spans_gold.jsonl").read_text().splitlines() if line]
    for entity in lines[0]["entities"]:
        if entity["entity_type"] == "PERSON_NAME":
            entity["entity_type"] = "OTHER_PII"
    path = folder / "spans_gold_v2.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    return path


def test_every_page_of_an_attribute_project(visits, alice, bob, alice_client):
    story = attribute_story(alice, bob, alice_client, _stories_commit)
    _log_in(visits.page, visits.base, bob)

    visits.open("/projects/trials/")
    expect(visits.page.get_by_test_id("runs-table")).to_contain_text("large model")
    _expect_chart(visits.page, "leaderboard-chart")
    visits.open(f"/runs/{story.worse}/")
    expect(visits.page.get_by_test_id("leakage")).to_have_count(0)
    expect(visits.page.get_by_test_id("headline")).to_contain_text("missing prediction")
    _expect_chart(visits.page, "breakdown-chart")
    _expect_chart(visits.page, "match-status-chart")
    visits.open(f"/runs/{story.worse}/documents/1001/")
    expect(visits.page.get_by_test_id("document-rows")).to_contain_text("Kenia")
    expect(visits.page.locator("mark.gold-value").first).to_be_visible()
    visits.open(f"/compare/?a={story.worse}&b={story.better}")
    expect(visits.page.get_by_test_id("paired-table")).to_contain_text("Country: accuracy")
    _expect_chart(visits.page, "delta-chart")

    assert visits.foreign_requests() == []
    assert visits.errors == []


def test_filters_and_pagination(visits, project, alice, bob, alice_client):
    story = span_story(project, alice_client, _stories_commit)
    _log_in(visits.page, visits.base, bob)
    visits.open(f"/runs/{story.worse}/")
    rows = visits.page.get_by_test_id("comparison-table").locator("tbody tr")
    all_rows = rows.count()

    visits.page.select_option("select[name=match_status]", "missed")
    visits.page.get_by_role("button", name="Filter").click()
    expect(visits.page).to_have_url(
        f"{visits.base}/runs/{story.worse}/?match_status=missed&entity_type=&document=#rows"
    )
    expect(rows.first).to_contain_text("missed")
    assert 0 < rows.count() < all_rows
    for index in range(rows.count()):
        expect(rows.nth(index)).to_contain_text("missed")

    visits.open(f"/runs/{story.worse}/?page_size=2")
    first_page = rows.all_inner_texts()
    visits.page.get_by_test_id("next-page").click()
    expect(visits.page.get_by_test_id("previous-page")).to_be_visible()
    assert rows.count() == 2 and rows.all_inner_texts() != first_page
    visits.page.get_by_test_id("previous-page").click()
    assert rows.all_inner_texts() == first_page
    assert visits.errors == [] and visits.foreign_requests() == []


def test_a_non_member_gets_404(visits, project, alice_client, charlie):
    story = span_story(project, alice_client, _stories_commit)
    _log_in(visits.page, visits.base, charlie)

    for path in ("/projects/letters/", f"/runs/{story.worse}/", f"/runs/{story.worse}/documents/letter-1/"):
        visits.open(path, status=404)
    visits.open(f"/compare/?a={story.worse}&b={story.better}", status=404)


def test_no_held_back_document_on_any_page(visits, alice, alice_client):
    story = held_back_story(alice, alice_client, _stories_commit)
    _log_in(visits.page, visits.base, alice)

    for path in (
        "/",
        "/projects/split/",
        f"/runs/{story.worse}/",
        f"/runs/{story.worse}/documents/letter-1/",
        f"/compare/?a={story.worse}&b={story.better}",
    ):
        visits.open(path)
        content = visits.page.content()
        assert not [external_id for external_id in HELD_BACK if external_id in content], path
    for external_id in HELD_BACK:
        visits.open(f"/runs/{story.worse}/documents/{external_id}/", status=404)


def test_the_progress_of_a_scoring_run_updates_live_and_the_results_show_when_it_ends(
    visits, project, bob, alice_client
):
    story = span_story(project, alice_client, _stories_commit)
    run = ExperimentRun.objects.get(pk=story.better)
    finished_job = run.scoring_job
    job = Job.objects.create(
        kind=JobKind.SCORING, project=project, state=JobState.RUNNING, progress_done=1, progress_total=4
    )
    ExperimentRun.objects.filter(pk=run.pk).update(scoring_job=job)
    _log_in(visits.page, visits.base, bob)
    visits.open(f"/runs/{run.pk}/")
    progress = visits.page.get_by_test_id("progress")
    expect(progress).to_contain_text("running: 1 of 4 documents")

    Job.objects.filter(pk=job.pk).update(
        progress_done=3, warnings=[problem_dict(ImportProblem("no prediction", document_id="letter-2"))]
    )
    expect(progress).to_contain_text("running: 3 of 4 documents", timeout=10_000)
    expect(progress.get_by_text("no prediction")).to_contain_text("document letter-2")
    # The job ends: the page reloads and shows the results of the run's scoring.
    ExperimentRun.objects.filter(pk=run.pk).update(scoring_job=finished_job)
    Job.objects.filter(pk=job.pk).update(state=JobState.SUCCEEDED)

    expect(progress).to_have_count(0, timeout=10_000)
    expect(visits.page.get_by_test_id("headline")).to_contain_text("character F1")
    assert visits.errors == [] and visits.foreign_requests() == []
