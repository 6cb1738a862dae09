"""What the metrics app does when a job finishes (annotations.signals.job_finished)."""

from __future__ import annotations

import logging

from annotations.models import Job, JobKind, JobState
from metrics.models import Scoring
from metrics.services.human_ceiling import human_ceiling_store

logger = logging.getLogger("metrics.services.human_ceiling")


def on_job_finished(sender: type[Job], job: Job, **kwargs: object) -> None:
    """A scoring stored: compute the human ceiling's paired tests it takes part in now, so that the
    pages and the API read them instead of computing them per request. A failure here is logged: the
    scoring stands, and the ceiling is computed on its first read instead."""
    if job.kind != JobKind.SCORING or job.state != JobState.SUCCEEDED:
        return
    scoring = (
        Scoring.objects.select_related("run", "gold_version").defer("report").filter(job_id=job.pk).first()
    )
    if scoring is None:
        return
    try:
        human_ceiling_store(scoring=scoring)
    except Exception:
        logger.exception("job %s: the human ceiling of scoring %s was not stored", job.pk, scoring.pk)
