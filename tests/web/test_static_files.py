"""The pages' static files are served by the app itself, with DEBUG=0 as in a deployment."""

from __future__ import annotations

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/static/web/style.css", "/static/web/progress.js"])
def test_the_app_serves_its_own_static_files_without_debug(settings, path):
    settings.DEBUG = False

    response = Client().get(path)

    assert response.status_code == 200
    assert b"".join(response.streaming_content)


def test_the_pages_refer_to_no_other_host(bob_browser, spans):
    for url in (
        "/",
        "/projects/letters/",
        f"/runs/{spans.worse}/",
        f"/compare/?a={spans.worse}&b={spans.better}",
    ):
        page = bob_browser.get(url).content.decode()
        sources = re.findall(r'(?:src|href)="([^"]+)"', page)
        assert sources and not [source for source in sources if re.match(r"(https?:)?//", source)], url
