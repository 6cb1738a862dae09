"""Schemathesis against the live OpenAPI description: no operation answers a 5xx.

The schema is read from `/api/schema/` of the WSGI application itself, and every operation is called
with examples generated from it (valid and not), as alice, who manages the projects the paths name.
Examples are bounded so the whole run stays under two minutes on a busy machine.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from annotations.services import api_token_create
from tests.api.test_no_server_errors import runs  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db

EXAMPLES_PER_OPERATION = 5


@pytest.fixture
def requests_keep_the_test_connection(runs) -> Iterator[None]:  # noqa: F811
    """The app runs in-process: as with Django's test client, a request must not close the test's
    database connection, whose transaction holds every row (PostgreSQL would lose them). After `runs`,
    whose test-client requests connect the signals again."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def alice_token(alice) -> str:
    _, key = api_token_create(user=alice)
    return key


# Read at collection: the schema view needs no database. (A lazy `from_fixture` schema would let the
# fixtures come first, but it does not run under pytest 9.)
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())


def pin_path_parameters(case, runs: dict[str, int]) -> None:  # noqa: F811
    """Point the paths at alice's objects: generated slugs and ids would only ever reach a 404."""
    parameters = case.path_parameters or {}
    if "slug" in parameters:
        parameters["slug"] = "split" if "/splits/" in case.path else "letters"
    if "run_id" in parameters:
        writes = case.method.upper() == "POST" and not case.path.endswith(("/gate/", "/rescore/"))
        parameters["run_id"] = runs["attribute_run"] if writes else runs["scored_run"]
    if "job_id" in parameters:
        parameters["job_id"] = runs["scoring_job"]
    if "webhook_id" in parameters:
        parameters["webhook_id"] = runs["webhook"]


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
def test_no_operation_answers_a_server_error(
    case,
    runs,  # noqa: F811
    alice_token,
    requests_keep_the_test_connection,
):
    pin_path_parameters(case, runs)

    case.call_and_validate(headers={"Authorization": f"Token {alice_token}"}, checks=[not_a_server_error])
