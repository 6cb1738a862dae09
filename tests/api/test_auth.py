"""Authentication: hashed `Token` keys that can expire or be read-only, and session login for browsers."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework.test import APIClient

from annotations.models import ApiToken
from annotations.services import api_token_create


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_valid_token_authenticates_and_is_stamped_as_used(project, alice):
    token, key = api_token_create(user=alice)

    assert client_with(key).get("/api/v1/projects/").status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None
    assert token.key_hash != key  # only the hash is stored


def test_an_expired_token_is_refused(project, alice):
    token, key = api_token_create(user=alice, expires_days=1)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    response = client_with(key).get("/api/v1/projects/letters/")

    assert response.status_code == 401
    assert "expired" in str(response.data["detail"])


def test_an_unknown_token_and_no_credentials_are_refused(project):
    assert client_with("not-a-key").get("/api/v1/projects/").status_code == 401
    assert APIClient().get("/api/v1/projects/letters/").status_code in (401, 403)


def test_a_read_only_token_reads_but_every_write_is_refused(project, alice):
    _, key = api_token_create(user=alice, read_only=True)
    client = client_with(key)

    assert client.get("/api/v1/projects/letters/members/").status_code == 200
    response = client.post(
        "/api/v1/projects/letters/members/", {"username": "alice", "role": "manager"}, format="json"
    )
    assert response.status_code == 403
    assert "read-only" in str(response.data["detail"])


def test_a_token_of_a_deactivated_user_is_refused(project, alice):
    _, key = api_token_create(user=alice)
    alice.is_active = False
    alice.save()

    assert client_with(key).get("/api/v1/projects/").status_code == 401


def test_a_browser_session_reads_the_api(project, client):
    assert client.login(username="bob", password="bob-password")

    response = client.get("/api/v1/projects/letters/")

    assert response.status_code == 200
    assert response.json()["role"] == "viewer"


def test_a_key_never_starts_with_a_dash(alice, monkeypatch):
    # `gate --token -Xy...` would read the key as an option: such a draw is drawn again.
    draws = iter(["-starts-like-an-option", "plain-key-after-the-dash"])
    monkeypatch.setattr("annotations.services.tokens.secrets.token_urlsafe", lambda _: next(draws))

    _, key = api_token_create(user=alice)

    assert key == "plain-key-after-the-dash"
