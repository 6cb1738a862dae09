"""Session login and logout for the pages; anonymous requests go to the login page."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

PAGES = ["/", "/projects/letters/", "/runs/1/", "/runs/1/documents/letter-1/", "/compare/?a=1&b=2"]


@pytest.mark.parametrize("url", PAGES)
def test_an_anonymous_request_to_any_page_is_sent_to_the_login_page(url):
    response = Client().get(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_bob_logs_in_with_his_username_and_password_and_lands_on_his_projects(bob, project):
    client = Client()
    page = client.get("/accounts/login/")
    assert b'name="username"' in page.content and b'name="password"' in page.content

    response = client.post("/accounts/login/", {"username": "bob", "password": "bob-password"}, follow=True)

    assert response.redirect_chain[-1][0] == "/"
    assert b"Discharge letters" in response.content


def test_a_wrong_password_keeps_the_login_page_with_a_message(bob):
    response = Client().post("/accounts/login/", {"username": "bob", "password": "nope"})

    assert response.status_code == 200
    assert b"did not match" in response.content


def test_logging_out_takes_a_post_and_ends_the_session(bob_browser):
    assert bob_browser.get("/accounts/logout/").status_code == 405

    response = bob_browser.post("/accounts/logout/")

    assert response.status_code == 302
    assert bob_browser.get("/").status_code == 302
