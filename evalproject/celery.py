"""The Celery app. Without CELERY_BROKER_URL tasks run in-process (settings.CELERY_TASK_ALWAYS_EAGER).

Every worker also runs the job dispatcher (annotations/dispatcher.py) from a daemon thread.
"""

import os

from celery import Celery
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


@app.task(name="evalproject.ping")
def ping() -> str:
    """Answered by any live worker; /health/ uses the control channel instead, this is for tests."""
    return "pong"
