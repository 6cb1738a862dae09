"""/health/ tells an operator whether the database, the broker and a worker answer.

Anyone gets "ok" or "fail" per component; only a staff user sees the details (errors, worker names).
"""

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    staff = get_user_model().objects.create_user(username="operator", password="x", is_staff=True)
    client.force_login(staff)
    return client


def test_it_reports_the_database_and_in_process_tasks_on_the_embedded_default(staff_client):
    with override_settings(CELERY_BROKER_URL=""):
        response = staff_client.get("/health/")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["broker"]["mode"] == "in-process"


def test_an_anonymous_caller_sees_only_ok_or_fail_per_component(client):
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0"):
        response = client.get("/health/")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "database": "ok",
        "broker": "fail",
        "worker": "fail",
    }


def test_a_member_who_is_not_staff_sees_no_details_either(client, alice):
    client.force_login(alice)
    with override_settings(CELERY_BROKER_URL=""):
        response = client.get("/health/")
    assert response.json() == {"status": "ok", "database": "ok", "broker": "ok", "worker": "ok"}


def test_it_answers_503_with_the_broker_error_to_staff(staff_client):
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0"):
        response = staff_client.get("/health/")
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False
    assert response.json()["broker"]["error"]


@pytest.mark.worker
def test_it_answers_200_when_a_real_worker_answers(staff_client, celery_worker_process):
    response = staff_client.get("/health/")
    assert response.status_code == 200, response.json()
    assert response.json()["worker"]["workers"]
