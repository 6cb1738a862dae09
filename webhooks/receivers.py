"""What the webhooks app does when something happens below it."""

from __future__ import annotations

import logging

from annotations.models import Job
from webhooks.services import webhooks_notify_job_finished

logger = logging.getLogger(__name__)


def on_job_finished(sender: type[Job], job: Job, **kwargs: object) -> None:
    """Queue the job's event to the project's webhooks.

    A failure here (e.g. the broker is down) is logged and swallowed: the job has ended and committed,
    and a notification must not turn its end into an error.
    """
    try:
        webhooks_notify_job_finished(job=job)
    except Exception:
        logger.exception("could not queue the webhooks of job %s", job.pk)
