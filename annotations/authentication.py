"""`Authorization: Token <key>`: hashed, expiring, optionally read-only API tokens.

Failed tokens are counted per client address (evalproject.lockout): after AUTH_LOCKOUT_FAILURES
failures in AUTH_LOCKOUT_SECONDS, the address gets 429 with Retry-After, even for a valid token,
until the window ends; guessing keys is then too slow to matter.
"""

from __future__ import annotations

from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication, get_authorization_header

from annotations.models import ApiToken
from evalproject.lockout import TOKEN, failure_record, lockout_seconds_left


class HashedTokenAuthentication(TokenAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        # Only requests that present a token are held back: a locked-out address can still read
        # the pages that need no credentials.
        presented = get_authorization_header(request).split()[:1]
        if presented and presented[0].lower() == self.keyword.lower().encode():
            seconds = lockout_seconds_left(TOKEN, request)
            if seconds:
                raise exceptions.Throttled(
                    wait=seconds, detail="Too many failed token attempts from this address."
                )
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            failure_record(TOKEN, request)
            raise

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
