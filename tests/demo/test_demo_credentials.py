"""The demo admin's password and token are generated once, kept (mode 0600) and printed on every run."""

from __future__ import annotations

import io
import re
import stat

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from metrics.management.commands.demo import DEMO_ADMIN, demo_admin, demo_admin_token, demo_credentials_path

pytestmark = pytest.mark.django_db


def _credentials(output: str) -> tuple[str, str]:
    password = re.search(r"password: (\S+)", output).group(1)
    token = re.search(r"API token:\s+(\S+)", output).group(1)
    return password, token


def test_a_second_run_keeps_and_prints_the_same_password_and_token():
    user, password = demo_admin()
    token = demo_admin_token(user)

    user_again, password_again = demo_admin()

    assert (user_again.pk, password_again, demo_admin_token(user_again)) == (user.pk, password, token)
    assert authenticate(username=DEMO_ADMIN, password=password) == user
    response = APIClient(HTTP_AUTHORIZATION=f"Token {token}").get("/api/v1/projects/")
    assert response.status_code == 200


def test_the_credentials_file_is_readable_by_its_owner_only():
    demo_admin_token(demo_admin()[0])
    assert stat.S_IMODE(demo_credentials_path().stat().st_mode) == 0o600


def test_a_fresh_database_gets_the_kept_password_again():
    _, password = demo_admin()
    get_user_model().objects.filter(username=DEMO_ADMIN).delete()
    assert demo_admin()[1] == password
    assert authenticate(username=DEMO_ADMIN, password=password) is not None


def test_a_password_changed_since_is_left_alone_and_not_shown():
    user, _ = demo_admin()
    user.set_password("chosen-by-the-admin")
    user.save()
    assert demo_admin()[1] is None
    assert authenticate(username=DEMO_ADMIN, password="chosen-by-the-admin") is not None


def test_a_token_revoked_since_is_replaced():
    user, _ = demo_admin()
    token = demo_admin_token(user)
    user.api_tokens.all().delete()
    replacement = demo_admin_token(user)
    assert replacement != token
    assert APIClient(HTTP_AUTHORIZATION=f"Token {replacement}").get("/api/v1/projects/").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_the_demo_command_prints_the_same_working_credentials_on_every_run():
    first = io.StringIO()
    call_command("demo", port=8123, stdout=first, stderr=io.StringIO())
    second = io.StringIO()
    call_command("demo", port=8123, stdout=second, stderr=io.StringIO())
    assert _credentials(first.getvalue()) == _credentials(second.getvalue())
