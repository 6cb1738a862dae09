"""Settings, from environment variables only. See README.md, "Configuration".

Unset DATABASE_URL and CELERY_BROKER_URL give the embedded default: a SQLite file in the project
folder and Celery tasks run in-process, so a first look needs no services.
"""

from __future__ import annotations

import os
import secrets
import warnings
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from evalproject.env import database_from_url, env_bool, env_int, env_list, env_size

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", default=False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if DEBUG:
        SECRET_KEY = "insecure-development-key-used-only-with-DEBUG=1"
    elif env_bool("EVALPROJECT_OFFLINE"):
        # Set by manage.py for the offline evaluation commands, which sign nothing.
        SECRET_KEY = secrets.token_urlsafe(50)
    else:
        raise ImproperlyConfigured("SECRET_KEY is required unless DEBUG=1")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotations",
    "experiments",
    "metrics",
    "web",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files (the pages' CSS and JS, Swagger UI) from the app itself, with DEBUG=0 too.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "evalproject.middleware.RequestIdMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "evalproject.urls"
WSGI_APPLICATION = "evalproject.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "evalproject" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url(
        os.environ.get("DATABASE_URL") or "sqlite:///evalproject.sqlite3",
        base_dir=BASE_DIR,
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
# The embedded default runs without collectstatic: whitenoise serves the apps' static folders directly
# (and then has no STATIC_ROOT to read, which is not worth a warning at every start).
WHITENOISE_USE_FINDERS = True
warnings.filterwarnings("ignore", message="No directory at: ", category=UserWarning)

# The web pages (web/): session login; every page sends anonymous users here.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "web:home"
LOGOUT_REDIRECT_URL = "login"
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "media"))

# Uploads: the limit applies to one uploaded file (an import); bigger requests get 413.
UPLOAD_MAX_BYTES = env_size("UPLOAD_MAX_BYTES", 200 * 1024**2)
DATA_UPLOAD_MAX_MEMORY_SIZE = env_size("DATA_UPLOAD_MAX_MEMORY_SIZE", 64 * 1024**2)
FILE_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024**2
# Zip archives: caps on what one archive may expand to (zip bombs).
ARCHIVE_MAX_UNCOMPRESSED_BYTES = env_size("ARCHIVE_MAX_UNCOMPRESSED_BYTES", 2 * 1024**3)
ARCHIVE_MAX_RATIO = env_int("ARCHIVE_MAX_RATIO", 200, minimum=1)

# Celery. No broker: tasks run in-process (the embedded default), eagerly and with errors raised.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", CELERY_BROKER_URL or None)
# A task is acknowledged after it ran, so a worker killed mid-task leaves it to be redelivered.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1)
}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "annotations.authentication.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "annotations.permissions.ReadOnlyTokenCannotWrite",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "evalproject.pagination.KeysetPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "evalproject.api.exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "evalproject API",
    "DESCRIPTION": "Score LLM de-identification and data-extraction pipelines against versioned gold.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The sidecar serves Swagger UI from our own static files: the docs work offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
