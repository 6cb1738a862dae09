"""gunicorn reads this file from the working directory (the project folder) at start-up."""

import os


def on_starting(server) -> None:
    """Read the settings in the master, before any worker forks: a bad variable stops gunicorn with
    one line naming it and exit status 2, instead of every worker failing to boot with a traceback."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalproject.settings")
    from django.conf import settings

    from evalproject.env import configuration_errors_exit

    with configuration_errors_exit():
        settings.INSTALLED_APPS  # noqa: B018
