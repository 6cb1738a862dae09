"""Settings come from the environment and fail loudly on a bad value."""

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from evalproject.env import database_from_url, env_bool, env_int, env_size


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


def test_settings_refuse_to_start_without_a_secret_key_unless_debug():
    import subprocess
    import sys

    environment = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "evalproject.settings"}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env=environment,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode != 0
    assert "SECRET_KEY is required unless DEBUG=1" in result.stderr
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={**environment, "DEBUG": "1"},
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 0, result.stderr
