"""Python client for the evalproject evaluation server.

from evalproject_client import Client

with Client("http://127.0.0.1:8000", token) as client:
    run = client.create_run("demo-trials", "my pipeline v2", "attributes",
                            config=Path("config.yaml"), prompts="prompts.csv", model="gpt-4o-mini")
    client.post_predictions(run, documents)
    client.finalize(run)
    if not client.gate(run, "thresholds.json").passed:
        raise SystemExit(1)
"""

from evalproject_client.client import Client, GateResult, read_prompt_csv
from evalproject_client.errors import (
    ApiError,
    AuthenticationError,
    Conflict,
    JobFailed,
    JobTimeout,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    ServerError,
    ValidationError,
    WebhookVerificationError,
)
from evalproject_client.webhooks import sign_webhook, verify_webhook

__all__ = [
    "ApiError",
    "AuthenticationError",
    "Client",
    "Conflict",
    "GateResult",
    "JobFailed",
    "JobTimeout",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "ServerError",
    "ValidationError",
    "WebhookVerificationError",
    "read_prompt_csv",
    "sign_webhook",
    "verify_webhook",
]
