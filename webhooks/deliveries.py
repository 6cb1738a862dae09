"""One delivery attempt of a webhook event: sign, POST, record (the task `webhooks.deliver` runs it).

Every attempt is signed afresh: the body holds the attempt's own `timestamp` (unix seconds, also in the
X-Evalproject-Timestamp header) and X-Evalproject-Signature is `sha256=<hex HMAC-SHA256(secret, raw
body)>`. Signing the timestamp with the body protects it: a receiver that refuses old timestamps (5
minutes by default in `evalproject_client.verify_webhook`) refuses a replay, and a retry sent later than
that still passes.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from django.conf import settings
from evalproject_client.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign_webhook

from webhooks.models import Webhook, WebhookDelivery

USER_AGENT = "evalproject-webhooks/1"


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
