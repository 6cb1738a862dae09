"""Celery tasks of the webhooks app: thin, they call a service and schedule the next attempt."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings

from webhooks.deliveries import webhook_deliver


@shared_task(name="webhooks.deliver")
def webhook_deliver_task(webhook_id: int, event_id: str, payload: dict[str, Any], attempt: int = 1) -> str:
    """Deliver one attempt; after a failure queue the next with exponential backoff, up to
    WEBHOOK_MAX_ATTEMPTS. Each attempt re-signs the body with its own timestamp, so a new task per
    attempt (rather than Celery's retry of the same arguments) keeps each attempt a row of its own."""
    delivery = webhook_deliver(webhook_id=webhook_id, event_id=event_id, payload=payload, attempt=attempt)
    if delivery is None:
        return "gone"
    if delivery.succeeded:
        return "delivered"
    if attempt >= settings.WEBHOOK_MAX_ATTEMPTS:
        return "failed"
    webhook_deliver_task.apply_async(
        args=(webhook_id, event_id, payload, attempt + 1),
        countdown=settings.WEBHOOK_RETRY_SECONDS * 2 ** (attempt - 1),
    )
    return "retrying"
