#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys

# Commands that evaluate files offline: they sign nothing and serve nothing, so they run without
# SECRET_KEY (settings then use a throwaway key) and need no database service.
OFFLINE_COMMANDS = {"evaluate_spans", "evaluate_extraction", "compare_runs", "gate"}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalproject.settings")
    if len(sys.argv) > 1 and sys.argv[1] in OFFLINE_COMMANDS:
        os.environ.setdefault("EVALPROJECT_OFFLINE", "1")
    from django.conf import settings
    from django.core.management import execute_from_command_line

    from evalproject.env import configuration_errors_exit

    with configuration_errors_exit():
        settings.INSTALLED_APPS  # noqa: B018 (reads the settings: a bad variable stops here, in one line)
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
