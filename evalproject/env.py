"""Reading settings from environment variables, failing loudly on a bad value.

Every helper raises ImproperlyConfigured naming the variable and the value it could not use, so a
typo in a deployment stops the process at start-up instead of surfacing as odd behaviour later.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use 1/0, true/false, yes/no or on/off")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (compared without case), e.g. a log level."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().upper() if all(choice.isupper() for choice in choices) else raw.strip()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={raw!r} is not one of {', '.join(choices)}")
    return value


def env_header_pair(name: str) -> tuple[str, str] | None:
    """`HEADER,value` (e.g. `X-Forwarded-Proto,https`) as Django's META pair, or None when unset.

    The form of SECURE_PROXY_SSL_HEADER: requests whose HEADER has this value count as HTTPS.
    """
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    header, comma, value = raw.partition(",")
    header, value = header.strip(), value.strip()
    if not comma or not header or not value or " " in header:
        raise ImproperlyConfigured(f"{name}={raw!r} is not HEADER,value; use e.g. X-Forwarded-Proto,https")
    meta_name = header.upper().replace("-", "_")
    return (meta_name if meta_name.startswith("HTTP_") else f"HTTP_{meta_name}", value)


def env_origins(name: str) -> list[str]:
    """A comma-separated list of origins, each with its scheme: `https://eval.example.org`."""
    origins = env_list(name, [])
    for origin in origins:
        scheme, separator, host = origin.partition("://")
        if scheme not in ("http", "https") or not separator or not host:
            raise ImproperlyConfigured(
                f"{name}={os.environ[name]!r}: {origin!r} is not an origin; use e.g. https://eval.example.org"
            )
    return origins


def env_rate(name: str, default: str) -> str:
    """A DRF throttle rate: `N/s`, `N/min`, `N/hour` or `N/day`."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    count, slash, period = raw.strip().partition("/")
    if not slash or not count.isdigit() or period[:1] not in ("s", "m", "h", "d"):
        raise ImproperlyConfigured(f"{name}={raw!r} is not a rate; use e.g. 120/min, 10/s, 5000/hour")
    return raw.strip()


@contextmanager
def configuration_errors_exit() -> Iterator[None]:
    """Turn a bad setting into one line on stderr naming it, and exit status 2 (no traceback).

    Wraps the start of every entry point (manage.py, the WSGI application, the Celery app): settings
    are read there, and an operator who mistyped a variable needs its name, not 30 lines of stack.
    """
    try:
        yield
    except ImproperlyConfigured as error:
        print(f"configuration error: {error}", file=sys.stderr)
        raise SystemExit(2) from None


def env_size(name: str, default: int) -> int:
    """A byte size: a plain integer, or with a K/M/G suffix (binary multiples), e.g. `200M`."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    text = raw.strip().upper().removesuffix("B")
    multipliers = {"K": 1024, "M": 1024**2, "G": 1024**3}
    factor = multipliers.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in multipliers else text
    try:
        value = int(number) * factor
    except ValueError:
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not a size; use bytes or a K/M/G suffix, e.g. 200M"
        ) from None
    if value <= 0:
        raise ImproperlyConfigured(f"{name}={raw!r} must be positive")
    return value


def database_from_url(url: str, *, base_dir: Path) -> dict:
    """Translate DATABASE_URL into a Django DATABASES entry.

    Supported: `postgres://user:password@host:port/name` (also `postgresql://`) and
    `sqlite:///relative/or/absolute/path.sqlite3` (`sqlite:////abs/path` for an absolute path).
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        raw_path = unquote(parts.path)
        if raw_path in ("", "/"):
            raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no SQLite file")
        # urlsplit keeps the slash after the authority: "/rel/path" is relative, "//abs/path" absolute.
        path = Path(raw_path[1:])
        if not path.is_absolute():
            path = base_dir / path
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(path),
            # The embedded default serves a web process and in-process tasks from one file; waiting
            # for a lock beats failing with "database is locked".
            "OPTIONS": {"timeout": 30, "transaction_mode": "IMMEDIATE"},
        }
    if scheme in ("postgres", "postgresql", "pgsql"):
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no database")
        options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        try:
            port = parts.port
        except ValueError:
            raise ImproperlyConfigured(f"DATABASE_URL={url!r} has an invalid port") from None
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(port or ""),
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": options,
        }
    raise ImproperlyConfigured(
        f"DATABASE_URL={url!r} has an unsupported scheme {scheme!r}; use postgres://... or sqlite:///..."
    )
