"""Django's Redis cache, failing open: while Redis is away, reads miss and writes are dropped.

The cache holds only the throttle and lockout counters. Losing them for a while lets a few more
requests through; raising would turn every API request into a 500 while Redis restarts, which is
the fault the job outbox exists to ride out. Each failure is logged as a warning.
"""

from __future__ import annotations

import logging

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)
_UNAVAILABLE = (RedisConnectionError, RedisTimeoutError, OSError)


class FailOpenRedisCache(RedisCache):
    def _unavailable(self, operation: str) -> None:
        logger.warning("cache %s skipped: Redis is unavailable", operation, exc_info=True)

    def get(self, key, default=None, version=None):
        try:
            return super().get(key, default, version)
        except _UNAVAILABLE:
            self._unavailable("get")
            return default

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            return super().add(key, value, timeout, version)
        except _UNAVAILABLE:
            self._unavailable("add")
            return False

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            super().set(key, value, timeout, version)
        except _UNAVAILABLE:
            self._unavailable("set")

    def incr(self, key, delta=1, version=None):
        try:
            return super().incr(key, delta, version)
        except _UNAVAILABLE:
            self._unavailable("incr")
            return delta
