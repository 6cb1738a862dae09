"""Screenshots of every page on the demo data, for README.md and docs/ui.md.

    scripts/demo --no-serve
    uv run python manage.py runserver 127.0.0.1:8000 --noreload &
    uv run python docs/screenshots/take.py --base http://127.0.0.1:8000 --password <demo-admin password>

Drives Debian's chromium (`/usr/bin/chromium`) through Playwright; writes docs/screenshots/*.png.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--username", default="demo-admin")
    parser.add_argument("--password", required=True)
    args = parser.parse_args()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{args.base}/accounts/login/")
        page.screenshot(path=HERE / "login.png")
        page.fill("input[name=username]", args.username)
        page.fill("input[name=password]", args.password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{args.base}/")
        page.screenshot(path=HERE / "home.png", full_page=True)

        def runs_of(slug: str) -> list[int]:
            page.goto(f"{args.base}/projects/{slug}/")
            links = page.locator("[data-testid=runs-table] a").evaluate_all("els => els.map(e => e.href)")
            return sorted(int(re.search(r"/runs/(\d+)/", link).group(1)) for link in links)

        for slug, name in (("demo-deid", "spans"), ("demo-trials", "attributes")):
            runs = runs_of(slug)
            page.screenshot(path=HERE / f"project-{name}.png", full_page=True)
            page.goto(f"{args.base}/runs/{runs[0]}/")
            page.screenshot(path=HERE / f"run-{name}.png", full_page=True)
            first_document = page.locator("[data-testid=comparison-table] tbody a").first.get_attribute(
                "href"
            )
            if name == "spans":
                first_document = page.locator("[data-testid=leakage] a").first.get_attribute("href")
            page.goto(f"{args.base}{first_document}")
            page.screenshot(path=HERE / f"document-{name}.png", full_page=True)
            page.goto(f"{args.base}/compare/?a={runs[0]}&b={runs[1]}")
            page.screenshot(path=HERE / f"compare-{name}.png", full_page=True)
        # The gold diff needs a second gold version of the span project (the demo has one): import one
        # (e.g. demo/deid/gold.jsonl with a few spans changed) before running this.
        page.goto(f"{args.base}/projects/demo-deid/")
        diff_link = page.get_by_test_id("gold-diff-link")
        if diff_link.count():
            diff_link.first.click()
            page.screenshot(path=HERE / "gold-diff.png", full_page=True)
        browser.close()


if __name__ == "__main__":
    main()
