"""Members: alice (manager) adds people and changes roles; bob reads the list; charlie gets 404."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotations.models import Membership
from annotations.roles import Role
from tests.conftest import token_client

MEMBERS = "/api/v1/projects/letters/members/"


def test_alice_and_bob_list_the_members_and_charlie_gets_404(
    project, alice_client, bob_client, charlie_client
):
    expected = [("alice", "manager"), ("bob", "viewer")]

    assert [(m["username"], m["role"]) for m in alice_client.get(MEMBERS).data["results"]] == expected
    assert [(m["username"], m["role"]) for m in bob_client.get(MEMBERS).data["results"]] == expected
    assert charlie_client.get(MEMBERS).status_code == 404


def test_alice_adds_charlie_as_annotator_with_201(project, alice_client, charlie):
    response = alice_client.post(MEMBERS, {"username": "charlie", "role": "annotator"}, format="json")

    assert response.status_code == 201
    assert response.data["role"] == "annotator"
    assert Membership.objects.get(project=project, user=charlie).role == Role.ANNOTATOR


def test_alice_changing_bobs_role_answers_200_and_a_retry_is_harmless(project, alice_client, bob):
    first = alice_client.post(MEMBERS, {"username": "bob", "role": "pipeline"}, format="json")
    again = alice_client.post(MEMBERS, {"username": "bob", "role": "pipeline"}, format="json")

    assert (first.status_code, again.status_code) == (200, 200)
    assert Membership.objects.get(project=project, user=bob).role == Role.PIPELINE
    assert Membership.objects.filter(project=project).count() == 2


def test_bob_may_not_add_members_and_charlie_may_not_add_himself(
    project, bob_client, charlie_client, charlie
):
    assert (
        bob_client.post(MEMBERS, {"username": "charlie", "role": "viewer"}, format="json").status_code == 403
    )
    assert (
        charlie_client.post(MEMBERS, {"username": "charlie", "role": "manager"}, format="json").status_code
        == 404
    )
    assert not Membership.objects.filter(user=charlie).exists()


def test_alices_read_only_token_may_not_add_members(project, alice, charlie):
    response = token_client(alice, read_only=True).post(
        MEMBERS, {"username": "charlie", "role": "viewer"}, format="json"
    )

    assert response.status_code == 403
    assert not Membership.objects.filter(user=charlie).exists()


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"username": "nobody", "role": "viewer"}, "username"),
        ({"username": "bob", "role": "owner"}, "role"),
    ],
)
def test_an_unknown_user_or_role_is_refused(project, alice_client, payload, field):
    response = alice_client.post(MEMBERS, payload, format="json")

    assert response.status_code == 400
    assert field in response.data


def test_the_only_manager_cannot_step_down(project, alice_client, alice):
    response = alice_client.post(MEMBERS, {"username": "alice", "role": "viewer"}, format="json")

    assert response.status_code == 400
    assert Membership.objects.get(project=project, user=alice).role == Role.MANAGER


@pytest.mark.parametrize("members", [3, 30])
def test_listing_members_costs_the_same_queries_for_3_or_30(
    project, alice_client, django_assert_max_num_queries, members
):
    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"member-{i}") for i in range(members)]
    )
    Membership.objects.bulk_create([Membership(project=project, user=user) for user in users])

    # Token lookup, its last-used stamp, the caller's membership, one page of members with users.
    with django_assert_max_num_queries(4):
        response = alice_client.get(MEMBERS)

    assert len(response.data["results"]) == members + 2
