"""Signals of the annotations app, for apps above it that must react without being imported here."""

from django.dispatch import Signal

# Sent once per job, after the transaction that moved the job to `succeeded` or `failed` has committed.
# Keyword argument: job (annotations.models.Job).
job_finished = Signal()
