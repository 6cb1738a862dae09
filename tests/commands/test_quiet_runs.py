"""A normal run prints what the command has to say and no library noise: no httpx request lines, no
kombu warning about a broker hostname when tasks run in-process."""

from __future__ import annotations

import logging

import httpx

from evalproject.celery import app


def test_http_requests_log_no_info_lines(caplog):
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={}))
    with caplog.at_level(logging.INFO), httpx.Client(transport=transport) as client:
        client.get("http://eval.example.org/api/v1/runs/1/metrics/")
    assert [record for record in caplog.records if record.name.startswith(("httpx", "httpcore"))] == []


def test_in_process_tasks_take_a_producer_without_a_kombu_warning(caplog):
    # The suite runs with the embedded default's Celery configuration unless scripts/test sets a broker.
    with caplog.at_level(logging.WARNING), app.connection_for_write() as connection:
        connection.as_uri()
        connection.clone()  # where kombu fills in a missing hostname, with a warning
    assert [record.getMessage() for record in caplog.records if record.name.startswith("kombu")] == []
