"""Secrets the embedded default generates once and keeps in the project folder (git-ignored).

A first look needs no environment variables: the secret key, and the demo admin's password and token,
are made on first use and read back afterwards, so sessions, signed values, passwords and tokens stay
valid from one run to the next. The folder is settings.LOCAL_SECRETS_DIR, `.local-secrets/` in the project folder (mode 0700), each
file mode 0600.
The team-server mode (DATABASE_URL set) never uses it: there SECRET_KEY comes from the environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

FILE_MODE = 0o600
DIR_MODE = 0o700


def read_or_create(path: Path, make: Callable[[], str]) -> str:
    """The content of `path`; on first use, `make()` written there (mode 0600) and returned.

    Safe when several processes start at once (gunicorn workers, a worker and manage.py): the value is
    written to a temporary file and linked into place, which fails if another process got there first,
    so every process ends up reading the one value that won.
    """
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(handle, FILE_MODE)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(make() + "\n")
        # Another process got there first: its value wins, and is read below.
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
    return path.read_text(encoding="utf-8").strip()


def local_secret_key(directory: Path) -> str:
    """The embedded default's SECRET_KEY: generated once, then reused."""
    path = directory / "secret_key"
    try:
        return read_or_create(path, lambda: secrets.token_urlsafe(50))
    except OSError as error:  # a read-only project folder (an image run as another user)
        raise ImproperlyConfigured(
            f"SECRET_KEY is unset and {path} cannot be created ({error.strerror or error}); set SECRET_KEY"
        ) from None


def read_json(path: Path) -> dict:
    """The JSON object stored at `path`, or an empty one when there is none (or it is unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: dict) -> None:
    """Replace `path` with `data`, mode 0600, atomically."""
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(handle, FILE_MODE)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, indent=2)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
