"""With the documented production variables set, `manage.py check --deploy` raises no security warning,
and the API throttles anonymous and authenticated callers."""

import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from tests.conftest import token_client

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# docs/operations.md, "Production settings": a team server behind an HTTPS proxy.
PRODUCTION = {
    "DATABASE_URL": "postgres://evalproject@127.0.0.1:1/evalproject",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "eval.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://eval.example.org",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto,https",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "SESSION_COOKIE_SECURE": "1",
    "CSRF_COOKIE_SECURE": "1",
}


def _check_deploy(variables: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--tag", "security", "--fail-level", "WARNING"],
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **variables},
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=120,
    )


def test_check_deploy_is_clean_with_the_production_variables():
    result = _check_deploy(PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_without_them():
    without_https = {name: PRODUCTION[name] for name in ("DATABASE_URL", "SECRET_KEY", "ALLOWED_HOSTS")}
    result = _check_deploy(without_https)
    assert result.returncode == 1
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr


def test_the_default_rates_come_from_the_settings():
    assert SimpleRateThrottle.THROTTLE_RATES == {"anon": "60/min", "user": "6000/min"}


@pytest.mark.django_db
def test_anonymous_api_callers_are_throttled(monkeypatch):
    # DRF reads the rates once, into the throttle class.
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": "3/min", "user": "1000/min"})
    client = APIClient(REMOTE_ADDR="203.0.113.9")
    statuses = [client.get("/api/schema/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


@pytest.mark.django_db
def test_authenticated_api_callers_have_their_own_rate(monkeypatch, alice):
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": "1/min", "user": "3/min"})
    client = token_client(alice)
    statuses = [client.get("/api/v1/projects/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    assert int(client.get("/api/v1/projects/")["Retry-After"]) > 0
