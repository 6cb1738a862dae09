"""The admin: a superuser's changelists cost the same queries for 3 or 30 rows; gold is view-only."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotations.models import (
    ApiToken,
    Attribute,
    Document,
    GoldAttributeValue,
    GoldKind,
    GoldSpan,
    GoldVersion,
    GoldVersionDocument,
    Job,
    Membership,
    Project,
)
from annotations.roles import Role


@pytest.fixture
def admin_client(client, db):
    get_user_model().objects.create_superuser("root", "root@example.org", "root-password")
    client.login(username="root", password="root-password")
    return client


def populate(rows: int) -> None:
    """`rows` of everything, spread over projects with members, documents, gold and jobs."""
    user_model = get_user_model()
    for index in range(rows):
        user = user_model.objects.create_user(f"user-{index}")
        project = Project.objects.create(name=f"P{index}", slug=f"p-{index}", created_by=user)
        Membership.objects.create(project=project, user=user, role=Role.MANAGER)
        ApiToken.objects.create(user=user, key_hash=f"{index:064d}", prefix=f"k{index}")
        document = Document.objects.create(project=project, external_id=f"d{index}", text="Max")
        attribute = Attribute.objects.create(project=project, attribute_id="a", label="A", type="STRING")
        spans = GoldVersion.objects.create(project=project, kind=GoldKind.SPANS, number=1, content_hash="h")
        values = GoldVersion.objects.create(
            project=project, kind=GoldKind.ATTRIBUTES, number=1, content_hash="h"
        )
        GoldVersionDocument.objects.create(gold_version=spans, document=document, content_hash="h")
        GoldSpan.objects.create(
            gold_version=spans, document=document, start=0, end=3, entity_type="PERSON_NAME"
        )
        GoldAttributeValue.objects.create(
            gold_version=values, document=document, attribute=attribute, output_data="x"
        )
        Job.objects.create(kind="import", project=project, created_by=user)


CHANGELISTS = [
    "project",
    "membership",
    "apitoken",
    "document",
    "attribute",
    "goldversion",
    "goldversiondocument",
    "goldspan",
    "goldattributevalue",
    "job",
]


@pytest.mark.parametrize("rows", [3, 30])
@pytest.mark.parametrize("model", CHANGELISTS)
def test_a_changelist_costs_the_same_queries_for_3_or_30_rows(
    admin_client, django_assert_max_num_queries, model, rows
):
    populate(rows)

    # Session, user, the page's rows with their relations, counts, and the filters' choices.
    with django_assert_max_num_queries(12):
        response = admin_client.get(f"/admin/annotations/{model}/", {"q": ""})

    assert response.status_code == 200


def test_changelists_search(admin_client):
    populate(3)

    response = admin_client.get("/admin/annotations/document/", {"q": "d1"})

    assert response.status_code == 200
    assert "d1" in response.content.decode()


def test_gold_is_view_only(admin_client):
    populate(1)
    span = GoldSpan.objects.get()

    assert admin_client.get(f"/admin/annotations/goldspan/{span.pk}/change/").status_code == 200
    assert (
        admin_client.post(f"/admin/annotations/goldspan/{span.pk}/change/", {"start": 1}).status_code == 403
    )
    assert admin_client.get("/admin/annotations/goldversion/add/").status_code == 403
