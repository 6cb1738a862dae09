"""A small lockout after repeated failed authentication from one client address.

Two counters per client address, in Django's cache: failed API tokens (`token`) and failed
password logins (`login`, counted from `django.contrib.auth`'s `user_login_failed` signal, so every
login form that authenticates through Django is covered: the admin's and `/accounts/login/`).
After AUTH_LOCKOUT_FAILURES failures within AUTH_LOCKOUT_SECONDS the address is refused with
429 and Retry-After until the window that began with its first failure ends.

The client address is DRF's throttle identity (REMOTE_ADDR, or X-Forwarded-For behind NUM_PROXIES
trusted proxies), so a client cannot pick a fresh address by sending a header.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from rest_framework.throttling import BaseThrottle

TOKEN = "token"
LOGIN = "login"


def client_address(request: HttpRequest) -> str:
    return BaseThrottle().get_ident(request) or "unknown"


def _keys(scope: str, request: HttpRequest) -> tuple[str, str]:
    address = client_address(request)
    return f"auth-failures:{scope}:{address}", f"auth-failures:{scope}:{address}:until"


def failure_record(scope: str, request: HttpRequest) -> None:
    """Count one failed attempt; the first failure of a window opens it."""
    window = settings.AUTH_LOCKOUT_SECONDS
    count_key, until_key = _keys(scope, request)
    cache.add(until_key, time.time() + window, timeout=window)
    # add-then-incr is atomic on Redis, so concurrent failures are all counted.
    cache.add(count_key, 0, timeout=window)
    try:
        cache.incr(count_key)
    except ValueError:  # the window ended between add and incr: this failure opens a new one
        cache.add(count_key, 1, timeout=window)


def lockout_seconds_left(scope: str, request: HttpRequest) -> int:
    """How long `request`'s address stays locked out of `scope`; 0 when it is not locked out."""
    count_key, until_key = _keys(scope, request)
    if (cache.get(count_key) or 0) < settings.AUTH_LOCKOUT_FAILURES:
        return 0
    until = cache.get(until_key)
    if until is None:
        return 0
    return max(1, int(until - time.time() + 0.999))


@receiver(user_login_failed, dispatch_uid="evalproject.lockout.count_login_failure")
def _count_login_failure(sender, credentials, request=None, **kwargs) -> None:
    if request is not None:
        failure_record(LOGIN, request)


class LockoutModelBackend(ModelBackend):
    """Django's username and password backend, which checks no password while an address is locked out.

    Raising PermissionDenied stops `authenticate()`: even the right password is refused until the
    window ends, which is what makes guessing pointless.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is not None and lockout_seconds_left(LOGIN, request):
            raise PermissionDenied("too many failed logins from this address")
        return super().authenticate(request, username=username, password=password, **kwargs)


class LoginLockoutMiddleware:
    """Answer a login form's POST with 429 and Retry-After while the address is locked out.

    The backend already refuses the login; this tells the person why, and when to try again.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        if request.method == "POST" and request.path.rstrip("/").endswith("/login"):
            seconds = lockout_seconds_left(LOGIN, request)
            if seconds:
                response = HttpResponse(
                    f"Too many failed logins from this address. Try again in {seconds} seconds.\n",
                    status=429,
                    content_type="text/plain",
                )
                response["Retry-After"] = str(seconds)
                return response
        return self.get_response(request)
