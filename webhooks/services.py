"""Webhook writes: register and remove a project's webhooks, and queue events.

An event is delivered by the task `webhooks.deliver`, one attempt per run of the task
(`webhooks.deliveries.webhook_deliver`, each attempt a WebhookDelivery row).
"""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.urls import reverse

from annotations.models import Job, Project
from webhooks.models import Webhook
from webhooks.tasks import webhook_deliver_task

SECRET_PREFIX = "whsec_"


@transaction.atomic
def webhook_create(*, project: Project, user: AbstractBaseUser, url: str, description: str = "") -> Webhook:
    """Register `url` for the project's events, with a new random secret (shown once, by the API)."""
    webhook = Webhook(
        project=project,
        url=url,
        description=description,
        secret=SECRET_PREFIX + secrets.token_urlsafe(32),
        created_by=user,
    )
    webhook.full_clean()
    webhook.save()
    return webhook


@transaction.atomic
def webhook_delete(*, webhook: Webhook) -> None:
    """Remove the webhook and its delivery log; attempts already queued find it gone and stop."""
    webhook.delete()


def webhook_ping(*, webhook: Webhook) -> str:
    """Queue a `ping` event to the webhook; returns the event id its delivery rows carry."""
    payload = {
        "event": "ping",
        "project": webhook.project.slug,
        "run": None,
        "job": None,
        "status": None,
        "url": _absolute(reverse("webhook-detail", args=[webhook.project.slug, webhook.pk])),
    }
    return _queue(webhook=webhook, payload=payload)


def webhooks_notify_job_finished(*, job: Job) -> list[str]:
    """Queue a `job.succeeded` or `job.failed` event to every active webhook of the job's project."""
    if job.project_id is None:
        return []
    payload = job_event_payload(job)
    webhooks = Webhook.objects.filter(project_id=job.project_id, is_active=True).select_related("project")
    return [_queue(webhook=webhook, payload=payload) for webhook in webhooks]


def job_event_payload(job: Job) -> dict[str, Any]:
    """The event of a finished job (without its timestamp, which each attempt adds)."""
    return {
        "event": f"job.{job.state}",
        "project": job.project.slug if job.project_id else None,
        "run": (job.params or {}).get("run_id"),
        "job": job.pk,
        "kind": job.kind,
        "status": job.state,
        "url": _absolute(reverse("job-detail", args=[job.pk])),
    }


def _queue(*, webhook: Webhook, payload: dict[str, Any]) -> str:
    event_id = uuid.uuid4().hex
    # Sent at once: callers run after the job's transaction committed (job_finished) or wrote nothing.
    webhook_deliver_task.delay(webhook.pk, event_id, payload, 1)
    return event_id


def _absolute(path: str) -> str:
    """`path` under PUBLIC_BASE_URL when it is set (the URL people and programs reach the server at)."""
    base = settings.PUBLIC_BASE_URL.rstrip("/")
    return f"{base}{path}" if base else path
