"""Shared fixtures: the personas of the test stories, API clients, and a real Celery worker.

alice manages the project, bob is a viewer member, charlie is an outsider whose requests get 404.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from annotations.models import Membership, Project
from annotations.roles import Role
from annotations.services import api_token_create
from evalproject.celery import app as celery_app

PROJECT_ROOT = Path(__file__).resolve().parent.parent


# Tests that need a service beyond SQLite and this process. The fast lane, `pytest -m "not worker"`,
# leaves them out with the worker tests; scripts/test provides the services and runs them all.
NEEDS_SERVICES = ("browser", "postgresql", "faults")
# Whether the test itself asks for a real worker (marked `worker` in its source): a browser or
# postgresql test is marked `worker` only to leave the fast lane, and still runs its tasks in-process.
_ASKS_FOR_A_WORKER = pytest.StashKey[bool]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test marked browser, postgresql or faults is a worker test too, before `-m` selects."""
    for item in items:
        item.stash[_ASKS_FOR_A_WORKER] = item.get_closest_marker("worker") is not None
        if any(item.get_closest_marker(name) for name in NEEDS_SERVICES):
            item.add_marker(pytest.mark.worker)


@pytest.fixture(autouse=True)
def _tasks_run_in_process_unless_a_worker_is_asked_for(request):
    """Tests run tasks in-process by default; tests marked `worker` send them to a real worker."""
    eager = not request.node.stash.get(_ASKS_FOR_A_WORKER, False)
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = eager
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """PBKDF2 is slow on purpose; the tests create many users and test no password strength."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_counters_and_local_secrets(settings, tmp_path):
    """Throttle and lockout counters live in the cache, and persist across tests otherwise; files the
    embedded default keeps (the demo's credentials) go to a temporary folder, not the project's."""
    from django.core.cache import cache

    cache.clear()
    settings.LOCAL_SECRETS_DIR = tmp_path / "local-secrets"
    yield
    cache.clear()


def _user(username: str):
    return get_user_model().objects.create_user(username=username, password=f"{username}-password")


@pytest.fixture
def alice(db):
    return _user("alice")


@pytest.fixture
def bob(db):
    return _user("bob")


@pytest.fixture
def charlie(db):
    return _user("charlie")


@pytest.fixture
def project(alice, bob):
    """alice's project; bob is a viewer in it."""
    project = Project.objects.create(name="Discharge letters", slug="letters", created_by=alice)
    Membership.objects.create(project=project, user=alice, role=Role.MANAGER)
    Membership.objects.create(project=project, user=bob, role=Role.VIEWER)
    return project


def token_client(user, *, read_only: bool = False) -> APIClient:
    _, key = api_token_create(user=user, read_only=read_only)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


@pytest.fixture
def alice_client(alice) -> APIClient:
    return token_client(alice)


@pytest.fixture
def bob_client(bob) -> APIClient:
    return token_client(bob)


@pytest.fixture
def charlie_client(charlie) -> APIClient:
    return token_client(charlie)


def _worker_environment() -> dict[str, str]:
    """The worker must use the test database, not the one named in DATABASE_URL."""
    database = settings.DATABASES["default"]
    env = dict(os.environ)
    if database["ENGINE"].endswith("postgresql"):
        env["DATABASE_URL"] = (
            f"postgres://{database['USER']}:{database['PASSWORD']}@{database['HOST']}:{database['PORT']}"
            f"/{database['NAME']}"
        )
    else:
        env["DATABASE_URL"] = f"sqlite:///{database['NAME']}"
    return env


def start_celery_worker(name: str, *, extra_env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start a real `celery worker` named `name` on the test database; return once it answers a ping.

    Waits for this worker by name, so a second worker started in the same test is really up.
    """
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "evalproject",
            "worker",
            "--pool=solo",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "-n",
            f"{name}-{os.getpid()}@%h",
        ],
        cwd=PROJECT_ROOT,
        env={**_worker_environment(), **(extra_env or {})},
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the Celery worker {name} exited at start with status {process.returncode}")
        replies = celery_app.control.ping(timeout=0.5) or []
        if any(name in host for reply in replies for host in reply):
            return process
    process.kill()
    pytest.fail(f"the Celery worker {name} did not answer a ping within 30 s")


def stop_celery_worker(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def celery_worker_process(transactional_db) -> Iterator[subprocess.Popen]:
    """A real `celery worker` process on the Redis of scripts/test, reading the test database.

    Needs CELERY_BROKER_URL. Rows the test writes must be committed for the worker to see them,
    hence `transactional_db`.
    """
    if not settings.CELERY_BROKER_URL:
        pytest.fail("CELERY_BROKER_URL is not set: run the suite through scripts/test")
    celery_app.control.purge()
    process = start_celery_worker("test-worker")
    yield process
    stop_celery_worker(process)
