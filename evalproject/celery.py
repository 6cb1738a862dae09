"""The Celery app. Without CELERY_BROKER_URL tasks run in-process (settings.CELERY_TASK_ALWAYS_EAGER)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalproject.settings")

app = Celery("evalproject")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="evalproject.ping")
def ping() -> str:
    """Answered by any live worker; /health/ uses the control channel instead, this is for tests."""
    return "pong"
