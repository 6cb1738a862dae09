"""The split audit in the admin: dave the auditor reads timelines and histories; no one edits a split by hand;
alice's transitions go through actions that call the services and leave events."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotations.models import Document, GoldKind, GoldSpan, GoldVersion, Membership, Project, ProjectPhase
from annotations.roles import Role
from experiments.models import RunStage, SplitAssignment, SplitEvent
from experiments.splits import split_assign_development, split_move_to_validation
from tests.splits.conftest import letters, make_run  # noqa: F401  (the letters fixture)

ADMIN = "/admin/experiments"


def _staff(username: str, project, role: str):
    user = get_user_model().objects.create_user(username=username, password="pw", is_staff=True)
    Membership.objects.create(project=project, user=user, role=role)
    return user


def _logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def erin(letters):  # noqa: F811
    """A staff auditor of the letters project: reads the audit, never gold."""
    return _staff("erin", letters, Role.AUDITOR)


@pytest.fixture
def frank(letters):  # noqa: F811
    """A staff manager of the letters project."""
    return _staff("frank", letters, Role.MANAGER)


@pytest.fixture
def drawn(letters, alice):  # noqa: F811
    split_assign_development(
        project=letters, actor=alice, n=20, seed=42, reason="first draw", request_id="req-1"
    )
    return letters


def test_erin_sees_a_documents_event_timeline_on_its_assignment(drawn, alice, erin):
    run = make_run(drawn, stage=RunStage.DEVELOPMENT)
    moved = split_move_to_validation(project=drawn, actor=alice, run=run, n=8, seed=7, request_id="req-2")
    assignment = SplitAssignment.objects.get(document=moved[0])

    page = _logged_in(erin).get(f"{ADMIN}/splitassignment/{assignment.pk}/change/")

    assert page.status_code == 200
    html = page.content.decode()
    assert "split-timeline" in html
    assert "move_to_validation" in html and "req-2" in html and "unassigned → validation" in html


def test_a_document_shows_its_timeline_inline(drawn, alice):
    superuser = get_user_model().objects.create_superuser(username="root", password="pw")
    document = SplitAssignment.objects.filter(project=drawn).first().document

    page = _logged_in(superuser).get(f"/admin/annotations/document/{document.pk}/change/")

    assert page.status_code == 200
    assert "split timeline" in page.content.decode().lower()
    assert "req-1" in page.content.decode()


def test_erin_lists_assignments_filtered_by_split_and_searched_by_document(drawn, erin):
    client = _logged_in(erin)

    by_split = client.get(
        f"{ADMIN}/splitassignment/", {"split": "development", "project__phase": "development"}
    )
    searched = client.get(f"{ADMIN}/splitassignment/", {"q": "letter-0"})

    assert by_split.status_code == 200
    assert by_split.context["cl"].result_count == 20
    assert (
        searched.context["cl"].result_count
        == SplitAssignment.objects.filter(document__external_id__contains="letter-0").count()
    )


def test_no_split_field_can_be_edited_by_hand(drawn, frank):
    assignment = SplitAssignment.objects.filter(project=drawn).first()
    client = _logged_in(frank)

    page = client.get(f"{ADMIN}/splitassignment/{assignment.pk}/change/")
    posted = client.post(
        f"{ADMIN}/splitassignment/{assignment.pk}/change/", {"split": "test", "sealed": "on"}
    )

    assert page.status_code == 200
    assert not page.context["adminform"].form.fields  # every field is read-only
    assert '<select name="split"' not in page.content.decode()
    assert posted.status_code == 403
    assignment.refresh_from_db()
    assert assignment.split == "development"
    assert client.get(f"{ADMIN}/splitassignment/add/").status_code == 403
    assert client.post(f"{ADMIN}/splitassignment/{assignment.pk}/delete/", {"post": "yes"}).status_code == 403
    event = SplitEvent.objects.filter(project=drawn).first()
    assert client.post(f"{ADMIN}/splitevent/{event.pk}/change/", {"reason": "edited"}).status_code == 403


def test_erin_sees_the_projects_split_history(drawn, alice, erin):
    run = make_run(drawn, stage=RunStage.DEVELOPMENT)
    split_move_to_validation(project=drawn, actor=alice, run=run, n=8, seed=7)

    html = _logged_in(erin).get(f"{ADMIN}/splithistory/{drawn.pk}/change/").content.decode()

    assert "split-history" in html
    assert "assign_development" in html and "move_to_validation" in html
    assert "<td>20</td><td>8</td><td>0</td><td>22</td>" in html


def test_an_action_calls_the_service_and_leaves_events(drawn, frank):
    run = make_run(drawn, stage=RunStage.DEVELOPMENT, config_hash="prompt-v3")

    response = _logged_in(frank).post(
        f"{ADMIN}/splithistory/",
        {
            "action": "move_to_validation",
            "_selected_action": [drawn.pk],
            "n": 8,
            "seed": 7,
            "run": run.pk,
            "reason": "ok",
        },
        follow=True,
    )

    assert response.status_code == 200
    drawn.refresh_from_db()
    assert drawn.phase == ProjectPhase.VALIDATION
    assert drawn.chosen_config_hash == "prompt-v3"
    events = SplitEvent.objects.filter(project=drawn, action="move_to_validation")
    assert events.count() == 9
    assert {(event.actor, event.reason, event.seed) for event in events} == {(frank, "ok", 7)}
    assert all(event.request_id for event in events)


def test_a_refused_action_says_why_and_changes_nothing(drawn, frank):
    response = _logged_in(frank).post(
        f"{ADMIN}/splithistory/", {"action": "accept", "_selected_action": [drawn.pk]}, follow=True
    )

    assert "development phase" in response.content.decode()
    drawn.refresh_from_db()
    assert drawn.phase == ProjectPhase.DEVELOPMENT


def test_erin_the_auditor_has_no_action_and_cannot_read_gold(drawn, erin):
    client = _logged_in(erin)

    response = client.post(
        f"{ADMIN}/splithistory/", {"action": "reject", "_selected_action": [drawn.pk]}, follow=True
    )

    assert "reject" not in dict(response.context["cl"].model_admin.get_actions(response.wsgi_request))
    assert SplitEvent.objects.filter(action="reject").count() == 0
    assert client.get("/admin/annotations/goldspan/").status_code == 403


def test_erin_sees_only_the_projects_she_audits(drawn, erin):
    other = Project.objects.create(name="Other", slug="other")
    other_document = Document.objects.create(project=other, external_id="x", text="x")
    SplitEvent.objects.create(
        project=other, document=other_document, action="assign_development", phase="development"
    )

    listed = _logged_in(erin).get(f"{ADMIN}/splitevent/").context["cl"].result_count

    assert listed == SplitEvent.objects.filter(project=drawn).count()


def test_held_back_gold_is_not_in_the_admin_and_opening_it_is_logged(drawn):
    superuser = get_user_model().objects.create_superuser(username="root", password="pw")
    version = GoldVersion.objects.create(project=drawn, kind=GoldKind.SPANS, number=1, content_hash="h")
    assigned = SplitAssignment.objects.filter(project=drawn).first().document
    held_back = Document.objects.filter(project=drawn, split_assignment__isnull=True).first()
    visible = GoldSpan.objects.create(
        gold_version=version, document=assigned, start=0, end=4, entity_type="AGE"
    )
    hidden = GoldSpan.objects.create(
        gold_version=version, document=held_back, start=0, end=4, entity_type="AGE"
    )
    client = _logged_in(superuser)

    listed = client.get("/admin/annotations/goldspan/").context["cl"].result_list
    opened = client.get(f"/admin/annotations/goldspan/{hidden.pk}/change/")

    assert list(listed) == [visible]
    assert opened.status_code == 302  # "does not exist", back to the list
    refusal = SplitEvent.objects.get(project=drawn, action="access_refused")
    assert (refusal.actor, refusal.document) == (superuser, held_back)
