"""Fixtures of the page tests: the stories of tests/web/support.py, and a logged-in browser client."""

from __future__ import annotations

import os

import pytest
from django.core.cache import cache
from django.test import Client

from tests.web.support import attribute_story, held_back_story, span_story

# Playwright's sync API keeps an event loop on the main thread for the whole session, and Django
# refuses database calls from a thread with a running loop. The browser tests touch the database only
# from the test itself and live_server's thread (no concurrent use), which is the case pytest-playwright
# documents for Django.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests run last in the session (after pytest-django's own ordering).

    Playwright keeps its driver, and a thread watching it, for the rest of the session; tests that
    fork (metrics.engine.forking.can_fork) need the process to have one thread.
    """
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright launches Debian's chromium (scripts/test installs it), never a downloaded build."""
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(autouse=True)
def _empty_cache():
    """Counts are cached per scoring id, and ids repeat across tests on SQLite."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def commit(django_capture_on_commit_callbacks):
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def spans(project, alice_client, commit):
    return span_story(project, alice_client, commit)


@pytest.fixture
def attributes(alice, bob, alice_client, commit):
    return attribute_story(alice, bob, alice_client, commit)


@pytest.fixture
def held_back(alice, alice_client, commit):
    return held_back_story(alice, alice_client, commit)


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice_browser(alice) -> Client:
    return logged_in(alice)


@pytest.fixture
def bob_browser(bob) -> Client:
    return logged_in(bob)


@pytest.fixture
def charlie_browser(charlie) -> Client:
    return logged_in(charlie)
