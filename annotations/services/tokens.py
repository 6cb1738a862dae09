"""Writes for API tokens."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotations.models import ApiToken


@transaction.atomic
def api_token_create(
    *, user: AbstractBaseUser, name: str = "", read_only: bool = False, expires_days: int | None = None
) -> tuple[ApiToken, str]:
    """Create a token and return it with its key. The key is shown once: only its hash is stored."""
    if expires_days is not None and expires_days <= 0:
        raise ValueError("expires_days must be a positive number of days")
    key = secrets.token_urlsafe(32)
    # A key starting with "-" reads as an option on a command line (`gate --token KEY` fails to
    # parse), one key in 64: draw again.
    while key.startswith("-"):
        key = secrets.token_urlsafe(32)
    token = ApiToken(
        user=user,
        name=name,
        key_hash=ApiToken.hash_key(key),
        prefix=key[:8],
        read_only=read_only,
        expires_at=timezone.now() + timedelta(days=expires_days) if expires_days else None,
    )
    token.full_clean()
    token.save()
    return token, key
