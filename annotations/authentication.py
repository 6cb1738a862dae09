"""`Authorization: Token <key>`: hashed, expiring, optionally read-only API tokens."""

from __future__ import annotations

from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from annotations.models import ApiToken


class HashedTokenAuthentication(TokenAuthentication):
    keyword = "Token"

    def authenticate_credentials(self, key: str):
        token = ApiToken.objects.select_related("user").filter(key_hash=ApiToken.hash_key(key)).first()
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if token.expires_at is not None and token.expires_at <= timezone.now():
            raise exceptions.AuthenticationFailed("Token expired.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        # One UPDATE, no read-modify-write: concurrent requests with one token do not conflict.
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
        return token.user, token
