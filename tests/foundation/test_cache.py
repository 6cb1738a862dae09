"""With CACHE_URL set and Redis away, the API keeps answering: throttles and the lockout fail open."""

import pytest
from django.test import override_settings

from tests.conftest import token_client

pytestmark = pytest.mark.django_db

UNREACHABLE = {
    "default": {
        "BACKEND": "evalproject.cache.FailOpenRedisCache",
        "LOCATION": "redis://127.0.0.1:1/1",
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }
}


def test_requests_are_served_while_the_cache_is_unreachable(alice):
    client = token_client(alice)
    with override_settings(CACHES=UNREACHABLE):  # Django rebuilds its cache handlers on this change
        assert client.get("/api/v1/projects/").status_code == 200
        bad = token_client(alice)
        bad.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")
        assert bad.get("/api/v1/projects/").status_code == 401
