"""The admin: webhooks without their secrets, and delivery attempts read-only, at a fixed query cost."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from webhooks.models import Webhook, WebhookDelivery
from webhooks.services import webhook_create


@pytest.fixture
def admin_client(client, db):
    get_user_model().objects.create_superuser("root", "root@example.org", "root-password")
    client.login(username="root", password="root-password")
    return client


def populate(project, alice, rows: int) -> Webhook:
    webhook = webhook_create(project=project, user=alice, url="https://ci.example.org/hook")
    for attempt in range(1, rows + 1):
        WebhookDelivery.objects.create(
            webhook=webhook, event="ping", event_id="e1", attempt=attempt, payload={}, status_code=500
        )
    return webhook


def test_the_webhook_page_never_shows_the_secret(project, alice, admin_client):
    webhook = populate(project, alice, 1)

    page = admin_client.get(f"/admin/webhooks/webhook/{webhook.pk}/change/")

    assert page.status_code == 200
    assert webhook.secret not in page.content.decode()


def test_deliveries_are_read_only(project, alice, admin_client):
    webhook = populate(project, alice, 1)
    delivery = WebhookDelivery.objects.get()

    assert admin_client.get("/admin/webhooks/webhookdelivery/").status_code == 200
    assert admin_client.get("/admin/webhooks/webhookdelivery/add/").status_code == 403
    page = admin_client.get(f"/admin/webhooks/webhookdelivery/{delivery.pk}/change/")
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert (
        admin_client.post(
            f"/admin/webhooks/webhookdelivery/{delivery.pk}/delete/", {"post": "yes"}
        ).status_code
        == 403
    )
    assert WebhookDelivery.objects.filter(webhook=webhook).count() == 1


def test_the_delivery_list_costs_the_same_queries_for_3_or_30_rows(project, alice, admin_client):
    def queries(rows: int) -> int:
        WebhookDelivery.objects.all().delete()
        Webhook.objects.all().delete()
        populate(project, alice, rows)
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get("/admin/webhooks/webhookdelivery/").status_code == 200
        return len(captured)

    assert queries(3) == queries(30)
