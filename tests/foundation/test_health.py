"""/health/ tells an operator whether the database, the broker and a worker answer."""

import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


def test_it_reports_the_database_and_in_process_tasks_on_the_embedded_default(client):
    with override_settings(CELERY_BROKER_URL=""):
        response = client.get("/health/")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["broker"]["mode"] == "in-process"


def test_it_answers_503_when_the_broker_is_unreachable(client):
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0"):
        response = client.get("/health/")
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False


@pytest.mark.worker
def test_it_answers_200_when_a_real_worker_answers(client, celery_worker_process):
    response = client.get("/health/")
    assert response.status_code == 200, response.json()
    assert response.json()["worker"]["workers"]
