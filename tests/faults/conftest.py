"""The fault suite: real PostgreSQL, Redis and Celery workers, and faults done to them.

scripts/test starts the servers (scripts/lib/services.sh) and exports how to stop and start them.
Workers run with the production defaults (no short broker visibility timeout) except for the job
intervals, shortened here so that a scenario takes seconds: each worker beats every second, and its
dispatcher looks every second for jobs silent for 4 seconds.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest
from django.conf import settings
from django.db import connection

from annotations.models import Job, JobState
from evalproject.celery import app as celery_app
from tests.conftest import start_celery_worker, stop_celery_worker

JOB_INTERVALS = {
    "JOB_HEARTBEAT_SECONDS": "1",
    "JOB_STALE_SECONDS": "4",
    "JOB_DISPATCH_SECONDS": "1",
    "JOB_REQUEUE_SECONDS": "20",
}
# The target: a job ends within 2 minutes of the service coming back.
RECOVERY_SECONDS = 120


def _required(name: str) -> str:
    value = os.environ.get(name)
    if value is None:
        pytest.fail(f"{name} is not set: run the fault suite through scripts/test")
    return value


def _as_pg_user(command: list[str]) -> list[str]:
    user = os.environ.get("SERVICES_PG_USER", "")
    return ["runuser", "-u", user, "--", *command] if user else command


class Services:
    """Stop and start the PostgreSQL and Redis of scripts/test."""

    def __init__(self) -> None:
        self.pg_ctl = os.path.join(_required("SERVICES_PG_BINDIR"), "pg_ctl")
        self.pgdata = _required("SERVICES_PGDATA")
        self.pg_options = _required("SERVICES_PG_OPTIONS")
        self.redis_port = _required("SERVICES_REDIS_PORT")
        self.root = _required("SERVICES_ROOT")

    def postgres_stop(self) -> None:
        connection.close()  # ours dies with the server; the next query opens a new one
        subprocess.run(_as_pg_user([self.pg_ctl, "-D", self.pgdata, "-m", "fast", "-w", "stop"]), check=True)

    def postgres_start(self) -> None:
        subprocess.run(
            _as_pg_user(
                [
                    self.pg_ctl,
                    "-D",
                    self.pgdata,
                    "-w",
                    "-l",
                    os.path.join(self.pgdata, "server.log"),
                    "-o",
                    self.pg_options,
                    "start",
                ]
            ),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        connection.close()

    def redis_stop(self) -> None:
        subprocess.run(
            ["redis-cli", "-p", self.redis_port, "shutdown", "nosave"], check=False, capture_output=True
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self._redis_answers():
            time.sleep(0.1)

    def redis_start(self) -> None:
        subprocess.run(
            [
                "redis-server",
                "--port",
                self.redis_port,
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "yes",
                "--dir",
                self.root,
                "--logfile",
                os.path.join(self.root, "redis.log"),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not self._redis_answers():
            time.sleep(0.1)

    def _redis_answers(self) -> bool:
        return (
            subprocess.run(["redis-cli", "-p", self.redis_port, "ping"], capture_output=True).returncode == 0
        )


@pytest.fixture
def services(transactional_db) -> Iterator[Services]:
    if not settings.CELERY_BROKER_URL:
        pytest.fail("CELERY_BROKER_URL is not set: run the fault suite through scripts/test")
    services = Services()
    yield services
    # Whatever happened in the test, the next one finds both servers up.
    if not services._redis_answers():
        services.redis_start()
    if subprocess.run(
        _as_pg_user([services.pg_ctl, "-D", services.pgdata, "status"]), capture_output=True
    ).returncode:
        services.postgres_start()


@pytest.fixture
def shared_media_root(monkeypatch, settings, tmp_path):
    """The worker is another process: it must find uploads where this process saves them."""
    monkeypatch.setenv("MEDIA_ROOT", str(tmp_path / "media"))
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def workers(services, shared_media_root) -> Iterator[Callable[..., subprocess.Popen]]:
    """Start workers with `workers(name, **env)`; every one is stopped at the end."""
    celery_app.control.purge()
    started: list[subprocess.Popen] = []

    def start(name: str, **env: str) -> subprocess.Popen:
        process = start_celery_worker(name, extra_env={**JOB_INTERVALS, **env})
        started.append(process)
        return process

    yield start
    for process in started:
        stop_celery_worker(process)


def wait_for(condition: Callable[[], object], timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = condition()
        except Exception:
            connection.close()  # the database is away; try again on a new connection
            value = None
        if value:
            return value
        time.sleep(0.25)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


def wait_until_finished(job_id: int, *, since: float) -> Job:
    """The job once it is succeeded or failed, within RECOVERY_SECONDS of `since` (a monotonic time)."""
    job = wait_for(
        lambda: Job.objects.filter(pk=job_id, state__in=[JobState.SUCCEEDED, JobState.FAILED]).first(),
        RECOVERY_SECONDS,
        f"job {job_id} to end",
    )
    assert time.monotonic() - since < RECOVERY_SECONDS
    return job
