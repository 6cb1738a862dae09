"""Webhook reads, always within a project the caller was already authorised for."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from annotations.models import Project
from webhooks.models import Webhook, WebhookDelivery


def webhook_list(*, project: Project) -> QuerySet[Webhook]:
    return Webhook.objects.filter(project=project).select_related("project")


def webhook_get(*, project: Project, webhook_id: int) -> Webhook:
    """The project's webhook; Http404 when the project has no such webhook."""
    webhook = webhook_list(project=project).filter(pk=webhook_id).first()
    if webhook is None:
        raise Http404("No such webhook.")
    return webhook


def delivery_list(*, webhook: Webhook) -> QuerySet[WebhookDelivery]:
    return WebhookDelivery.objects.filter(webhook=webhook)
