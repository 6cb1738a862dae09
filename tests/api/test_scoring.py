"""POST /api/v1/runs/{id}/finalize/ and /rescore/: a scoring job, its progress, and its one result."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from annotations.models import Job
from metrics.models import ComparisonRow, MetricValue, Scoring
from tests.api.runs_support import (
    EXTRACTION,
    create_run,
    finalize,
    load_extraction_gold,
    posted_extraction_run,
    prompts_as_run_prompts,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def posted_run(project, alice_client) -> dict:
    return posted_extraction_run(project, alice_client, config={"edit_distance_match_threshold": 0.75})


def test_finalize_answers_202_with_a_scoring_job_and_the_run_gets_scored(
    posted_run, alice_client, bob_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        body = finalize(alice_client, posted_run["id"])

    assert body["job"]["kind"] == "scoring"
    job = Job.objects.get(pk=body["job"]["id"])
    assert job.state == "succeeded"
    assert job.progress_done == job.progress_total == 4
    assert job.result["scoring"] == 1
    run = bob_client.get(f"/api/v1/runs/{posted_run['id']}/").json()
    assert run["status"] == "scored"
    assert run["gold_version"] == 1
    assert run["progress"] == {"job": job.pk, "state": "succeeded", "done": 4, "total": 4, "errors": []}
    assert run["totals"]["cost_usd"] == pytest.approx(0.0021 + 0.0016 + 0.0009, abs=1e-3)
    assert run["totals"]["input_tokens"] > 0
    assert run["finalized_at"] is not None


def test_a_scoring_stores_metric_values_and_one_row_per_document_and_attribute(
    posted_run, alice_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, posted_run["id"])

    scoring = Scoring.objects.get(run_id=posted_run["id"])
    # 3 gold documents with gold (1004 has none: unscored) x 4 prompted attributes (105 has no prompt).
    assert ComparisonRow.objects.filter(scoring=scoring).count() == 12
    row = ComparisonRow.objects.get(
        scoring=scoring, document__external_id="1001", attribute__attribute_id="102"
    )
    assert len(row.columns) == 20
    assert row.match_status == "near_match"
    accuracy = MetricValue.objects.get(scoring=scoring, scope="attribute", scope_key="103", name="accuracy")
    assert (accuracy.value, accuracy.n) == (0.5, 2)
    given = MetricValue.objects.get(
        scoring=scoring, scope="attribute", scope_key="101", name="accuracy_given_prediction"
    )
    assert given.n == 2


def test_finalize_twice_is_a_conflict(posted_run, alice_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, posted_run["id"])

    response = alice_client.post(f"/api/v1/runs/{posted_run['id']}/finalize/")

    assert response.status_code == 409
    assert response.json()["code"] == "scoring_not_allowed"


def test_an_open_run_cannot_be_rescored(posted_run, alice_client):
    response = alice_client.post(f"/api/v1/runs/{posted_run['id']}/rescore/")

    assert response.status_code == 409
    assert "finalize it first" in response.json()["detail"]


def test_finalize_of_a_run_without_predictions_is_a_conflict_unless_asked_for(
    project, alice_client, django_capture_on_commit_callbacks
):
    load_extraction_gold(project)
    run = create_run(alice_client, prompts=prompts_as_run_prompts())

    refused = alice_client.post(f"/api/v1/runs/{run['id']}/finalize/")
    with django_capture_on_commit_callbacks(execute=True):
        allowed = alice_client.post(
            f"/api/v1/runs/{run['id']}/finalize/", {"allow_empty": True}, format="json"
        )

    assert refused.status_code == 409
    assert refused.json()["code"] == "no_predictions"
    assert allowed.status_code == 202
    assert alice_client.get(f"/api/v1/runs/{run['id']}/").json()["status"] == "scored"


def test_finalize_without_gold_is_a_conflict_naming_the_reason(project, alice_client):
    run = create_run(alice_client, kind="spans")

    response = alice_client.post(f"/api/v1/runs/{run['id']}/finalize/")

    assert response.status_code == 409
    assert response.json()["code"] == "no_gold"


def test_rescore_after_a_gold_change_makes_a_new_scoring_and_the_old_one_stays_readable(
    project, posted_run, alice_client, bob_client, tmp_path, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, posted_run["id"])
    corrected = tmp_path / "gold.jsonl"
    corrected.write_text(
        (EXTRACTION / "gold.jsonl").read_text().replace('"output_data": "80"', '"output_data": "85"')
    )
    load_extraction_gold(project, gold=corrected)

    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(f"/api/v1/runs/{posted_run['id']}/rescore/")

    assert response.status_code == 202
    run = bob_client.get(f"/api/v1/runs/{posted_run['id']}/").json()
    assert run["gold_version"] == 2
    latest = bob_client.get(f"/api/v1/runs/{posted_run['id']}/metrics/")
    first = bob_client.get(f"/api/v1/runs/{posted_run['id']}/metrics/?scoring=1")
    assert (latest["X-Scoring"], first["X-Scoring"]) == ("2", "1")
    participants = {
        name: next(a for a in r.json()["attributes"] if a["attribute_id"] == "103")["metrics"]["accuracy"]
        for name, r in (("latest", latest), ("first", first))
    }
    assert participants == {"latest": 1.0, "first": 0.5}
    scorings = bob_client.get(f"/api/v1/runs/{posted_run['id']}/scorings/").json()["scorings"]
    assert [(s["number"], s["gold_version"]) for s in scorings] == [(2, 2), (1, 1)]


def test_a_scoring_still_hidden_while_its_rows_are_written_is_neither_listed_nor_served(
    posted_run, alice_client, bob_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, posted_run["id"])
    first = Scoring.objects.get(run_id=posted_run["id"])
    rescoring = Job.objects.create(kind="scoring", project=first.run.project, state="running")
    # What a fanned-out rescore holds while its chunks write their rows (metrics.services.chunked_scoring).
    Scoring.objects.create(
        run_id=posted_run["id"], number=2, gold_version=first.gold_version, job=rescoring, is_complete=False
    )

    scorings = bob_client.get(f"/api/v1/runs/{posted_run['id']}/scorings/").json()["scorings"]
    latest = bob_client.get(f"/api/v1/runs/{posted_run['id']}/metrics/")
    hidden = bob_client.get(f"/api/v1/runs/{posted_run['id']}/metrics/?scoring=2")

    assert [scoring["number"] for scoring in scorings] == [1]
    assert latest["X-Scoring"] == "1"
    assert hidden.status_code == 404


def test_a_rescore_with_new_settings_uses_them(
    project, posted_run, alice_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, posted_run["id"])
    project.settings = {**project.settings, "number_format": "de"}
    project.save()

    with django_capture_on_commit_callbacks(execute=True):
        alice_client.post(f"/api/v1/runs/{posted_run['id']}/rescore/")

    assert Scoring.objects.get(run_id=posted_run["id"], number=2).settings["number_format"] == "de"


def test_a_scoring_job_run_again_after_it_finished_writes_nothing_more(
    posted_run, alice_client, django_capture_on_commit_callbacks
):
    from metrics.services.chunked_scoring import scoring_run

    with django_capture_on_commit_callbacks(execute=True):
        body = finalize(alice_client, posted_run["id"])

    assert scoring_run(job_id=body["job"]["id"]) == "succeeded"
    assert Scoring.objects.filter(run_id=posted_run["id"]).count() == 1
    assert ComparisonRow.objects.filter(run_id=posted_run["id"]).count() == 12


def test_a_redelivered_task_leaves_a_running_job_to_its_worker(
    posted_run, alice_client, django_capture_on_commit_callbacks
):
    """What a redelivered task finds while the first delivery runs: the job `running`, not its own."""
    from metrics.services.chunked_scoring import scoring_run

    with django_capture_on_commit_callbacks(execute=False):
        body = finalize(alice_client, posted_run["id"])
    Job.objects.filter(pk=body["job"]["id"]).update(state="running", attempts=1, claim_token="first")

    assert scoring_run(job_id=body["job"]["id"]) == "running"
    assert not Scoring.objects.filter(run_id=posted_run["id"]).exists()


def test_a_stale_running_job_is_queued_again_by_the_dispatcher_and_finishes_once(
    posted_run, alice_client, django_capture_on_commit_callbacks
):
    """What the dispatcher finds after a worker died: the job `running`, its heartbeat old."""
    from annotations.services.jobs import jobs_dispatch

    with django_capture_on_commit_callbacks(execute=False):
        body = finalize(alice_client, posted_run["id"])
    silent_since = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    Job.objects.filter(pk=body["job"]["id"]).update(
        state="running", attempts=1, claim_token="dead", heartbeat_at=silent_since, progress_total=4
    )

    report = jobs_dispatch(now=timezone.now() + timedelta(seconds=settings.JOB_DISPATCH_SECONDS + 1))

    assert (report.requeued, report.sent) == (1, 1)
    job = Job.objects.get(pk=body["job"]["id"])
    assert (job.state, job.attempts) == ("succeeded", 2)
    assert Scoring.objects.filter(run_id=posted_run["id"]).count() == 1


def test_a_failed_scoring_fails_the_run_with_the_reason_and_it_can_be_rescored(
    project, posted_run, alice_client, bob_client, django_capture_on_commit_callbacks
):
    from experiments.models import ExperimentRun

    ExperimentRun.objects.filter(pk=posted_run["id"]).update(
        config={"custom_evaluation_metrics": ["no_such_metric"]}
    )
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, posted_run["id"])

    run = bob_client.get(f"/api/v1/runs/{posted_run['id']}/").json()
    assert run["status"] == "failed"
    assert run["progress"]["state"] == "failed"
    assert "no_such_metric" in run["progress"]["errors"][0]["message"]

    ExperimentRun.objects.filter(pk=posted_run["id"]).update(config={})
    with django_capture_on_commit_callbacks(execute=True):
        assert alice_client.post(f"/api/v1/runs/{posted_run['id']}/rescore/").status_code == 202
    assert bob_client.get(f"/api/v1/runs/{posted_run['id']}/").json()["status"] == "scored"


def test_a_viewer_may_not_finalize_and_an_outsider_gets_404(posted_run, bob_client, charlie_client):
    assert bob_client.post(f"/api/v1/runs/{posted_run['id']}/finalize/").status_code == 403
    assert charlie_client.post(f"/api/v1/runs/{posted_run['id']}/finalize/").status_code == 404
    assert charlie_client.post(f"/api/v1/runs/{posted_run['id']}/rescore/").status_code == 404
