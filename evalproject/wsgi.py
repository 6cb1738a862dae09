import os

from django.core.wsgi import get_wsgi_application

from evalproject.env import configuration_errors_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalproject.settings")
with configuration_errors_exit():
    application = get_wsgi_application()
