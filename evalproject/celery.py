"""The Celery app. Without CELERY_BROKER_URL tasks run in-process (settings.CELERY_TASK_ALWAYS_EAGER).

Every worker also runs the job dispatcher (annotations.services.jobs.jobs_dispatch) from a daemon
thread, every JOB_DISPATCH_SECONDS: jobs recover with the default commands, with no beat to deploy.
Several workers' dispatchers act at once safely: each step is a conditional UPDATE on the job row.
The same thread deletes the uploads past their retention (annotations.services.uploads.uploads_sweep)
every UPLOADS_SWEEP_SECONDS, so that they go even when no import ends.
"""

import logging
import os
import random
import threading
import time

from celery import Celery
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings

from evalproject.env import configuration_errors_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalproject.settings")
# Read the settings now: a bad variable stops `celery worker` here, in one line, not deep in Celery.
with configuration_errors_exit():
    settings.INSTALLED_APPS  # noqa: B018

app = Celery("evalproject")
app.config_from_object("django.conf:settings", namespace="CELERY")
if not settings.CELERY_BROKER_URL:
    # In-process tasks still take a producer from Celery's pool when sent; the in-memory transport
    # gives it one, where an empty URL made kombu guess an AMQP broker on localhost (with a warning).
    app.conf.broker_url = "memory://localhost/"
app.autodiscover_tasks()

logger = logging.getLogger("annotations.jobs")
_dispatcher_stop = threading.Event()


@app.task(name="evalproject.ping")
def ping() -> str:
    """Answered by any live worker; /health/ uses the control channel instead, this is for tests."""
    return "pong"


@worker_ready.connect
def start_job_dispatcher(**_) -> None:
    _dispatcher_stop.clear()
    threading.Thread(target=_dispatch_forever, name="job-dispatcher", daemon=True).start()


@worker_shutdown.connect
def stop_job_dispatcher(**_) -> None:
    _dispatcher_stop.set()


def _dispatch_forever() -> None:
    from django.conf import settings
    from django.db import connection

    from annotations.services.jobs import jobs_dispatch

    interval = settings.JOB_DISPATCH_SECONDS
    swept_at = None
    # A random first wait spreads the passes of workers started together.
    while not _dispatcher_stop.wait(interval * random.uniform(0.5, 1.0)):
        try:
            report = jobs_dispatch()
            if report.sent or report.requeued or report.failed:
                logger.info("job dispatcher: %s", report)
        except Exception:
            # The database or the broker is away: the next pass tries again.
            logger.warning("job dispatcher pass failed", exc_info=True)
        try:
            swept_at = uploads_sweep_when_due(swept_at)
        finally:
            # No connection is kept between passes: the database may restart in between.
            connection.close()


def uploads_sweep_when_due(swept_at: float | None) -> float | None:
    """Run `uploads_sweep` if UPLOADS_SWEEP_SECONDS have passed since `swept_at` (a `time.monotonic()`
    reading; None: never swept, so now); returns the reading of the last sweep that ran."""
    from annotations.services.uploads import uploads_sweep

    now = time.monotonic()
    if swept_at is not None and now - swept_at < settings.UPLOADS_SWEEP_SECONDS:
        return swept_at
    try:
        uploads_sweep()
    except Exception:
        # The database is away: the next pass tries again.
        logger.warning("uploads sweep failed", exc_info=True)
        return swept_at
    return now
