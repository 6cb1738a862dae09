"""`manage.py create_api_token`: prints only the key, which works; read-only and expiry options."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from annotations.models import ApiToken


def create_token(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("create_api_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_it_prints_only_the_key_and_the_key_works(project):
    out, err = create_token("alice")

    key = out.strip()
    assert out == key + "\n" and " " not in key and len(key) >= 32
    assert err == ""
    assert client_with(key).get("/api/v1/projects/letters/").status_code == 200


def test_a_read_only_key_reads_and_cannot_write(project):
    key = create_token("alice", "--read-only")[0].strip()

    assert client_with(key).get("/api/v1/projects/letters/").status_code == 200
    assert (
        client_with(key).patch("/api/v1/projects/letters/", {"name": "x"}, format="json").status_code == 403
    )


def test_expires_days_sets_the_expiry(project):
    key = create_token("alice", "--expires-days", "7")[0].strip()

    token = ApiToken.objects.get(key_hash=ApiToken.hash_key(key))
    assert timezone.now() + timedelta(days=6) < token.expires_at <= timezone.now() + timedelta(days=7)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client_with(key).get("/api/v1/projects/letters/").status_code == 401


def test_an_unknown_user_is_an_error_that_says_how_to_create_it(db):
    with pytest.raises(CommandError, match="no user 'dana'; add --create-user"):
        create_token("dana")
    assert not get_user_model().objects.filter(username="dana").exists()


def test_create_user_makes_the_user_without_a_usable_password(db):
    key = create_token("dana", "--create-user")[0].strip()

    dana = get_user_model().objects.get(username="dana")
    assert not dana.has_usable_password()
    assert client_with(key).get("/api/v1/projects/").status_code == 200


def test_a_non_positive_expiry_is_refused(db, alice):
    with pytest.raises(CommandError, match="positive"):
        create_token("alice", "--expires-days", "0")


def test_the_command_line_prints_errors_to_stderr_only(db, tmp_path):
    import os
    import subprocess
    import sys

    from django.conf import settings

    from tests.conftest import PROJECT_ROOT, _worker_environment

    env = _worker_environment()
    env.setdefault("DEBUG", "1")
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        # The fast lane's test database lives in memory, out of another process's reach: the command
        # gets a migrated file of its own.
        env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--verbosity", "0"],
            cwd=PROJECT_ROOT,
            env={**env, "SECRET_KEY": os.environ.get("SECRET_KEY", settings.SECRET_KEY)},
            check=True,
            timeout=300,
        )
    completed = subprocess.run(
        [sys.executable, "manage.py", "create_api_token", "nobody-here"],
        cwd=PROJECT_ROOT,
        env={**env, "SECRET_KEY": os.environ.get("SECRET_KEY", settings.SECRET_KEY)},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert completed.returncode != 0
    assert completed.stdout == ""
    assert "no user 'nobody-here'" in completed.stderr
