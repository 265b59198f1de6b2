"""The homepage: links to the instance's running sites, the accounts page, scratchpad and calculator."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect


@pytest.fixture
def homepage(site_servers):
    return site_servers("shopping", "shopping_admin", "homepage")


def test_index_links_to_the_running_sites(homepage):
    urls = homepage.urls(0)
    page = httpx.get(urls["homepage"]).text
    assert f'href="{urls["shopping"]}/"' in page and f'href="{urls["shopping_admin"]}/"' in page
    assert "OneStopShop" in page and "Merchant Admin Portal" in page
    assert "Reddit" not in page  # not running in this instance: no dead links
    accounts = httpx.get(f"{urls['homepage']}/password.html").text
    assert "emma.lopez@gmail.com" in accounts and "admin1234" in accounts
    assert httpx.get(f"{urls['homepage']}/nope").status_code == 404


def test_scratchpad_keeps_notes_in_the_browser(homepage, page):
    page.goto(f"{homepage.urls(0)['homepage']}/scratchpad.html")
    page.get_by_label("Note").fill("order 000000171 costs $64.00")
    page.get_by_role("button", name="Submit").click()
    page.reload()
    expect(page.locator("#notes li")).to_have_text(["order 000000171 costs $64.00"])
    page.get_by_role("button", name="Clear all notes").click()
    expect(page.locator("#notes li")).to_have_count(0)


@pytest.mark.parametrize(
    ("expression", "shown"),
    [
        ("(12.5 + 7) * 2", "39"),
        ("10 / 4 - -1", "3.5"),
        ("2 +", "Error: unexpected end"),
        ("alert(1)", "Error: invalid character"),
    ],
)
def test_calculator(homepage, page, expression, shown):
    page.goto(f"{homepage.urls(0)['homepage']}/calculator.html")
    page.get_by_label("Expression").fill(expression)
    page.get_by_role("button", name="=").click()
    expect(page.locator("#result")).to_have_text(shown)
