"""`/`: the user's projects, each with its kind, documents, current gold version and latest run."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db


def test_it_lists_each_of_bobs_projects_with_kind_documents_gold_and_latest_run(
    bob_browser, spans, attributes
):
    page = bob_browser.get("/").content.decode()

    assert 'href="/projects/letters/"' in page and 'href="/projects/trials/"' in page
    assert "spans" in page and "attributes" in page
    assert f'href="/runs/{spans.better}/"' in page and "perfect tagger" in page
    assert f'href="/runs/{attributes.better}/"' in page and "large model" in page
    assert ">v1<" in page


def test_charlie_sees_none_of_the_projects_he_is_not_a_member_of(charlie_browser, spans):
    page = charlie_browser.get("/").content.decode()

    assert "/projects/letters/" not in page
    assert "not a member of any project" in page


def test_the_list_costs_the_same_queries_for_one_project_or_two(bob_browser, spans, attributes):
    with CaptureQueriesContext(connection) as two_projects:
        bob_browser.get("/")
    attributes.project.memberships.filter(user__username="bob").delete()
    with CaptureQueriesContext(connection) as one_project:
        bob_browser.get("/")

    assert len(two_projects) == len(one_project)
