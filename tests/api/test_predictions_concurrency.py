"""Two clients posting the same batch to one run at the same moment store it once (PostgreSQL)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from experiments.models import PredictedValue, RunDocument
from tests.api.runs_support import (
    EXTRACTION,
    create_run,
    load_extraction_gold,
    prompts_as_run_prompts,
    read_jsonl,
)
from tests.conftest import token_client


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_two_clients_posting_the_same_batch_at_once_store_it_once(project, alice):
    if connection.vendor != "postgresql":
        pytest.fail("this test needs PostgreSQL (row locks): run the suite through scripts/test")
    load_extraction_gold(project)
    run = create_run(token_client(alice), prompts=prompts_as_run_prompts())
    documents = read_jsonl(EXTRACTION / "llm.jsonl")
    clients = [token_client(alice), token_client(alice)]
    barrier = threading.Barrier(len(clients))
    answers: list = [None] * len(clients)

    def post(index: int) -> None:
        try:
            barrier.wait()
            answers[index] = clients[index].post(
                f"/api/v1/runs/{run['id']}/predictions/", {"documents": documents}, format="json"
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(index,)) for index in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [200, 201]
    counts = sorted(tuple(sorted(answer.json()["counts"].items())) for answer in answers)
    assert counts == [
        (("created", 0), ("replaced", 0), ("unchanged", 3)),
        (("created", 3), ("replaced", 0), ("unchanged", 0)),
    ]
    assert RunDocument.objects.filter(run_id=run["id"]).count() == 3
    posted_values = sum(len(document.get("annotations", [])) for document in documents)
    assert PredictedValue.objects.filter(run_document__run_id=run["id"]).count() == posted_values
