"""The fast lane, `pytest -m "not worker"`, leaves out every test that needs a service (tests/conftest.py)."""

from __future__ import annotations

import pytest

from evalproject.celery import app as celery_app
from tests.conftest import pytest_collection_modifyitems


class CollectedTest:
    def __init__(self, *markers: str) -> None:
        self.markers = {name: getattr(pytest.mark, name) for name in markers}
        self.stash = pytest.Stash()

    def get_closest_marker(self, name: str):
        return self.markers.get(name)

    def add_marker(self, marker) -> None:
        self.markers[marker.name] = marker


@pytest.mark.parametrize("service", ["browser", "postgresql", "faults"])
def test_a_test_that_needs_a_service_counts_as_a_worker_test(service):
    collected = CollectedTest(service)
    pytest_collection_modifyitems([collected])
    assert "worker" in collected.markers


def test_a_test_on_sqlite_in_this_process_stays_in_the_fast_lane():
    collected = CollectedTest("django_db")
    pytest_collection_modifyitems([collected])
    assert "worker" not in collected.markers


@pytest.mark.postgresql
def test_a_test_marked_for_its_service_alone_still_runs_its_tasks_in_process():
    assert celery_app.conf.task_always_eager


@pytest.mark.browser
def test_a_browser_test_runs_its_tasks_in_process_too():
    assert celery_app.conf.task_always_eager
