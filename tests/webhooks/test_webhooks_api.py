"""/api/v1/projects/{slug}/webhooks/: alice (manager) registers, lists, reads and removes webhooks;
the secret is shown once; bob (viewer) gets 403 and charlie (outsider) 404 on every operation."""

from __future__ import annotations

import pytest

from webhooks.models import Webhook

WEBHOOKS = "/api/v1/projects/letters/webhooks/"
RECEIVER = "https://ci.example.org/hooks/evalproject"


def register(client, url: str = RECEIVER, **fields):
    return client.post(WEBHOOKS, {"url": url, **fields}, format="json")


def test_alice_registers_a_webhook_and_sees_its_secret_once(project, alice_client):
    created = register(alice_client, description="CI")

    assert created.status_code == 201, created.data
    assert created.data["url"] == RECEIVER and created.data["description"] == "CI"
    assert created.data["secret"].startswith("whsec_") and len(created.data["secret"]) > 30
    assert Webhook.objects.get().secret == created.data["secret"]
    listed = alice_client.get(WEBHOOKS).json()["results"]
    detail = alice_client.get(f"{WEBHOOKS}{created.data['id']}/").json()
    assert [hook["id"] for hook in listed] == [created.data["id"]]
    assert "secret" not in listed[0] and "secret" not in detail


def test_each_webhook_gets_its_own_secret(project, alice_client):
    first, second = register(alice_client), register(alice_client)
    assert first.data["secret"] != second.data["secret"]


@pytest.mark.parametrize(
    "url", ["ftp://example.org/hook", "file:///etc/passwd", "javascript:alert(1)", "not a url", ""]
)
def test_it_accepts_only_http_and_https_urls(project, alice_client, url):
    response = register(alice_client, url)

    assert response.status_code == 400
    assert "url" in response.json()
    assert not Webhook.objects.exists()


def test_alice_removes_a_webhook(project, alice_client):
    created = register(alice_client).data

    assert alice_client.delete(f"{WEBHOOKS}{created['id']}/").status_code == 204
    assert not Webhook.objects.exists()
    assert alice_client.get(f"{WEBHOOKS}{created['id']}/").status_code == 404


def test_alice_pages_through_the_webhooks(project, alice_client):
    ids = [register(alice_client).data["id"] for _ in range(3)]

    first = alice_client.get(WEBHOOKS, {"page_size": 2}).json()
    second = alice_client.get(first["next"]).json()

    assert [hook["id"] for hook in first["results"] + second["results"]] == ids


def test_an_unknown_query_parameter_answers_400_naming_it(project, alice_client):
    webhook_id = register(alice_client).data["id"]

    listed = alice_client.get(WEBHOOKS, {"active": "true"})
    deliveries = alice_client.get(f"{WEBHOOKS}{webhook_id}/deliveries/", {"event": "ping"})

    assert (listed.status_code, deliveries.status_code) == (400, 400)
    assert "active" in listed.json() and "event" in deliveries.json()


def test_a_webhook_of_another_project_is_not_found(project, alice_client):
    register(alice_client)
    other = alice_client.post("/api/v1/projects/", {"slug": "other", "name": "Other"}, format="json")
    assert other.status_code == 201
    webhook = Webhook.objects.get()

    assert alice_client.get(f"/api/v1/projects/other/webhooks/{webhook.pk}/").status_code == 404
    assert alice_client.delete(f"/api/v1/projects/other/webhooks/{webhook.pk}/").status_code == 404


def _every_operation(client, webhook_id: int) -> list[int]:
    base = f"{WEBHOOKS}{webhook_id}/"
    return [
        client.get(WEBHOOKS).status_code,
        register(client).status_code,
        client.get(base).status_code,
        client.post(f"{base}ping/").status_code,
        client.get(f"{base}deliveries/").status_code,
        client.delete(base).status_code,
    ]


def test_bob_the_viewer_gets_403_on_every_operation(project, alice_client, bob_client):
    webhook_id = register(alice_client).data["id"]

    assert _every_operation(bob_client, webhook_id) == [403] * 6
    assert Webhook.objects.count() == 1


def test_charlie_the_outsider_gets_404_on_every_operation(project, alice_client, charlie_client):
    webhook_id = register(alice_client).data["id"]

    assert _every_operation(charlie_client, webhook_id) == [404] * 6
    assert Webhook.objects.count() == 1


def test_the_schema_describes_every_webhook_operation(alice_client):
    paths = alice_client.get("/api/schema/?format=json").json()["paths"]

    assert {"get", "post"} <= set(paths["/api/v1/projects/{slug}/webhooks/"])
    assert {"get", "delete"} <= set(paths["/api/v1/projects/{slug}/webhooks/{webhook_id}/"])
    assert "requestBody" in paths["/api/v1/projects/{slug}/webhooks/"]["post"]
    assert "202" in paths["/api/v1/projects/{slug}/webhooks/{webhook_id}/ping/"]["post"]["responses"]
    assert "200" in paths["/api/v1/projects/{slug}/webhooks/{webhook_id}/deliveries/"]["get"]["responses"]
