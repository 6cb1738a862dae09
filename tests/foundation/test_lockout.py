"""After repeated failed tokens or logins, an address is locked out for a while (429, Retry-After).

AUTH_LOCKOUT_FAILURES failures within AUTH_LOCKOUT_SECONDS, counted per client address: a valid
credential from that address is refused too until the window ends; other addresses are not affected.
"""

import time

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.test import Client, RequestFactory
from rest_framework.test import APIClient

from tests.conftest import token_client

pytestmark = pytest.mark.django_db

ATTACKER = "203.0.113.7"
NEIGHBOUR = "198.51.100.20"


@pytest.fixture
def few_failures(settings):
    settings.AUTH_LOCKOUT_FAILURES = 3
    settings.AUTH_LOCKOUT_SECONDS = 300


def _guess_tokens(times: int) -> list[int]:
    client = APIClient(REMOTE_ADDR=ATTACKER)
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")
    return [client.get("/api/v1/projects/").status_code for _ in range(times)]


def test_it_locks_out_an_address_after_too_many_invalid_tokens(few_failures):
    assert _guess_tokens(4) == [401, 401, 401, 429]


def test_a_locked_out_address_is_refused_even_with_a_valid_token_and_told_when_to_retry(few_failures, alice):
    _guess_tokens(3)
    client = token_client(alice)
    response = client.get("/api/v1/projects/", REMOTE_ADDR=ATTACKER)
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 300


def test_other_addresses_keep_working_while_one_is_locked_out(few_failures, alice):
    _guess_tokens(3)
    response = token_client(alice).get("/api/v1/projects/", REMOTE_ADDR=NEIGHBOUR)
    assert response.status_code == 200


def test_valid_tokens_do_not_count_towards_the_lockout(few_failures, alice):
    client = token_client(alice)
    statuses = {client.get("/api/v1/projects/", REMOTE_ADDR=ATTACKER).status_code for _ in range(5)}
    assert statuses == {200}


def test_a_forwarded_for_header_does_not_give_a_fresh_address(few_failures, alice):
    _guess_tokens(3)
    response = token_client(alice).get(
        "/api/v1/projects/", REMOTE_ADDR=ATTACKER, HTTP_X_FORWARDED_FOR=NEIGHBOUR
    )
    assert response.status_code == 429


def _admin_login(password: str, address: str = ATTACKER):
    return Client(REMOTE_ADDR=address).post(
        "/admin/login/", {"username": "operator", "password": password, "next": "/admin/"}
    )


@pytest.fixture
def operator(db):
    return get_user_model().objects.create_user(username="operator", password="right-password", is_staff=True)


def test_the_admin_login_works_before_any_failure(few_failures, operator):
    assert _admin_login("right-password").status_code == 302


def test_failed_admin_logins_lock_the_address_out_with_retry_after(few_failures, operator):
    statuses = [_admin_login("wrong").status_code for _ in range(3)]
    assert statuses == [200, 200, 200]  # the form again, with its error
    response = _admin_login("right-password")
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 300


def test_the_right_password_is_refused_by_any_login_while_locked_out(few_failures, operator):
    for _ in range(3):
        _admin_login("wrong")
    request = RequestFactory().post("/accounts/login/", REMOTE_ADDR=ATTACKER)
    assert authenticate(request, username="operator", password="right-password") is None
    request = RequestFactory().post("/accounts/login/", REMOTE_ADDR=NEIGHBOUR)
    assert authenticate(request, username="operator", password="right-password") == operator


def test_the_lockout_ends_with_its_window(few_failures, operator, monkeypatch):
    for _ in range(3):
        _admin_login("wrong")
    assert _admin_login("right-password").status_code == 429
    # The window and the cache's expiry read the same clock.
    later = time.time() + 301
    monkeypatch.setattr(time, "time", lambda: later)
    assert _admin_login("right-password").status_code == 302
