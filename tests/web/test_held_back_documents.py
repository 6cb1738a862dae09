"""Before acceptance, the documents held back for the test appear on no page, as in the API."""

from __future__ import annotations

import pytest

from annotations.importers.errors import ImportProblem
from annotations.models import Job, JobKind, JobState
from annotations.services.job_problems import problem_dict
from experiments.models import ExperimentRun, RunStatus
from tests.web.support import HELD_BACK

pytestmark = pytest.mark.django_db


def _pages(story) -> list[str]:
    return [
        "/",
        "/projects/split/",
        f"/runs/{story.worse}/",
        f"/runs/{story.worse}/?page_size=1000",
        f"/runs/{story.better}/?match_status=missed",
        f"/runs/{story.worse}/documents/letter-1/",
        f"/compare/?a={story.worse}&b={story.better}",
    ]


def test_no_page_names_a_held_back_document(alice_browser, held_back):
    for url in _pages(held_back):
        response = alice_browser.get(url)
        assert response.status_code == 200, url
        for external_id in HELD_BACK:
            assert external_id.encode() not in response.content, (url, external_id)


@pytest.mark.parametrize("external_id", HELD_BACK)
def test_a_held_back_documents_page_is_a_404(alice_browser, held_back, external_id):
    assert alice_browser.get(f"/runs/{held_back.worse}/documents/{external_id}/").status_code == 404


def test_filtering_the_rows_by_a_held_back_document_shows_none(alice_browser, held_back):
    page = alice_browser.get(f"/runs/{held_back.worse}/?document=letter-4").content.decode()

    table = page[page.index('data-testid="comparison-table"') :]
    assert "No rows match." in table[: table.index("</table>")]


def test_a_running_scorings_problems_about_held_back_documents_are_redacted_as_the_job_api_serves_them(
    alice_browser, alice_client, held_back
):
    run = ExperimentRun.objects.get(pk=held_back.better)
    job = Job.objects.create(
        kind=JobKind.SCORING,
        project=run.project,
        state=JobState.RUNNING,
        warnings=[
            problem_dict(ImportProblem("unknown label 'Xyz' in 'letter-4'", document_id="letter-4")),
            problem_dict(ImportProblem("no prediction", document_id="letter-1")),
        ],
    )
    ExperimentRun.objects.filter(pk=run.pk).update(status=RunStatus.SCORING, scoring_job=job)

    page = alice_browser.get(f"/runs/{run.pk}/").content.decode()
    api = alice_client.get(f"/api/v1/jobs/{job.pk}/").json()

    progress = page[page.index('data-testid="progress"') :]
    progress = progress[: progress.index("</section>")]
    assert "letter-4" not in page and "Xyz" not in page
    assert "document letter-1" in progress
    assert [warning["message"] for warning in api["warnings"]] == [
        "no prediction",
        "1 more problem(s) concern only documents held back for the test; they are shown once the "
        "project's configuration is accepted",
    ]
    for warning in api["warnings"]:
        assert warning["message"] in progress.replace("&#x27;", "'")
