"""Writes of the metrics app: scoring jobs and what they store."""

from metrics.services.scoring import scoring_request, scoring_run

__all__ = ["scoring_request", "scoring_run"]
