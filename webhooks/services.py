"""Webhook writes: register and remove a project's webhooks, queue events, and deliver one attempt.

An event is delivered by the task `webhooks.deliver`, one attempt per run of the task, each attempt a
WebhookDelivery row. Every attempt is signed afresh: the body holds the attempt's own `timestamp` (unix
seconds, also in the X-Evalproject-Timestamp header) and X-Evalproject-Signature is
`sha256=<hex HMAC-SHA256(secret, raw body)>`. Signing the timestamp with the body protects it: a
receiver that refuses old timestamps (5 minutes by default in `evalproject_client.verify_webhook`)
refuses a replay, and a retry sent later than that still passes.
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from typing import Any

import httpx
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.urls import reverse
from evalproject_client.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign_webhook

from annotations.models import Job, Project
from webhooks.models import Webhook, WebhookDelivery

SECRET_PREFIX = "whsec_"
USER_AGENT = "evalproject-webhooks/1"


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


def webhook_deliver(
    *, webhook_id: int, event_id: str, payload: dict[str, Any], attempt: int
) -> WebhookDelivery | None:
    """Send one attempt of an event and record it; None when the webhook is gone or switched off.

    No transaction is open during the request: a slow receiver holds no lock. Redirects are not
    followed (a 3xx is a failed attempt): the registered URL is the only place an event goes.
    """
    webhook = Webhook.objects.filter(pk=webhook_id, is_active=True).first()
    if webhook is None:
        return None
    timestamp = int(time.time())
    body = json.dumps({**payload, "timestamp": timestamp}, separators=(",", ":")).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Evalproject-Event": str(payload.get("event")),
        "X-Evalproject-Delivery": event_id,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: sign_webhook(body, webhook.secret),
    }
    status_code, error = None, ""
    started = time.monotonic()
    try:
        response = httpx.post(
            webhook.url,
            content=body,
            headers=headers,
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
            follow_redirects=False,
        )
        status_code = response.status_code
        if not 200 <= status_code < 300:
            error = f"HTTP {status_code}: {response.text[:500]}".strip()
    except httpx.HTTPError as failure:
        error = f"{type(failure).__name__}: {failure}"[:1000]
    duration_ms = int((time.monotonic() - started) * 1000)
    return WebhookDelivery.objects.create(
        webhook=webhook,
        event=str(payload.get("event")),
        event_id=event_id,
        job_id=payload.get("job"),
        attempt=attempt,
        payload=json.loads(body),
        status_code=status_code,
        error=error,
        duration_ms=duration_ms,
        succeeded=not error,
    )


def _queue(*, webhook: Webhook, payload: dict[str, Any]) -> str:
    from webhooks.tasks import webhook_deliver_task  # the task module imports this one

    event_id = uuid.uuid4().hex
    # Sent at once: callers run after the job's transaction committed (job_finished) or wrote nothing.
    webhook_deliver_task.delay(webhook.pk, event_id, payload, 1)
    return event_id


def _absolute(path: str) -> str:
    """`path` under PUBLIC_BASE_URL when it is set (the URL people and programs reach the server at)."""
    base = settings.PUBLIC_BASE_URL.rstrip("/")
    return f"{base}{path}" if base else path
