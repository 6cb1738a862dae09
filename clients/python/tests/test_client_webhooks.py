"""verify_webhook: the signature over the raw body, and the timestamp against replays."""

from __future__ import annotations

import json

import pytest
from evalproject_client import Client, WebhookVerificationError, sign_webhook, verify_webhook

SECRET = "whsec_test"
NOW = 1_800_000_000


def signed(timestamp: int = NOW, secret: str = SECRET) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"event": "job.succeeded", "run": 3, "timestamp": timestamp}).encode()
    return body, {
        "X-Evalproject-Signature": sign_webhook(body, secret),
        "X-Evalproject-Timestamp": str(timestamp),
    }


def test_it_accepts_a_fresh_correctly_signed_request_and_returns_the_event():
    body, headers = signed()
    assert verify_webhook(body, headers, SECRET, now=NOW + 10)["run"] == 3


def test_header_names_are_case_insensitive_and_the_client_has_it_too():
    body, headers = signed()
    lowered = {key.lower(): value for key, value in headers.items()}
    assert Client.verify_webhook(body.decode(), lowered, SECRET, now=NOW)["event"] == "job.succeeded"


def test_it_rejects_another_secret():
    body, headers = signed(secret="other")
    with pytest.raises(WebhookVerificationError, match="signature"):
        verify_webhook(body, headers, SECRET, now=NOW)


def test_it_rejects_a_changed_body():
    body, headers = signed()
    with pytest.raises(WebhookVerificationError, match="signature"):
        verify_webhook(body.replace(b"3", b"4"), headers, SECRET, now=NOW)


def test_it_rejects_a_request_older_than_the_tolerance():
    body, headers = signed()
    with pytest.raises(WebhookVerificationError, match="old"):
        verify_webhook(body, headers, SECRET, now=NOW + 301)
    assert verify_webhook(body, headers, SECRET, tolerance=600, now=NOW + 301)


def test_it_rejects_a_timestamp_header_that_differs_from_the_signed_one():
    body, headers = signed()
    headers["X-Evalproject-Timestamp"] = str(NOW + 60)
    with pytest.raises(WebhookVerificationError, match="differs"):
        verify_webhook(body, headers, SECRET, now=NOW)


def test_it_rejects_a_request_without_a_signature():
    body, headers = signed()
    del headers["X-Evalproject-Signature"]
    with pytest.raises(WebhookVerificationError, match="no X-Evalproject-Signature"):
        verify_webhook(body, headers, SECRET, now=NOW)
