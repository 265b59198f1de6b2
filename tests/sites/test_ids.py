"""Ids in URLs that no row can have: numbers too long for SQLite's 64-bit INTEGER (they raised OverflowError, an
HTTP 500) and Unicode digits (str.isdigit() accepts '²', int() refuses it). Every site answers them as the real
sites do, as an id that does not exist, never with a server error."""

from __future__ import annotations

import httpx
import pytest

from webrl.sites.platform import ROW_ID_DIGITS, row_id

SITES = ("shopping", "shopping_admin", "reddit", "gitlab", "map")
HUGE = "9" * 30
# site -> paths with an id of the site's own kind ({id} is replaced)
PATHS = {
    "shopping": ["/catalog/product/view/id/{id}", "/review/product/list/id/{id}/"],
    "reddit": ["/f/AskReddit/{id}", "/f/AskReddit/{id}/slug", "/f/AskReddit/{id}/slug/comment/{id}"],
    "gitlab": ["/a11yproject/a11yproject.com/-/issues/{id}", "/a11yproject/a11yproject.com/-/merge_requests/{id}"],
    "map": ["/node/{id}"],
    "shopping_admin": [
        "/sales/order/view/order_id/{id}/",
        "/catalog/product/edit/id/{id}/",
        "/customer/index/edit/id/{id}/",
    ],
}


def test_row_id_takes_only_ascii_digits_that_fit_sqlite():
    assert row_id("42") == 42 and row_id("9" * ROW_ID_DIGITS) == int("9" * ROW_ID_DIGITS)
    assert [row_id(text) for text in ("9" * (ROW_ID_DIGITS + 1), "²", "-1", "", "4 2", None)] == [None] * 6


@pytest.mark.parametrize("site", SITES)
def test_an_id_no_row_can_have_is_not_a_server_error(site_servers, site):
    backend = site_servers(*SITES)
    base = backend.urls(0)[site]
    with httpx.Client(base_url=base, timeout=20) as client:
        if site == "shopping_admin":  # its pages need a signed-in admin
            signed_in = client.post("/admin/", data={"login[username]": "admin", "login[password]": "admin1234"})
            assert signed_in.headers["location"].endswith("/admin/dashboard/")
        for path in PATHS[site]:
            for bad in (HUGE, "²"):
                response = client.get(path.format(id=bad))
                assert response.status_code < 500, (path.format(id=bad), response.status_code)
