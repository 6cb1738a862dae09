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

from evalproject.env import (
    database_from_url,
    env_bool,
    env_choice,
    env_header_pair,
    env_int,
    env_list,
    env_origins,
    env_rate,
    env_size,
)
from evalproject.local_secrets import local_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", default=False)

# --- Secret key and hosts (ops) -------------------------------------------------------------------
# The embedded default (no DATABASE_URL) needs no variable: its secret key is generated once into the
# git-ignored .local-secrets/ folder and reused. A team server (DATABASE_URL set) must set SECRET_KEY,
# the same on every web process and worker.
EMBEDDED_DEFAULT = not os.environ.get("DATABASE_URL")
LOCAL_SECRETS_DIR = BASE_DIR / ".local-secrets"
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if DEBUG:
        SECRET_KEY = "insecure-development-key-used-only-with-DEBUG=1"
    elif env_bool("EVALPROJECT_OFFLINE"):
        # Set by manage.py for the offline evaluation commands, which sign nothing.
        SECRET_KEY = secrets.token_urlsafe(50)
    elif EMBEDDED_DEFAULT:
        SECRET_KEY = local_secret_key(LOCAL_SECRETS_DIR)
    else:
        raise ImproperlyConfigured("SECRET_KEY is required when DATABASE_URL is set (or with DEBUG=1)")

# The embedded default serves this machine only (scripts/demo: 127.0.0.1:8000).
ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG or EMBEDDED_DEFAULT else []
)
CSRF_TRUSTED_ORIGINS = env_origins("CSRF_TRUSTED_ORIGINS")
# --- end: secret key and hosts --------------------------------------------------------------------

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
    "webhooks",
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
    "evalproject.lockout.LoginLockoutMiddleware",
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

# Django's model backend, which checks no password while an address is locked out (evalproject.lockout).
AUTHENTICATION_BACKENDS = ["evalproject.lockout.LockoutModelBackend"]

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
# Uploaded files hold patient data: they are deleted when their import job ends (0), or kept this many
# hours after it for inspection and then deleted by `uploads_sweep` (docs/data-lifecycle.md).
UPLOAD_RETENTION_HOURS = env_int("UPLOAD_RETENTION_HOURS", 0, minimum=0)
# Every worker's dispatcher thread runs that sweep this often (annotations/dispatcher.py).
UPLOADS_SWEEP_SECONDS = env_int("UPLOADS_SWEEP_SECONDS", 600, minimum=1)

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

# Jobs recover without the broker's visibility timeout (docs/operations.md, "How jobs recover"): a
# running job's worker beats every JOB_HEARTBEAT_SECONDS; every worker's dispatcher looks every
# JOB_DISPATCH_SECONDS for running jobs silent for JOB_STALE_SECONDS (re-queued, up to JOB_MAX_ATTEMPTS
# attempts) and for queued jobs whose message was never sent, or not taken for JOB_REQUEUE_SECONDS.
JOB_HEARTBEAT_SECONDS = env_int("JOB_HEARTBEAT_SECONDS", 10, minimum=1)
JOB_STALE_SECONDS = env_int("JOB_STALE_SECONDS", 60, minimum=2)
JOB_DISPATCH_SECONDS = env_int("JOB_DISPATCH_SECONDS", 15, minimum=1)
JOB_REQUEUE_SECONDS = env_int("JOB_REQUEUE_SECONDS", 60, minimum=1)
JOB_MAX_ATTEMPTS = env_int("JOB_MAX_ATTEMPTS", 5, minimum=1)
# A task that meets a database error (restart, failover) retries this many times with backoff.
JOB_DATABASE_RETRIES = env_int("JOB_DATABASE_RETRIES", 6, minimum=0)
# A job lists this many warnings (and errors); the rest are counted in a last one.
JOB_PROBLEMS_LISTED = env_int("JOB_PROBLEMS_LISTED", 100, minimum=1)
# Webhooks: each attempt waits at most WEBHOOK_TIMEOUT_SECONDS; a failed one is retried after
# WEBHOOK_RETRY_SECONDS, doubled each time, WEBHOOK_MAX_ATTEMPTS attempts in all.
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 5, minimum=1)
WEBHOOK_RETRY_SECONDS = env_int("WEBHOOK_RETRY_SECONDS", 30, minimum=1)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 5, minimum=1)
# The URL people and programs reach the server at (e.g. https://eval.example.org): links in webhook
# events are absolute under it, and paths (/api/v1/jobs/7/) when it is empty.
PUBLIC_BASE_URL = os.environ.get("PUBLIC_BASE_URL", "")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "annotations.authentication.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "annotations.permissions.ReadOnlyTokenCannotWrite",
    ],
    # JSON only (imports add multipart), through the parser that refuses what the database would.
    "DEFAULT_PARSER_CLASSES": ["evalproject.parsers.BoundedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "evalproject.renderers.JSONAnswerRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_SCHEMA_CLASS": "evalproject.api.ApiSchema",
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
    # One name per choice set that several serializers share.
    "ENUM_NAME_OVERRIDES": {
        "RunKindEnum": "experiments.models.RunKind",
        "RunSourceEnum": "experiments.models.RunSource",
        "RunStatusEnum": "experiments.models.RunStatus",
    },
}

# --- Deployment hardening (ops) ------------------------------------------------------------------
# Production behind HTTPS sets these (README.md "Configuration", docs/operations.md "Production
# settings"); `manage.py check --deploy` is then clean. Defaults suit plain HTTP on one machine.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", default=False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", default=False)
# Trusted only when set: a proxy that does not overwrite the header would let any client claim HTTPS.
SECURE_PROXY_SSL_HEADER = env_header_pair("SECURE_PROXY_SSL_HEADER")
USE_X_FORWARDED_HOST = env_bool("USE_X_FORWARDED_HOST", default=False)
# How many proxies in front of the app append to X-Forwarded-For; 0 uses the peer's address. The
# throttles and the lockout identify clients by this address.
NUM_PROXIES = env_int("NUM_PROXIES", 0, minimum=0)

# The cache holds the throttle and lockout counters. Every web process should share them: set
# CACHE_URL to a Redis database of its own (not the broker's: clearing a cache empties its database).
# Unset, each process counts in its own memory, which is right for the embedded default's one process.
CACHE_URL = os.environ.get("CACHE_URL", "")
if CACHE_URL and not CACHE_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ImproperlyConfigured(f"CACHE_URL={CACHE_URL!r} is not a Redis URL; use e.g. redis://host:6379/1")
CACHES = {
    "default": (
        {
            # Fails open: Redis away means no counting for a while, never a 500 (evalproject.cache).
            "BACKEND": "evalproject.cache.FailOpenRedisCache",
            "LOCATION": CACHE_URL,
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Failed API tokens and failed logins, per client address: this many in this window lock it out.
AUTH_LOCKOUT_FAILURES = env_int("AUTH_LOCKOUT_FAILURES", 10, minimum=1)
AUTH_LOCKOUT_SECONDS = env_int("AUTH_LOCKOUT_SECONDS", 300, minimum=1)

REST_FRAMEWORK |= {
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    # Generous for pipelines posting predictions in batches; tight for callers without credentials.
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_rate("API_THROTTLE_ANON", "60/min"),
        "user": env_rate("API_THROTTLE_USER", "6000/min"),
    },
    "NUM_PROXIES": NUM_PROXIES,
}
# --- end: deployment hardening --------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {
        "handlers": ["console"],
        "level": env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")),
    },
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # One INFO line per HTTP request the client makes: noise on a command's normal run.
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        # "Task ... succeeded" and the steps of a scoring belong in a worker's log; in-process tasks (no
        # broker) report through the command or request that ran them.
        **(
            {}
            if CELERY_BROKER_URL
            else {name: {"level": "WARNING"} for name in ("celery.app.trace", "metrics.scoring")}
        ),
    },
}
