"""Documents: members with a working role list them (filters, keyset pages); charlie gets 404."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotations.models import Document, GoldKind, GoldVersion, GoldVersionDocument, Membership
from annotations.roles import Role
from tests.conftest import token_client

DOCUMENTS = "/api/v1/projects/letters/documents/"


def add_documents(project, count: int, *, prefix: str = "letter") -> list[Document]:
    return Document.objects.bulk_create(
        [
            Document(
                project=project,
                external_id=f"{prefix}-{index}",
                name=f"Brief {index}",
                text=f"Text {index}",
                content_hash=Document.hash_text(f"Text {index}"),
            )
            for index in range(count)
        ]
    )


def test_alice_and_bob_list_documents_without_text_and_charlie_gets_404(
    project, alice_client, bob_client, charlie_client
):
    add_documents(project, 2)

    for client in (alice_client, bob_client):
        response = client.get(DOCUMENTS)
        assert response.status_code == 200
        assert [d["external_id"] for d in response.data["results"]] == ["letter-0", "letter-1"]
        assert "text" not in response.data["results"][0]
    assert charlie_client.get(DOCUMENTS).status_code == 404


def test_texts_come_when_asked_for(project, bob_client):
    add_documents(project, 1)

    response = bob_client.get(DOCUMENTS, {"include_text": "1"})

    assert response.data["results"][0]["text"] == "Text 0"


def test_documents_filter_by_external_id_and_name(project, bob_client):
    add_documents(project, 12)

    by_id = bob_client.get(DOCUMENTS, {"external_id": "letter-11"}).data["results"]
    by_name = bob_client.get(DOCUMENTS, {"name": "brief 1"}).data["results"]

    assert [d["external_id"] for d in by_id] == ["letter-11"]
    assert [d["external_id"] for d in by_name] == ["letter-1", "letter-10", "letter-11"]


def test_documents_filter_by_being_in_the_current_gold(project, alice, bob_client):
    first, second, third = add_documents(project, 3)
    old = GoldVersion.objects.create(project=project, kind=GoldKind.SPANS, number=1, content_hash="a")
    GoldVersionDocument.objects.create(gold_version=old, document=third, content_hash="x")
    current = GoldVersion.objects.create(project=project, kind=GoldKind.SPANS, number=2, content_hash="b")
    GoldVersionDocument.objects.create(gold_version=current, document=first, content_hash="x")

    with_gold = bob_client.get(DOCUMENTS, {"has_gold": "true"}).data["results"]
    without = bob_client.get(DOCUMENTS, {"has_gold": "false"}).data["results"]

    assert [d["external_id"] for d in with_gold] == ["letter-0"]
    assert [d["external_id"] for d in without] == ["letter-1", "letter-2"]


def test_pages_follow_the_cursor(project, bob_client):
    add_documents(project, 5)

    first = bob_client.get(DOCUMENTS, {"page_size": 2}).data
    second = bob_client.get(first["next"]).data

    assert [d["external_id"] for d in first["results"]] == ["letter-0", "letter-1"]
    assert [d["external_id"] for d in second["results"]] == ["letter-2", "letter-3"]


def test_an_auditor_does_not_read_documents(project):
    erin = get_user_model().objects.create_user("erin")
    Membership.objects.create(project=project, user=erin, role=Role.AUDITOR)

    assert token_client(erin).get(DOCUMENTS).status_code == 403


def test_documents_of_other_projects_are_not_listed(project, alice, bob_client):
    from annotations.services import project_create

    other = project_create(user=alice, name="Other", slug="other")
    add_documents(other, 2, prefix="other")

    assert bob_client.get(DOCUMENTS).data["results"] == []


@pytest.mark.parametrize("documents", [3, 30])
def test_listing_documents_costs_the_same_queries_for_3_or_30(
    project, bob_client, django_assert_max_num_queries, documents
):
    add_documents(project, documents)

    # Token lookup, its last-used stamp, the caller's membership, current gold versions (2), one page.
    with django_assert_max_num_queries(6):
        response = bob_client.get(DOCUMENTS, {"has_gold": "false", "include_text": "1"})

    assert len(response.data["results"]) == documents


@pytest.fixture
def split_letters(project, alice):
    """alice's project under dev_val_test: ten letters, four drawn for development."""
    from annotations.models import EvaluationStrategy, ProjectPhase
    from experiments.splits import split_assign_development

    project.strategy = EvaluationStrategy.DEV_VAL_TEST
    project.phase = ProjectPhase.DEVELOPMENT
    project.save()
    add_documents(project, 10)
    return split_assign_development(project=project, actor=alice, n=4, seed=3)


def test_stage_filters_the_documents_by_split(split_letters, bob_client):
    response = bob_client.get(DOCUMENTS, {"stage": "development"})

    assert response.status_code == 200
    assert sorted(d["external_id"] for d in response.data["results"]) == sorted(
        d.external_id for d in split_letters
    )
    assert bob_client.get(DOCUMENTS, {"stage": "validation"}).data["results"] == []


def test_the_test_documents_are_refused_before_acceptance_and_the_attempt_is_logged(
    split_letters, bob, bob_client
):
    from experiments.models import SplitEvent

    response = bob_client.get(DOCUMENTS, {"stage": "test"})

    assert response.status_code == 403
    assert SplitEvent.objects.filter(action="access_refused", actor=bob).exists()


def test_an_unknown_stage_lists_the_valid_ones(split_letters, bob_client):
    response = bob_client.get(DOCUMENTS, {"stage": "testing"})

    assert response.status_code == 400
    assert response.json()["stage"] == [
        '"testing" is not a valid choice; expected one of: development, validation, test.'
    ]


def test_a_project_without_splits_has_no_stage_to_filter_by(project, bob_client):
    add_documents(project, 1)

    response = bob_client.get(DOCUMENTS, {"stage": "development"})

    assert response.status_code == 400
    assert "stage" in response.json()


def test_an_unknown_query_parameter_is_a_400_not_every_document(project, bob_client):
    add_documents(project, 2)

    response = bob_client.get(DOCUMENTS, {"stge": "test"})

    assert response.status_code == 400
    assert "stge" in response.json()
