"""Fixtures of the page tests: the stories of tests/web/support.py, and a logged-in browser client."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.web.support import attribute_story, held_back_story, span_story


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
