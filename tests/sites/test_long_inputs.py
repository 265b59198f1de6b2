"""Search terms and numbers no real site would choke on: a 60,000-character term (over SQLite's 50,000-byte LIKE
pattern limit, and 20,000 words) and 20-digit numbers (past SQLite's 64-bit INTEGER) sent to every page of every site
that takes a search term or a number from its query string or a form. They raised "LIKE or GLOB pattern too complex"
or OverflowError: an HTTP 500. Each site answers as its real counterpart does: the term cut at the site's limit, or
refused with the site's message, and the number clamped or refused. (The homepage takes neither.)"""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from webrl.sites.base import ACCOUNTS

SITES = ("shopping", "shopping_admin", "reddit", "gitlab", "map")  # the server test_ids.py starts too
LONG = ("ab " * 20_000)[:60_000]
HUGE = "9" * 20
SIGN_IN = {
    "shopping": ("/customer/account/loginPost/", "login[username]", "login[password]"),
    "shopping_admin": ("/admin/admin/index/index/", "login[username]", "login[password]"),
    "reddit": ("/login", "_username", "_password"),
    "gitlab": ("/users/sign_in", "user[login]", "user[password]"),
}
PROJECT = "/a11yproject/a11yproject.com"
CRITERIA = "searchCriteria[filterGroups][0][filters][0]"


def admin_grid(path: str, text_filter: str, **query: str) -> list[tuple]:
    """An admin grid's keyword search and a text filter (one long term a request), its paging numbers."""
    return [
        ("shopping_admin", "GET", f"/admin/{path}", {**query, "search": LONG, "limit": HUGE, "page": HUGE}),
        ("shopping_admin", "GET", f"/admin/{path}", {**query, text_filter: LONG}),
    ]


# (client, method, path, query or form): one long term a request, so that every request stays under 64 KiB
ROUTES = [
    ("shopping", "GET", "/catalogsearch/result/", {"q": LONG}),
    ("shopping", "GET", "/catalogsearch/result/", {"q": "bike", "cat": HUGE, "p": HUGE, "product_list_limit": HUGE}),
    ("shopping", "GET", "/beauty-personal-care.html", {"p": HUGE, "product_list_limit": HUGE}),
    ("shopping", "GET", "/sales/order/history/", {"p": HUGE, "limit": HUGE}),
    ("shopping", "POST", "/checkout/cart/add/product/1/", {"qty": HUGE}),
    ("shopping", "POST", "/checkout/cart/add/product/1/", {"qty": "1e400"}),
    ("shopping", "POST", "/checkout/cart/updatePost/", {f"cart[{HUGE}][qty]": HUGE}),
    ("shopping", "POST", "/checkout/onepage/placeOrder/", {"address_id": HUGE}),
    ("shopping", "POST", "/review/product/post/id/1/", {"rating": HUGE, "nickname": "n", "title": "t", "detail": "d"}),
    ("rest", "GET", "/rest/V1/orders", {"searchCriteria[pageSize]": HUGE, "searchCriteria[currentPage]": HUGE}),
    (
        "rest",
        "GET",
        "/rest/V1/orders",
        {f"{CRITERIA}[field]": "customer_email", f"{CRITERIA}[value]": LONG, f"{CRITERIA}[condition_type]": "like"},
    ),
    (
        "rest",
        "GET",
        "/rest/V1/orders",
        {f"{CRITERIA}[field]": "increment_id", f"{CRITERIA}[value]": LONG, f"{CRITERIA}[condition_type]": "in"},
    ),
    *admin_grid("sales/order/", "billing_name"),
    *admin_grid("sales/invoice/", "billing_name"),
    *admin_grid("sales/shipment/", "shipping_name"),
    *admin_grid("catalog/product/", "name"),
    *admin_grid("review/product/", "detail"),
    *admin_grid("sales_rule/promo_quote/", "name"),
    *admin_grid("search/term/index/", "query_text"),
    *admin_grid("search/term/report/", "query_text"),
    *admin_grid("customer/index/", "email"),
    *admin_grid("customer/index/edit/id/1/", "customer_email", tab="orders"),
    *admin_grid("newsletter/subscriber/", "email"),
    *admin_grid("reports/report_review/product/", "name"),
    *admin_grid("reports/report_review/customer/", "name"),
    *admin_grid("reports/report_product/lowstock/", "sku"),
    ("shopping_admin", "GET", "/admin/reports/report_sales/sales/", {"from": LONG, "period_type": "day"}),
    (
        "shopping_admin",
        "POST",
        "/admin/catalog/product/save/id/1/",
        {
            "product[name]": "n",
            "product[sku]": "long-inputs",
            "product[price]": "1",
            "product[category_id]": "3",
            "product[qty]": HUGE,
        },
    ),
    (
        "shopping_admin",
        "POST",
        "/admin/catalog/product/save/id/1/",
        {
            "product[name]": "n",
            "product[sku]": "long-inputs",
            "product[price]": "1e400",
            "product[category_id]": HUGE,
            "product[qty]": "1e400",
        },
    ),
    (
        "shopping_admin",
        "POST",
        "/admin/sales_rule/promo_quote/save/",
        {"rule[name]": "n", "rule[coupon_type]": "1", "rule[discount_amount]": "10", "rule[uses_per_coupon]": HUGE},
    ),
    ("reddit", "GET", "/search", {"q": LONG}),
    ("reddit", "GET", "/", {"page": HUGE}),
    ("reddit", "GET", "/f/AskReddit", {"page": HUGE}),
    ("reddit", "GET", "/user/MarvelsGrantMan136", {"page": HUGE}),
    ("reddit", "POST", "/sv/1", {"choice": HUGE}),
    ("gitlab", "GET", "/search", {"search": LONG, "scope": "issues"}),
    ("gitlab", "GET", "/dashboard/issues", {"search": LONG, "page": HUGE}),
    ("gitlab", "GET", "/dashboard/merge_requests", {"search": LONG, "page": HUGE}),
    ("gitlab", "GET", f"{PROJECT}/-/issues", {"search": LONG, "page": HUGE}),
    ("gitlab", "GET", f"{PROJECT}/-/merge_requests", {"search": LONG, "page": HUGE}),
    ("gitlab", "GET", f"{PROJECT}/-/merge_requests", {"milestone_title": LONG}),  # any milestone gave a 500
    ("gitlab", "GET", "/groups/a11yproject/-/issues", {"search": LONG, "page": HUGE}),
    ("gitlab", "GET", "/explore/projects", {"name": LONG, "page": HUGE}),
    ("gitlab", "GET", "/dashboard/projects", {"name": LONG, "page": HUGE}),
    ("gitlab", "GET", f"{PROJECT}/-/commits/main", {"search": LONG, "page": HUGE}),
    ("gitlab", "GET", f"{PROJECT}/-/commits/main", {"author": LONG}),
    ("gitlab", "GET", f"{PROJECT}/-/branches", {"search": LONG}),
    ("gitlab", "GET", f"{PROJECT}/-/project_members", {"search": LONG}),
    ("gitlab", "GET", f"{PROJECT}/-/find_file/main", {"q": LONG}),
    ("map", "GET", "/search", {"query": LONG}),
    ("map", "GET", "/directions", {"route_from": LONG, "route_to": "Carnegie Mellon University"}),
    ("map", "GET", "/directions", {"route": f"{HUGE},{HUGE};{HUGE},{HUGE}"}),
    ("map", "GET", "/", {"mlat": HUGE, "mlon": HUGE}),
]


@pytest.fixture(scope="module")
def clients(site_servers):
    """A client per site, signed in as the agent is (the shop with an item in its cart), and one for the shop's
    REST API with an admin token; the sites are reset afterwards (some forms write when they take a number)."""
    backend = site_servers(*SITES)
    made = {}
    for site in SITES:
        origin = urlsplit(backend.urls(0)[site])
        client = made[site] = httpx.Client(base_url=f"{origin.scheme}://{origin.netloc}", timeout=60)
        if site in SIGN_IN:
            path, user_field, password_field = SIGN_IN[site]
            user, password = ACCOUNTS[site]
            assert client.post(path, data={user_field: user, password_field: password}).status_code < 400
    made["shopping"].post("/checkout/cart/add/product/1/", data={"qty": "1"})
    token = (
        made["shopping"]
        .post("/rest/V1/integration/admin/token", json={"username": "admin", "password": "admin1234"})
        .json()
    )
    made["rest"] = httpx.Client(
        base_url=made["shopping"].base_url, timeout=60, headers={"authorization": f"Bearer {token}"}
    )
    yield made
    for client in made.values():
        client.close()
    backend.reset()


@pytest.mark.parametrize(
    ("client", "method", "path", "data"), ROUTES, ids=[f"{c}-{m}-{p}-{'+'.join(d)}" for c, m, p, d in ROUTES]
)
def test_long_terms_and_huge_numbers_are_no_server_error(clients, client, method, path, data):
    if method == "GET":
        response = clients[client].get(path, params=data)
    else:
        response = clients[client].post(path, data=data)
    assert response.status_code < 500, (method, path, response.status_code, response.text[-300:])


def test_each_site_answers_a_long_term_as_its_real_counterpart(clients):
    shop = clients["shopping"].get("/catalogsearch/result/", params={"q": LONG})
    assert "Maximum Search query length is 128. Your query was cut." in shop.text
    gitlab = clients["gitlab"].get("/search", params={"search": LONG})
    assert "Search query is too long (maximum is 4096 characters)." in gitlab.text
    terms = clients["gitlab"].get(f"{PROJECT}/-/issues", params={"search": " ".join(["a"] * 65)})
    assert "Search query is too long (maximum is 64 terms)." in terms.text
    rest = clients["rest"].get(
        "/rest/V1/orders", params={f"{CRITERIA}[field]": "customer_email", f"{CRITERIA}[value]": LONG}
    )
    assert rest.status_code == 400 and "at most 4096 characters" in rest.json()["message"]
    paged = clients["rest"].get("/rest/V1/orders", params={"searchCriteria[pageSize]": HUGE}).json()
    assert paged["search_criteria"]["page_size"] == 10**9 and paged["items"]


def test_a_long_query_that_arrives_in_pieces_is_read_whole(clients):
    """A request head may come in several reads (a loaded machine splits it: CI saw it). The long-term request
    sent in 4 KiB pieces with pauses between must be answered as when it comes in one read, not refused as a bad
    request because the part read so far passed the HTTP parser's buffer."""
    origin = clients["shopping"].base_url
    query = httpx.QueryParams({"q": LONG})
    head = f"GET /catalogsearch/result/?{query} HTTP/1.1\r\nHost: {origin.host}:{origin.port}\r\n\r\n".encode()
    assert len(head) > 32 * 1024
    with socket.create_connection((origin.host, origin.port), timeout=60) as conn:
        for start in range(0, len(head), 4096):
            conn.sendall(head[start : start + 4096])
            time.sleep(0.01)
        status_line = conn.makefile("rb").readline()
    assert status_line.startswith(b"HTTP/1.1 200"), status_line
