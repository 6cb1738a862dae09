"""Checking the webhook requests the server sends.

The server signs the raw body: `X-Evalproject-Signature: sha256=<hex HMAC-SHA256(secret, body)>`. The
body holds `timestamp` (unix seconds), equal to the `X-Evalproject-Timestamp` header; since the
signature covers it, an old request replayed later is recognised by its age.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from evalproject_client.errors import WebhookVerificationError

SIGNATURE_HEADER = "X-Evalproject-Signature"
TIMESTAMP_HEADER = "X-Evalproject-Timestamp"
DEFAULT_TOLERANCE_SECONDS = 300


def sign_webhook(body: bytes, secret: str) -> str:
    """The signature header's value for `body`: `sha256=` and the hex HMAC-SHA256 of the raw body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_webhook(
    body: bytes | str,
    headers: Mapping[str, str],
    secret: str,
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
    *,
    now: float | None = None,
) -> dict[str, Any]:
    """Check a webhook request and return its event; raise WebhookVerificationError when it must be refused.

    Refused: a missing or wrong signature (compared in constant time), a timestamp header that differs
    from the signed body's, or a timestamp more than `tolerance` seconds away from now (a replay).
    `body` must be the raw request body, before any JSON parsing. Header names are case-insensitive.
    """
    raw = body.encode() if isinstance(body, str) else bytes(body)
    lowered = {key.lower(): value for key, value in headers.items()}
    signature = lowered.get(SIGNATURE_HEADER.lower())
    if not signature:
        raise WebhookVerificationError(f"no {SIGNATURE_HEADER} header")
    if not hmac.compare_digest(signature.strip().encode(), sign_webhook(raw, secret).encode()):
        raise WebhookVerificationError("the signature does not match the body")
    try:
        event = json.loads(raw)
        signed_timestamp = int(event["timestamp"])
    except (ValueError, KeyError, TypeError):
        raise WebhookVerificationError("the body has no timestamp") from None
    if str(lowered.get(TIMESTAMP_HEADER.lower(), "")).strip() != str(signed_timestamp):
        raise WebhookVerificationError(f"{TIMESTAMP_HEADER} differs from the signed timestamp")
    age = (time.time() if now is None else now) - signed_timestamp
    if abs(age) > tolerance:
        raise WebhookVerificationError(f"the timestamp is {int(age)} s old (tolerance {tolerance:g} s)")
    return event
