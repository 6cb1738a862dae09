"""evalproject: a team-shared evaluation server for LLM pipelines."""

from evalproject.celery import app as celery_app

__all__ = ("celery_app",)
