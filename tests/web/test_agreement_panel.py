"""The project page shows the latest agreement between annotators, as
`GET /api/v1/projects/{slug}/agreement/` serves it."""

from __future__ import annotations

import pytest

from tests.agreement.test_agreement_api import compute
from tests.agreement.test_several_annotators_import import import_export
from tests.services.test_gold_import_fixtures import media_root  # noqa: F401 (a fixture)
from web.formatting import with_interval

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media_root")]


def _panel(page: str) -> str:
    start = page.index('data-testid="agreement"')
    return page[start : start + page[start:].index("</section>")]


def _figure(figures: dict, name: str) -> str:
    ci = figures.get(f"{name}_ci") or {}
    return with_interval(figures[name], ci.get("low"), ci.get("high"))


def test_before_any_agreement_job_the_panel_says_how_to_compute_it(project, bob_browser):
    panel = _panel(bob_browser.get("/projects/letters/").content.decode())

    assert "No agreement computed yet" in panel and "/api/v1/projects/letters/agreement/" in panel


def test_the_panel_shows_alpha_and_every_pair_as_the_api_does(
    project, alice_client, bob_client, bob_browser, django_capture_on_commit_callbacks
):
    import_export(alice_client, django_capture_on_commit_callbacks, annotator="alice")
    compute(alice_client, django_capture_on_commit_callbacks)
    spans = bob_client.get("/api/v1/projects/letters/agreement/").json()["spans"]

    panel = _panel(bob_browser.get("/projects/letters/").content.decode())

    assert f"<strong>{_figure(spans['overall'], 'krippendorff_alpha_chars')}</strong>" in panel
    assert "3 annotators (alice, bob, carol)" in panel
    for pair in spans["pairs"]:
        row = panel[panel.index(f"<td>{pair['a']} – {pair['b']}</td>") :]
        row = row[: row.index("</tr>")]
        for name in ("f1_exact", "f1_overlap", "f1_typed", "cohen_kappa_chars"):
            assert f'<td class="num">{_figure(pair, name)}</td>' in row
    assert "1 document with one annotator only, left out." in panel
