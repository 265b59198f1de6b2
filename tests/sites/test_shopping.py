"""The storefront (OneStopShop look-alike), driven through the real embedded server: pages over
HTTP, the REST endpoints WebArena's evaluators call, and a purchase and a review in Chromium."""

from __future__ import annotations

import re
import sqlite3

import httpx
import pytest
from playwright.sync_api import expect

EMMA = ("emma.lopez@gmail.com", "Password.123")


@pytest.fixture
def shop(pristine_store) -> str:
    return pristine_store.urls(0)["shopping"]


@pytest.fixture
def client(shop):
    with httpx.Client(base_url=shop, timeout=10) as c:
        yield c


def query(backend, sql: str, params=()) -> list[sqlite3.Row]:
    return backend.query("shopping", sql, params)


def prices(html: str) -> list[float]:
    grid = html.split('class="products list items product-items"', 1)[1].split("</ol>", 1)[0]
    return [float(p.replace(",", "")) for p in re.findall(r'<span class="price">\$([\d,.]+)</span>', grid)]


def names(html: str) -> list[str]:
    return re.findall(r'class="product-item-link" href="[^"]+">([^<]+)</a>', html)


def login(client: httpx.Client) -> None:
    r = client.post("/customer/account/loginPost/", data={"login[username]": EMMA[0], "login[password]": EMMA[1]})
    assert r.status_code == 303 and r.headers["location"] == "/customer/account/"


def admin_token(client: httpx.Client) -> str:
    r = client.post("/rest/default/V1/integration/admin/token", json={"username": "admin", "password": "admin1234"})
    assert r.status_code == 200
    return r.json()


# ---------------------------------------------------------------------------------------------
# Catalog


def test_home_page_has_header_menu_and_products(client):
    r = client.get("/")
    assert r.status_code == 200
    html = r.text
    assert "<title>One Stop Market</title>" in html
    assert 'href="/customer/account/login/">Sign In</a>' in html and "Create an Account" in html
    assert 'action="/catalogsearch/result/"' in html
    assert 'href="/home-kitchen.html"' in html and 'href="/home-kitchen/bedding.html"' in html
    assert len(names(html)) >= 12 and "Add to Cart" in html


def test_category_sort_and_pagination(client, pristine_store):
    (total,) = query(
        pristine_store,
        "SELECT COUNT(*) FROM products p JOIN categories c ON c.id = p.category_id"
        " WHERE p.status = 1 AND c.url_path LIKE 'home-kitchen%'",
    )[0]
    assert total > 24
    r = client.get("/home-kitchen.html")
    assert r.status_code == 200
    assert "<title>Home & Kitchen</title>" in r.text.replace("&amp;", "&")
    assert (
        f'Items <span class="toolbar-number">1</span>-<span class="toolbar-number">12</span> of '
        f'<span class="toolbar-number">{total}</span>' in r.text
    )
    assert "Bedding" in r.text and "Sort By" in r.text
    assert len(names(r.text)) == 12

    asc = prices(client.get("/home-kitchen.html", params={"product_list_order": "price"}).text)
    assert asc == sorted(asc) and len(asc) == 12
    desc = prices(
        client.get("/home-kitchen.html", params={"product_list_order": "price", "product_list_dir": "desc"}).text
    )
    assert desc == sorted(desc, reverse=True) and desc[0] >= asc[-1]
    by_name = names(client.get("/home-kitchen.html", params={"product_list_order": "name"}).text)
    assert by_name == sorted(by_name, key=str.lower)

    page2 = client.get("/home-kitchen.html", params={"p": 2}).text
    assert '<span class="toolbar-number">13</span>-<span class="toolbar-number">24</span>' in page2
    assert not set(names(page2)) & set(names(r.text))
    assert len(names(client.get("/home-kitchen.html", params={"product_list_limit": 24}).text)) == 24

    leaf = client.get("/home-kitchen/bedding.html")
    assert leaf.status_code == 200 and '<span class="base">Bedding</span>' in leaf.text


def test_search_matches_all_words_and_records_the_term(client, pristine_store):
    before = query(pristine_store, "SELECT popularity FROM search_terms WHERE query_text = 'yoga mat'")
    r = client.get("/catalogsearch/result/", params={"q": "Yoga Mat"})
    assert r.status_code == 200
    assert "Search results for: &#39;Yoga Mat&#39;" in r.text or "Search results for: 'Yoga Mat'" in r.text
    found = names(r.text)
    assert found
    expected = query(
        pristine_store,
        "SELECT COUNT(*) FROM products WHERE status = 1"
        " AND (name LIKE '%yoga%' OR description LIKE '%yoga%')"
        " AND (name LIKE '%mat%' OR description LIKE '%mat%')",
    )[0][0]
    assert re.search(rf'<span class="toolbar-number">{expected}</span>', r.text)
    after = query(
        pristine_store, "SELECT popularity, num_results FROM search_terms WHERE lower(query_text) = 'yoga mat'"
    )
    assert after and after[0]["popularity"] == (before[0]["popularity"] + 1 if before else 1)
    assert after[0]["num_results"] == expected

    none = client.get("/catalogsearch/result/", params={"q": "zzqxnotathing"})
    assert "Your search returned no results." in none.text


def test_product_page_and_disabled_product(client, pristine_store):
    p = query(pristine_store, "SELECT * FROM products WHERE status = 1 AND options != '{}' AND qty > 0 LIMIT 1")[0]
    r = client.get(f"/{p['url_key']}.html")
    assert r.status_code == 200
    html = r.text
    assert f'<span class="base" itemprop="name">{p["name"]}</span>'.replace("&", "&amp;") in html
    assert p["sku"] in html and "In stock" in html and "Add to Cart" in html and "Add to Wish List" in html
    assert "Choose an Option..." in html and "Write Your Own Review" in html
    assert f'action="/checkout/cart/add/product/{p["id"]}/"' in html

    # Required options: adding without choosing is refused.
    c = client.post(f"/checkout/cart/add/product/{p['id']}/", data={"qty": "1"})
    assert c.status_code == 303 and c.headers["location"] == f"/{p['url_key']}.html"
    assert "You need to choose options for your item." in client.get(c.headers["location"]).text

    disabled = query(pristine_store, "SELECT url_key FROM products WHERE status = 2 LIMIT 1")[0]
    gone = client.get(f"/{disabled['url_key']}.html")
    assert gone.status_code == 404 and "Whoops, our bad..." in gone.text


def test_unknown_pages_are_404(client):
    for path in ("/no-such-thing.html", "/foo/bar/", "/checkout/nothing"):
        r = client.get(path)
        assert r.status_code == 404 and "Whoops, our bad..." in r.text


def test_account_pages_require_login_and_return_afterwards(client):
    for path in (
        "/customer/account/",
        "/sales/order/history/",
        "/wishlist/",
        "/customer/address/",
        "/newsletter/manage/",
        "/review/customer/",
        "/sales/order/view/order_id/1/",
    ):
        r = client.get(path)
        assert r.status_code == 302 and r.headers["location"] == "/customer/account/login/", path
    client.get("/sales/order/history/")
    r = client.post("/customer/account/loginPost/", data={"login[username]": EMMA[0], "login[password]": EMMA[1]})
    assert r.headers["location"] == "/sales/order/history/"
    page = client.get("/sales/order/history/").text
    assert "My Orders" in page and "View Order" in page and "Items 1 to 10 of" in page


def test_wrong_password_is_refused(client):
    r = client.post(
        "/customer/account/loginPost/",
        data={"login[username]": EMMA[0], "login[password]": "nope"},
        follow_redirects=True,
    )
    assert "The account sign-in was incorrect" in r.text
    assert client.get("/customer/account/").status_code == 302


def test_order_view_only_for_the_owner(client, pristine_store):
    login(client)
    (emma,) = query(pristine_store, "SELECT id FROM customers WHERE email = ?", (EMMA[0],))
    own = query(pristine_store, "SELECT * FROM orders WHERE customer_id = ? LIMIT 1", (emma["id"],))[0]
    other = query(pristine_store, "SELECT id FROM orders WHERE customer_id != ? LIMIT 1", (emma["id"],))[0]
    r = client.get(f"/sales/order/view/order_id/{own['id']}/")
    assert r.status_code == 200 and f"Order # {own['increment_id']}" in r.text
    assert "Grand Total" in r.text and "Shipping &amp; Handling" in r.text
    r = client.get(f"/sales/order/view/order_id/{other['id']}/")
    assert r.status_code == 302 and r.headers["location"] == "/sales/order/history/"


def test_cart_coupon_and_stock(client, pristine_store):
    p = query(
        pristine_store, "SELECT * FROM products WHERE status = 1 AND options = '{}' AND qty BETWEEN 3 AND 50 LIMIT 1"
    )[0]
    r = client.post(f"/checkout/cart/add/product/{p['id']}/", data={"qty": "2"})
    assert r.status_code == 303
    cart = client.get("/checkout/cart/").text
    assert f"You added {p['name']} to your shopping cart.".replace("&", "&amp;") in cart
    assert 'class="counter qty">2<' in cart
    too_many = client.post(f"/checkout/cart/add/product/{p['id']}/", data={"qty": str(p["qty"])}, follow_redirects=True)
    assert "The requested qty is not available" in too_many.text
    bad = client.post("/checkout/cart/couponPost/", data={"coupon_code": "NOPE"}, follow_redirects=True)
    assert 'The coupon code "NOPE" is not valid.' in bad.text.replace("&#34;", '"').replace("&quot;", '"')
    good = client.post("/checkout/cart/couponPost/", data={"coupon_code": "save10"}, follow_redirects=True)
    assert "SAVE10" in good.text and "Discount (SAVE10)" in good.text
    assert f"-${round(p['price'] * 2 * 0.1, 2):,.2f}" in good.text


# ---------------------------------------------------------------------------------------------
# REST


def test_rest_token_and_auth(client):
    bad = client.post("/rest/default/V1/integration/admin/token", json={"username": "admin", "password": "x"})
    assert bad.status_code == 401 and "message" in bad.json()
    token = admin_token(client)
    assert isinstance(token, str) and len(token) >= 16
    assert client.get("/rest/V1/orders").status_code == 401
    assert client.get("/rest/V1/orders", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_rest_orders_search_criteria(client, pristine_store):
    auth = {"Authorization": f"Bearer {admin_token(client)}"}
    latest = query(pristine_store, "SELECT * FROM orders ORDER BY created_at DESC, id DESC LIMIT 1")[0]
    r = client.get(
        "/rest/V1/orders",
        headers=auth,
        params={
            "searchCriteria[sortOrders][0][field]": "created_at",
            "searchCriteria[sortOrders][0][direction]": "DESC",
            "searchCriteria[pageSize]": "1",
        },
    )
    assert r.status_code == 200
    body = r.json()
    (total,) = query(pristine_store, "SELECT COUNT(*) FROM orders")[0]
    assert body["total_count"] == total and len(body["items"]) == 1
    order = body["items"][0]
    assert order["increment_id"] == latest["increment_id"] and order["entity_id"] == int(latest["increment_id"])
    for key in (
        "status",
        "state",
        "created_at",
        "updated_at",
        "customer_id",
        "customer_email",
        "customer_firstname",
        "customer_lastname",
        "subtotal",
        "shipping_amount",
        "discount_amount",
        "grand_total",
    ):
        assert key in order
    assert order["items"] and set(order["items"][0]) >= {"item_id", "sku", "name", "price", "qty_ordered", "row_total"}
    assert body["search_criteria"]["page_size"] == 1

    filtered = client.get(
        "/rest/default/V1/orders",
        headers=auth,
        params={
            "searchCriteria[filterGroups][0][filters][0][field]": "customer_email",
            "searchCriteria[filterGroups][0][filters][0][value]": EMMA[0],
            "searchCriteria[filterGroups][0][filters][0][condition_type]": "eq",
            "searchCriteria[filterGroups][1][filters][0][field]": "status",
            "searchCriteria[filterGroups][1][filters][0][value]": "complete,canceled",
            "searchCriteria[filterGroups][1][filters][0][condition_type]": "in",
        },
    ).json()
    expected = query(
        pristine_store,
        "SELECT COUNT(*) FROM orders WHERE customer_email = ? AND status IN ('complete', 'canceled')",
        (EMMA[0],),
    )[0][0]
    assert filtered["total_count"] == expected > 0
    assert {o["status"] for o in filtered["items"]} <= {"complete", "canceled"}
    assert {o["customer_email"] for o in filtered["items"]} == {EMMA[0]}


def test_rest_reviews(client, pristine_store):
    auth = {"Authorization": f"Bearer {admin_token(client)}"}
    p = query(
        pristine_store,
        "SELECT p.sku, COUNT(*) AS n FROM reviews r JOIN products p ON p.id = r.product_id"
        " GROUP BY p.id HAVING n >= 2 LIMIT 1",
    )[0]
    assert client.get(f"/rest/V1/products/{p['sku']}/reviews").status_code == 401
    reviews = client.get(f"/rest/V1/products/{p['sku']}/reviews", headers=auth).json()
    assert isinstance(reviews, list) and len(reviews) == p["n"]
    assert [r["created_at"] for r in reviews] == sorted(r["created_at"] for r in reviews)
    last = reviews[-1]
    assert set(last) >= {
        "id",
        "title",
        "detail",
        "nickname",
        "ratings",
        "review_entity",
        "review_type",
        "review_status",
        "created_at",
    }
    assert last["ratings"][0]["percent"] == last["ratings"][0]["value"] * 20
    assert client.get("/rest/V1/products/NOSUCHSKU/reviews", headers=auth).status_code == 404


# ---------------------------------------------------------------------------------------------
# In the browser


def test_purchase_flow_in_browser(page, shop, pristine_store):
    p = query(
        pristine_store,
        "SELECT * FROM products WHERE status = 1 AND options = '{}' AND qty > 5"
        " AND name NOT LIKE '%&%' ORDER BY price LIMIT 1",
    )[0]
    page.goto(f"{shop}/customer/account/login/")
    page.get_by_label("Email", exact=True).fill(EMMA[0])
    page.get_by_label("Password", exact=True).fill(EMMA[1])
    page.get_by_role("button", name="Sign In").click()
    page.wait_for_url("**/customer/account/")
    assert "Welcome, Emma Lopez!" in page.content()

    page.get_by_placeholder("Search entire store here...").fill(p["name"])
    page.get_by_role("button", name="Search").click()
    page.get_by_role("link", name=p["name"], exact=True).first.click()
    expect(page.locator("h1")).to_have_text(p["name"])  # expect() waits for the navigation
    page.get_by_label("Qty").fill("2")
    page.get_by_role("button", name="Add to Cart").click()
    expect(page.locator("body")).to_contain_text(f"You added {p['name']} to your shopping cart.")

    page.goto(f"{shop}/checkout/cart/")
    page.get_by_role("link", name="Proceed to Checkout").click()
    page.wait_for_url("**/checkout/")
    page.get_by_label("Flat Rate").check()
    page.get_by_role("button", name="Place Order").click()
    page.wait_for_url("**/checkout/onepage/success/")
    text = page.inner_text("main")
    assert "Thank you for your purchase!" in text
    increment_id = re.search(r"Your order number is: (\d{9})", text).group(1)

    subtotal = round(p["price"] * 2, 2)
    grand = round(subtotal + 10.0, 2)
    page.goto(f"{shop}/sales/order/history/")
    first_row = page.locator("#my-orders-table tbody tr").first
    assert first_row.locator("td").first.inner_text() == increment_id
    assert f"${grand:,.2f}" in first_row.inner_text() and "Pending" in first_row.inner_text()
    first_row.get_by_role("link", name="View Order").click()
    page.wait_for_url("**/sales/order/view/order_id/*/")
    view = page.inner_text("main")
    assert f"Order # {increment_id}" in view
    assert p["sku"] in view and p["name"] in view
    assert f"${subtotal:,.2f}" in view and "$10.00" in view and f"${grand:,.2f}" in view

    with httpx.Client(base_url=shop) as client:
        auth = {"Authorization": f"Bearer {admin_token(client)}"}
        latest = client.get(
            "/rest/V1/orders",
            headers=auth,
            params={
                "searchCriteria[sortOrders][0][field]": "created_at",
                "searchCriteria[sortOrders][0][direction]": "DESC",
                "searchCriteria[pageSize]": "1",
            },
        ).json()["items"][0]
    assert latest["increment_id"] == increment_id and latest["entity_id"] == int(increment_id)
    assert latest["status"] == "pending" and latest["grand_total"] == grand
    assert latest["items"][0]["sku"] == p["sku"] and latest["items"][0]["qty_ordered"] == 2
    (stock,) = query(pristine_store, "SELECT qty FROM products WHERE id = ?", (p["id"],))[0]
    assert stock == p["qty"] - 2


def test_review_in_browser_is_latest_in_rest(page, shop, pristine_store):
    p = query(
        pristine_store,
        "SELECT p.* FROM products p WHERE status = 1 AND EXISTS"
        " (SELECT 1 FROM reviews r WHERE r.product_id = p.id) LIMIT 1",
    )[0]
    page.goto(f"{shop}/{p['url_key']}.html")
    page.get_by_text("4 stars", exact=True).click()
    page.get_by_label("Nickname").fill("Tester")
    page.get_by_label("Summary").fill("Solid value")
    page.get_by_label("Review", exact=True).fill("Works as described.")
    page.get_by_role("button", name="Submit Review").click()
    expect(page.locator("body")).to_contain_text("You submitted your review for moderation.")
    with httpx.Client(base_url=shop) as client:
        auth = {"Authorization": f"Bearer {admin_token(client)}"}
        reviews = client.get(f"/rest/V1/products/{p['sku']}/reviews", headers=auth).json()
    last = reviews[-1]
    assert last["nickname"] == "Tester" and last["title"] == "Solid value"
    assert last["ratings"][0]["percent"] == 80 and last["review_status"] == 2
