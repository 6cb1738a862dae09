"""The job dispatcher: every Celery worker runs it from a daemon thread (connected in
`AnnotationsConfig.ready`, which every worker runs when it sets up Django).

Every JOB_DISPATCH_SECONDS it runs `annotations.services.jobs.jobs_dispatch`: jobs recover with the
default commands, with no beat to deploy. Several workers' dispatchers act at once safely: each step is
a conditional UPDATE on the job row. The same thread deletes the uploads past their retention
(`annotations.services.uploads.uploads_sweep`) every UPLOADS_SWEEP_SECONDS, so that they go even when
no import ends.
"""

from __future__ import annotations

import logging
import random
import threading
import time

from django.conf import settings
from django.db import connection

from annotations.services.jobs import jobs_dispatch
from annotations.services.uploads import uploads_sweep

logger = logging.getLogger("annotations.jobs")
_dispatcher_stop = threading.Event()


def start_job_dispatcher(**_) -> None:
    _dispatcher_stop.clear()
    threading.Thread(target=_dispatch_forever, name="job-dispatcher", daemon=True).start()


def stop_job_dispatcher(**_) -> None:
    _dispatcher_stop.set()


def _dispatch_forever() -> None:
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
