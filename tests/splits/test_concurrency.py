"""Two managers drawing development documents at the same moment: the project row lock serialises them,
so no document is drawn twice and the counts of the audit add up (PostgreSQL)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from experiments.models import SplitAssignment, SplitEvent
from tests.conftest import token_client


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_two_draws_at_once_never_draw_a_document_twice(letters, alice):
    if connection.vendor != "postgresql":
        pytest.fail("this test needs PostgreSQL (row locks): run the suite through scripts/test")
    clients = [token_client(alice), token_client(alice)]
    barrier = threading.Barrier(len(clients))
    answers: list = [None] * len(clients)

    def draw(index: int) -> None:
        try:
            barrier.wait()
            answers[index] = clients[index].post(
                "/api/v1/projects/letters/splits/development/", {"n": 20, "seed": 42}, format="json"
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=draw, args=(index,)) for index in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert [answer.status_code for answer in answers] == [200, 200]
    first, second = (set(answer.json()["moved"]) for answer in answers)
    assert len(first) == len(second) == 20 and not first & second
    assert SplitAssignment.objects.filter(project=letters).count() == 40
    closing = SplitEvent.objects.filter(project=letters, document=None).order_by("id")
    assert [event.counts_after["development"] for event in closing] == [20, 40]
