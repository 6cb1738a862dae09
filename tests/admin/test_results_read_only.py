"""Results in the admin are view only for everyone, a superuser too; a run's name and description alone
can be edited; staff who are not superusers see only the projects they belong to."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from annotations.models import (
    Attribute,
    Document,
    GoldAttributeValue,
    GoldKind,
    GoldSpan,
    GoldVersion,
    GoldVersionDocument,
    Membership,
    Project,
)
from annotations.roles import Role
from experiments.models import (
    ExperimentRun,
    PredictedSpan,
    PredictedValue,
    RunDocument,
    RunKind,
    RunStage,
    RunStatus,
    Split,
    SplitAssignment,
    SplitEvent,
)
from metrics.models import ComparisonRow, MetricScope, MetricValue, Scoring


def results_of(project: Project, *, tag: str) -> dict[str, object]:
    """One row of every result model in `project`, keyed by its admin URL part."""
    document = Document.objects.create(project=project, external_id=f"{tag}-doc", text="Max Muster")
    attribute = Attribute.objects.create(project=project, attribute_id=f"{tag}-a", label="A", type="STRING")
    spans = GoldVersion.objects.create(project=project, kind=GoldKind.SPANS, number=1, content_hash="h")
    values = GoldVersion.objects.create(project=project, kind=GoldKind.ATTRIBUTES, number=1, content_hash="h")
    run = ExperimentRun.objects.create(
        project=project, name=f"{tag}-run", kind=RunKind.SPANS, config_hash="c", gold_version=spans
    )
    run_document = RunDocument.objects.create(run=run, document=document, content_hash="h")
    scoring = Scoring.objects.create(run=run, number=1, gold_version=spans, is_complete=True)
    return {
        "annotations/goldversion": spans,
        "annotations/goldversiondocument": GoldVersionDocument.objects.create(
            gold_version=spans, document=document, content_hash="h"
        ),
        "annotations/goldspan": GoldSpan.objects.create(
            gold_version=spans, document=document, start=0, end=3, entity_type="PERSON_NAME"
        ),
        "annotations/goldattributevalue": GoldAttributeValue.objects.create(
            gold_version=values, document=document, attribute=attribute, output_data="x"
        ),
        "experiments/rundocument": run_document,
        "experiments/predictedspan": PredictedSpan.objects.create(
            run_document=run_document, start=0, end=3, entity_type="PERSON_NAME"
        ),
        "experiments/predictedvalue": PredictedValue.objects.create(
            run_document=run_document, attribute=attribute, output_data="x"
        ),
        "experiments/splitassignment": SplitAssignment.objects.create(
            project=project, document=document, split=Split.DEVELOPMENT
        ),
        "experiments/splitevent": SplitEvent.objects.create(
            project=project, document=document, action="assign_development", to_split=Split.DEVELOPMENT
        ),
        "metrics/scoring": scoring,
        "metrics/metricvalue": MetricValue.objects.create(
            scoring=scoring, run=run, scope=MetricScope.OVERALL, name="f1", value=0.5
        ),
        "metrics/comparisonrow": ComparisonRow.objects.create(
            scoring=scoring, run=run, document=document, position=0, columns={}
        ),
        "experiments/experimentrun": run,
    }


READ_ONLY = [
    "annotations/goldversion",
    "annotations/goldversiondocument",
    "annotations/goldspan",
    "annotations/goldattributevalue",
    "experiments/rundocument",
    "experiments/predictedspan",
    "experiments/predictedvalue",
    "experiments/splitassignment",
    "experiments/splitevent",
    "metrics/scoring",
    "metrics/metricvalue",
    "metrics/comparisonrow",
]


@pytest.fixture
def root(db) -> Client:
    get_user_model().objects.create_superuser("root", "root@example.org", "root-password")
    client = Client()
    client.login(username="root", password="root-password")
    return client


@pytest.fixture
def rows(project) -> dict[str, object]:
    return results_of(project, tag="letters")


@pytest.mark.parametrize("model", READ_ONLY)
def test_a_superuser_can_view_a_result_but_not_change_add_or_delete_it(root, rows, model):
    row = rows[model]
    change_url = f"/admin/{model}/{row.pk}/change/"

    page = root.get(change_url)
    saved = root.post(change_url, {"value": "0.999", "start": "1", "split": "test"})

    assert page.status_code == 200
    assert 'type="submit"' not in page.content.decode().split('id="content-main"')[1]
    assert saved.status_code == 403
    assert root.get(f"/admin/{model}/add/").status_code == 403
    assert root.post(f"/admin/{model}/{row.pk}/delete/", {"post": "yes"}).status_code == 403
    assert type(row).objects.filter(pk=row.pk).exists()


def test_an_edited_metric_value_is_not_saved(root, rows):
    metric = rows["metrics/metricvalue"]

    root.post(
        f"/admin/metrics/metricvalue/{metric.pk}/change/",
        {
            "scoring": metric.scoring_id,
            "run": metric.run_id,
            "scope": "overall",
            "name": "f1",
            "value": "0.999",
        },
    )

    metric.refresh_from_db()
    assert metric.value == 0.5


def test_a_run_keeps_everything_but_its_name_and_description_as_it_was(root, rows):
    run = rows["experiments/experimentrun"]
    url = f"/admin/experiments/experimentrun/{run.pk}/change/"

    response = root.post(
        url,
        {
            "name": "renamed",
            "description": "the prompt without examples",
            "status": RunStatus.SCORED,
            "stage": RunStage.TEST,
            "is_final": "on",
            "config_hash": "forged",
        },
    )

    assert response.status_code == 302
    run.refresh_from_db()
    assert (run.name, run.description) == ("renamed", "the prompt without examples")
    assert (run.status, run.stage, run.is_final, run.config_hash) == (
        RunStatus.OPEN,
        RunStage.ALL,
        False,
        "c",
    )


def test_no_one_adds_or_deletes_a_run_in_the_admin(root, rows):
    run = rows["experiments/experimentrun"]

    assert root.get("/admin/experiments/experimentrun/add/").status_code == 403
    assert root.post(f"/admin/experiments/experimentrun/{run.pk}/delete/", {"post": "yes"}).status_code == 403
    assert ExperimentRun.objects.filter(pk=run.pk).exists()


@pytest.fixture
def bob_in_the_admin(bob, rows) -> Client:
    """bob, a viewer of the letters project, made staff with the view permission on every model."""
    bob.is_staff = True
    bob.save()
    bob.user_permissions.set(Permission.objects.filter(codename__startswith="view_"))
    client = Client()
    client.force_login(bob)
    return client


@pytest.fixture
def other_rows(charlie) -> dict[str, object]:
    """charlie's project, of which bob is not a member."""
    secret = Project.objects.create(name="Secret trial", slug="secret", created_by=charlie)
    Membership.objects.create(project=secret, user=charlie, role=Role.MANAGER)
    return results_of(secret, tag="secret")


SCOPED = [*READ_ONLY, "experiments/experimentrun"]


@pytest.mark.parametrize("model", SCOPED)
def test_a_staff_viewer_sees_only_the_rows_of_their_projects(bob_in_the_admin, rows, other_rows, model):
    if model.startswith("experiments/split"):
        # The split audit shows its rows to auditors and managers: bob, a viewer, sees none of them.
        Membership.objects.filter(user__username="bob").update(role=Role.AUDITOR)

    listing = bob_in_the_admin.get(f"/admin/{model}/")
    own = bob_in_the_admin.get(f"/admin/{model}/{rows[model].pk}/change/")
    other = bob_in_the_admin.get(f"/admin/{model}/{other_rows[model].pk}/change/")

    assert listing.status_code == 200
    assert "secret" not in listing.content.decode().lower()
    assert own.status_code == 200
    assert other.status_code in (302, 403, 404)
    if other.status_code == 302:
        assert other.url == "/admin/"  # "does not exist": the row is not in bob's queryset


@pytest.mark.parametrize("model", ["project", "document", "membership", "attribute"])
def test_a_staff_viewer_sees_only_their_projects_and_their_documents(bob_in_the_admin, other_rows, model):
    listing = bob_in_the_admin.get(f"/admin/annotations/{model}/")

    assert listing.status_code == 200
    html = listing.content.decode().lower()
    assert "secret" not in html
    assert "letters" in html


def test_a_superuser_sees_every_project(root, rows, other_rows):
    listing = root.get("/admin/annotations/project/")

    assert "secret" in listing.content.decode()
    assert "letters" in listing.content.decode()
