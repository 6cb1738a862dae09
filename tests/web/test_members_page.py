"""`/projects/<slug>/members/`: a manager gives a token-only member a password for the pages."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotations.models import Membership
from annotations.roles import Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def dave(project):
    """A pipeline account made by `create_api_token dave --create-user`: no usable password."""
    user = get_user_model().objects.create_user(username="dave", password=None)
    Membership.objects.create(project=project, user=user, role=Role.PIPELINE)
    return user


def test_alice_gives_dave_a_password_and_dave_logs_in_with_it(alice_browser, dave):
    page = alice_browser.get("/projects/letters/members/").content.decode()
    assert "dave" in page and 'name="password"' in page

    response = alice_browser.post(
        "/projects/letters/members/", {"username": "dave", "password": "a-long-passphrase"}, follow=True
    )

    assert b"dave can now log in" in response.content
    assert Client().login(username="dave", password="a-long-passphrase")


def test_a_member_who_has_a_password_keeps_it(alice_browser, bob, project):
    response = alice_browser.post(
        "/projects/letters/members/", {"username": "bob", "password": "taken-over-123"}
    )

    assert response.status_code == 400
    assert b"already signs in with a password" in response.content
    bob.refresh_from_db()
    assert bob.check_password("bob-password")


def test_a_too_short_password_is_refused_with_the_reason(alice_browser, dave):
    response = alice_browser.post("/projects/letters/members/", {"username": "dave", "password": "short"})

    assert response.status_code == 400
    assert b"too short" in response.content
    dave.refresh_from_db()
    assert not dave.has_usable_password()


def test_someone_outside_the_project_cannot_be_given_a_password_here(alice_browser, charlie, project):
    charlie.set_unusable_password()
    charlie.save()

    response = alice_browser.post(
        "/projects/letters/members/", {"username": "charlie", "password": "a-long-passphrase"}
    )

    assert response.status_code == 400
    assert b"not a member" in response.content


def test_bob_the_viewer_gets_403_and_charlie_the_outsider_404(bob_browser, charlie_browser, project):
    assert bob_browser.get("/projects/letters/members/").status_code == 403
    assert charlie_browser.get("/projects/letters/members/").status_code == 404
