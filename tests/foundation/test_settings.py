"""Settings come from the environment and fail loudly on a bad value."""

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from evalproject.env import (
    database_from_url,
    env_bool,
    env_header_pair,
    env_int,
    env_origins,
    env_rate,
    env_size,
)
from evalproject.local_secrets import local_secret_key

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def test_a_postgres_url_becomes_a_postgresql_database():
    database = database_from_url("postgres://eva:s3cret@db.example:5433/evals", base_dir=Path("/srv"))
    assert database["ENGINE"] == "django.db.backends.postgresql"
    assert (database["NAME"], database["USER"], database["PASSWORD"]) == ("evals", "eva", "s3cret")
    assert (database["HOST"], database["PORT"]) == ("db.example", "5433")


def test_a_relative_sqlite_url_lives_in_the_project_folder():
    database = database_from_url("sqlite:///data/evals.sqlite3", base_dir=Path("/srv/app"))
    assert database["NAME"] == "/srv/app/data/evals.sqlite3"


def test_an_absolute_sqlite_url_keeps_its_path():
    assert (
        database_from_url("sqlite:////var/evals.sqlite3", base_dir=Path("/srv"))["NAME"]
        == "/var/evals.sqlite3"
    )


@pytest.mark.parametrize(
    "url", ["mysql://x@y/z", "postgres://host:5432/", "sqlite://", "postgres://h:port/db"]
)
def test_it_refuses_a_database_url_it_cannot_use(url):
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        database_from_url(url, base_dir=Path("/srv"))


def test_booleans_integers_and_sizes_fail_loudly(monkeypatch):
    monkeypatch.setenv("DEBUG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="DEBUG='maybe'"):
        env_bool("DEBUG")
    monkeypatch.setenv("ARCHIVE_MAX_RATIO", "lots")
    with pytest.raises(ImproperlyConfigured, match="ARCHIVE_MAX_RATIO"):
        env_int("ARCHIVE_MAX_RATIO", 1)
    monkeypatch.setenv("UPLOAD_MAX_BYTES", "12Q")
    with pytest.raises(ImproperlyConfigured, match="UPLOAD_MAX_BYTES"):
        env_size("UPLOAD_MAX_BYTES", 1)


def test_sizes_take_binary_suffixes(monkeypatch):
    monkeypatch.setenv("UPLOAD_MAX_BYTES", "200M")
    assert env_size("UPLOAD_MAX_BYTES", 1) == 200 * 1024**2


def test_a_proxy_header_pair_becomes_a_meta_name_and_value(monkeypatch):
    monkeypatch.setenv("SECURE_PROXY_SSL_HEADER", "X-Forwarded-Proto,https")
    assert env_header_pair("SECURE_PROXY_SSL_HEADER") == ("HTTP_X_FORWARDED_PROTO", "https")
    monkeypatch.delenv("SECURE_PROXY_SSL_HEADER")
    assert env_header_pair("SECURE_PROXY_SSL_HEADER") is None


@pytest.mark.parametrize(
    ("name", "value", "read"),
    [
        ("SECURE_PROXY_SSL_HEADER", "X-Forwarded-Proto", env_header_pair),
        ("CSRF_TRUSTED_ORIGINS", "eval.example.org", env_origins),
        ("API_THROTTLE_USER", "lots", lambda name: env_rate(name, "1/s")),
    ],
)
def test_proxy_headers_origins_and_rates_fail_loudly(monkeypatch, name, value, read):
    monkeypatch.setenv(name, value)
    with pytest.raises(ImproperlyConfigured, match=name):
        read(name)


def _clean_environment(**variables: str) -> dict[str, str]:
    """Nothing of the calling shell: no SECRET_KEY, DEBUG or DATABASE_URL unless given."""
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **variables}


def _manage(*arguments: str, cwd: Path, **variables: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        env=_clean_environment(**variables),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture
def fresh_clone(tmp_path) -> Path:
    """The project's code in a new folder, as a clone has it: no database, no secrets."""
    clone = tmp_path / "clone"
    clone.mkdir()
    shutil.copy(PROJECT_ROOT / "manage.py", clone)
    for package in ("evalproject", "annotations", "experiments", "metrics", "webhooks", "web"):
        shutil.copytree(PROJECT_ROOT / package, clone / package, ignore=shutil.ignore_patterns("__pycache__"))
    return clone


def test_a_fresh_clone_creates_a_user_and_token_with_no_variable_set(fresh_clone):
    migrated = _manage("migrate", "--noinput", cwd=fresh_clone)
    assert migrated.returncode == 0, migrated.stderr
    created = _manage("create_api_token", "x", "--create-user", cwd=fresh_clone)
    assert created.returncode == 0, created.stderr
    assert len(created.stdout.strip()) >= 40
    secret_key = fresh_clone / ".local-secrets" / "secret_key"
    assert stat.S_IMODE(secret_key.stat().st_mode) == 0o600
    assert stat.S_IMODE(secret_key.parent.stat().st_mode) == 0o700
    first_key = secret_key.read_text()
    again = _manage("create_api_token", "x", cwd=fresh_clone)
    assert again.returncode == 0, again.stderr
    assert secret_key.read_text() == first_key
    superuser = _manage("createsuperuser", "--noinput", "--username", "root", "--email", "", cwd=fresh_clone)
    assert superuser.returncode == 0, superuser.stderr


def test_the_secret_key_file_is_ignored_by_git():
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", ".local-secrets/secret_key"], cwd=PROJECT_ROOT, check=False
    )
    assert ignored.returncode == 0


def test_the_team_server_mode_still_requires_a_secret_key(tmp_path):
    result = _manage("check", cwd=PROJECT_ROOT, DATABASE_URL="postgres://eval@127.0.0.1:1/eval")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "configuration error: SECRET_KEY is required when DATABASE_URL is set (or with DEBUG=1)"
    ]


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DEBUG", "maybe"),
        ("UPLOAD_MAX_BYTES", "12Q"),
        ("SECURE_HSTS_SECONDS", "a year"),
        ("CSRF_TRUSTED_ORIGINS", "eval.example.org"),
        ("CACHE_URL", "memcached://127.0.0.1:11211"),
        ("LOG_LEVEL", "LOUD"),
    ],
)
def test_a_bad_value_stops_manage_py_with_one_line_naming_the_variable(variable, value):
    result = _manage("create_api_token", "x", cwd=PROJECT_ROOT, **{variable: value})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"configuration error: {variable}=")


@pytest.mark.parametrize(
    "command",
    [
        ["celery", "-A", "evalproject", "worker", "--loglevel=INFO"],
        ["gunicorn", "evalproject.wsgi:application", "--bind", "127.0.0.1:0"],
    ],
)
def test_a_bad_value_stops_the_worker_and_the_web_server_with_one_line(command):
    executable = str(Path(sys.executable).parent / command[0])
    result = subprocess.run(
        [executable, *command[1:]],
        env=_clean_environment(DEBUG="maybe"),
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=120,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "DEBUG" in line]
    assert errors == [
        "configuration error: DEBUG='maybe' is not a boolean; use 1/0, true/false, yes/no or on/off"
    ]


def test_a_bad_value_stops_scripts_demo_with_one_line_naming_it():
    result = subprocess.run(
        ["scripts/demo", "--no-serve"],
        env={**os.environ, "DEBUG": "maybe"},
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=300,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert [line for line in result.stderr.splitlines() if "DEBUG" in line] == [
        "configuration error: DEBUG='maybe' is not a boolean; use 1/0, true/false, yes/no or on/off"
    ]


def test_the_embedded_default_serves_this_machine_without_debug(fresh_clone):
    shown = _manage(
        "shell", "-c", "from django.conf import settings; print(settings.DEBUG, settings.ALLOWED_HOSTS)",
        cwd=fresh_clone,
    )  # fmt: skip
    assert shown.stdout.strip().splitlines()[-1] == "False ['127.0.0.1', 'localhost', '[::1]']", shown.stderr


def test_an_unwritable_project_folder_asks_for_a_secret_key_in_one_line(tmp_path):
    not_a_folder = tmp_path / "project"
    not_a_folder.write_text("")  # as unusable as a read-only folder, even for root
    with pytest.raises(ImproperlyConfigured, match="cannot be created .*; set SECRET_KEY"):
        local_secret_key(not_a_folder / ".local-secrets")


def test_the_local_secret_key_is_made_once_and_read_back(tmp_path):
    first = local_secret_key(tmp_path / ".local-secrets")
    assert len(first) >= 50
    assert local_secret_key(tmp_path / ".local-secrets") == first
