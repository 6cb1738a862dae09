"""`/projects/<slug>/gold/<a>/diff/<b>/`: the API's gold diff as a page, paged by document, linked from
the project's gold versions; held-back documents never shown."""

from __future__ import annotations

import re

import pytest

from tests.gold_history.support import V1, import_gold, two_versions_with_one_document_held_back
from tests.services.test_gold_import_fixtures import media_root  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media_root")]

PAGE = "/projects/letters/gold/1/diff/2/"
API = "/api/v1/projects/letters/gold/versions/1/diff/2/"


@pytest.fixture
def two_versions(project, alice_client, django_capture_on_commit_callbacks):
    """v1: d1-d3. v2 re-imports d2 (its PHONE is now an ID_NUMBER) and adds d4."""
    import_gold(alice_client, django_capture_on_commit_callbacks, V1)
    import_gold(
        alice_client,
        django_capture_on_commit_callbacks,
        {"d2": [(5, 13, "ID_NUMBER")], "d4": [(4, 11, "PERSON_NAME")]},
    )
    return project


def _documents(page: str) -> list[str]:
    table = page[page.index('data-testid="gold-diff-documents"') :]
    return re.findall(r"<tr><td>([^<]+)</td>", table[: table.index("</table>")])


def test_the_page_shows_the_apis_summary_and_changes(two_versions, bob_browser, bob_client):
    body = bob_client.get(API).json()
    page = bob_browser.get(PAGE).content.decode()

    summary = page[page.index('data-testid="gold-diff-summary"') :]
    summary = summary[: summary.index("</section>")]
    for entity_type, counts in body["summary"]["per_type"].items():
        row = f'<tr><td>{entity_type}</td><td class="num">{counts["added"]}</td><td class="num">{counts["removed"]}</td><td class="num">{counts["changed"]}</td></tr>'
        assert row in summary
    assert "1 document added, 0 removed, 1 changed" in page
    assert _documents(page) == [entry["document_id"] for entry in body["results"]] == ["d2", "d4"]
    assert "~ 5–13 PHONE → ID_NUMBER" in page and "+ 4–11 PERSON_NAME" in page


def test_it_is_paged_by_document_as_the_api_is(two_versions, bob_browser):
    first = bob_browser.get(f"{PAGE}?page_size=1").content.decode()
    next_link = re.search(r'href="([^"]+)" rel="next"', first).group(1).replace("&amp;", "&")
    second = bob_browser.get(next_link).content.decode()

    assert f"{PAGE}?" in next_link and "cursor=" in next_link
    assert _documents(first) + _documents(second) == ["d2", "d4"]
    assert 'rel="prev"' in second


def test_the_gold_versions_list_links_each_version_to_its_diff_from_the_one_before(two_versions, bob_browser):
    versions = bob_browser.get("/projects/letters/").content.decode()
    versions = versions[versions.index('data-testid="gold-versions"') :]

    assert f'href="{PAGE}" data-testid="gold-diff-link">diff from v1</a>' in versions
    assert versions.count('data-testid="gold-diff-link"') == 1


def test_an_unknown_version_is_404_an_unknown_parameter_400_and_an_outsider_sees_nothing(
    two_versions, bob_browser, bob_client, charlie_browser
):
    assert bob_browser.get("/projects/letters/gold/1/diff/9/").status_code == 404
    page = bob_browser.get(f"{PAGE}?kinds=spans")
    assert page.status_code == bob_client.get(f"{API}?kinds=spans").status_code == 400
    assert b"kinds: unknown query parameter" in page.content
    assert charlie_browser.get(PAGE).status_code == 404


def test_held_back_documents_never_appear_in_the_diff(
    project, alice, alice_client, alice_browser, django_capture_on_commit_callbacks
):
    hidden = two_versions_with_one_document_held_back(
        project, alice=alice, alice_client=alice_client, capture_on_commit=django_capture_on_commit_callbacks
    )

    page = alice_browser.get(PAGE).content.decode()

    assert len(_documents(page)) == 2 and hidden not in _documents(page)
    assert f">{hidden}<" not in page and "0 removed, 2 changed" in page
