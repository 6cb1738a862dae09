"""Queueing Celery work from services."""

from __future__ import annotations

from django.db import transaction


def enqueue_after_commit(task, *args, **kwargs) -> None:
    """Send `task` once the current transaction commits.

    A worker that picks the task up before the commit would not see the rows it is meant to work on;
    after a rollback there is nothing to do. In the embedded default (no broker) the task runs
    in-process at that point. Tests in a non-transactional `db` fixture must use
    `django_capture_on_commit_callbacks(execute=True)` to see it run.
    """
    transaction.on_commit(lambda: task.delay(*args, **kwargs))
