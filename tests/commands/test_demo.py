"""`manage.py demo`: the main job end to end on the bundled, invented data, safe to run twice; the demo
admin's password and token are generated once, kept (mode 0600) and printed on every run."""

from __future__ import annotations

import io
import re
import stat

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from annotations.models import GoldVersion, Project
from experiments.models import ExperimentRun
from metrics.management.commands.demo import DEMO_ADMIN, demo_admin, demo_admin_token, demo_credentials_path
from metrics.models import ComparisonRow, Scoring
from metrics.selectors import scoring_get
from metrics.services.agreement import agreement_latest
from metrics.services.human_ceiling import human_ceiling

pytestmark = pytest.mark.django_db


def _credentials(output: str) -> tuple[str, str]:
    password = re.search(r"password: (\S+)", output).group(1)
    token = re.search(r"API token:\s+(\S+)", output).group(1)
    return password, token


def test_a_second_run_keeps_and_prints_the_same_password_and_token():
    user, password = demo_admin()
    token = demo_admin_token(user)

    user_again, password_again = demo_admin()

    assert (user_again.pk, password_again, demo_admin_token(user_again)) == (user.pk, password, token)
    assert authenticate(username=DEMO_ADMIN, password=password) == user
    response = APIClient(HTTP_AUTHORIZATION=f"Token {token}").get("/api/v1/projects/")
    assert response.status_code == 200


def test_the_credentials_file_is_readable_by_its_owner_only():
    demo_admin_token(demo_admin()[0])
    assert stat.S_IMODE(demo_credentials_path().stat().st_mode) == 0o600


def test_a_fresh_database_gets_the_kept_password_again():
    _, password = demo_admin()
    get_user_model().objects.filter(username=DEMO_ADMIN).delete()
    assert demo_admin()[1] == password
    assert authenticate(username=DEMO_ADMIN, password=password) is not None


def test_a_password_changed_since_is_left_alone_and_not_shown():
    user, _ = demo_admin()
    user.set_password("chosen-by-the-admin")
    user.save()
    assert demo_admin()[1] is None
    assert authenticate(username=DEMO_ADMIN, password="chosen-by-the-admin") is not None


def test_a_token_revoked_since_is_replaced():
    user, _ = demo_admin()
    token = demo_admin_token(user)
    user.api_tokens.all().delete()
    replacement = demo_admin_token(user)
    assert replacement != token
    assert APIClient(HTTP_AUTHORIZATION=f"Token {replacement}").get("/api/v1/projects/").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_the_demo_command_prints_the_same_working_credentials_on_every_run():
    first = io.StringIO()
    call_command("demo", port=8123, stdout=first, stderr=io.StringIO())
    second = io.StringIO()
    call_command("demo", port=8123, stdout=second, stderr=io.StringIO())
    assert _credentials(first.getvalue()) == _credentials(second.getvalue())


def _demo() -> str:
    out = io.StringIO()
    call_command("demo", port=8123, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_demo_scores_both_projects_and_prints_headlines_and_urls():
    output = _demo()

    assert set(Project.objects.values_list("slug", flat=True)) == {"demo-deid", "demo-trials"}
    runs = ExperimentRun.objects.order_by("id")
    assert [(run.kind, run.source, run.status) for run in runs] == [
        ("spans", "llm", "scored"),
        ("spans", "llm", "scored"),
        ("attributes", "llm", "scored"),
        ("attributes", "llm", "scored"),
        ("spans", "human", "scored"),
    ]
    assert (
        ComparisonRow.objects.filter(run=runs[2]).count() == 19 * 6
    )  # 19 coded abstracts x 6 prompted attributes
    assert "leakage" in output and "Randomised" in output
    assert f"http://127.0.0.1:8123/api/v1/runs/{runs[0].pk}/metrics/" in output
    assert "API token:" in output and "password:" in output


@pytest.mark.django_db(transaction=True)
def test_running_the_demo_twice_changes_nothing():
    _demo()
    before = (ExperimentRun.objects.count(), GoldVersion.objects.count(), Scoring.objects.count())

    second = _demo()

    assert (ExperimentRun.objects.count(), GoldVersion.objects.count(), Scoring.objects.count()) == before
    assert "Randomised" in second


@pytest.mark.django_db(transaction=True)
def test_the_demo_prints_the_dashboard_and_the_credentials_first():
    first_lines = _demo().splitlines()[:2]

    assert first_lines[0] == "Dashboard:  http://127.0.0.1:8123/"
    assert first_lines[1].startswith("Demo admin: demo-admin  password: ")


@pytest.mark.django_db(transaction=True)
def test_each_demo_project_has_a_better_and_a_worse_scored_run():
    _demo()

    for slug, metric in (("demo-deid", "micro.chars.all.f1"), ("demo-trials", "accuracy_given_prediction")):
        scores = sorted(
            Scoring.objects.get(run=run)
            .metric_values.filter(name=metric)
            .order_by("scope_key")
            .values_list("value", flat=True)[0]
            for run in ExperimentRun.objects.filter(project__slug=slug, status="scored", source="llm")
        )
        assert len(scores) == 2 and scores[0] < scores[1], (slug, scores)


@pytest.mark.django_db(transaction=True)
def test_the_deid_demo_has_a_second_annotator_an_agreement_and_a_human_ceiling():
    _demo()

    deid = Project.objects.get(slug="demo-deid")
    spans = agreement_latest(project=deid).result["spans"]
    assert sorted(spans["overall"]["annotators"]) == ["demo: second annotator", "gold"]
    assert spans["overall"]["documents"] == 30 and spans["pairs"][0]["f1_exact"] > 0.8
    for run in ExperimentRun.objects.filter(project=deid, source="llm"):
        ceiling = human_ceiling(run, scoring_get(run=run))
        assert [human["name"] for human in ceiling["human_runs"]] == ["demo: second annotator"]
