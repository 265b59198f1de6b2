"""The shop's admin (Magento 2 admin look-alike), driven over HTTP on the real embedded server.

Grid, report and action results are checked against direct SQL on the live store database.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing

import httpx
import pytest

from webrl.sites.store.store import find_coupon_rule

LOGIN = {"login[username]": "admin", "login[password]": "admin1234"}


@pytest.fixture
def admin_url(pristine_store) -> str:
    return pristine_store.urls(0)["shopping_admin"]


@pytest.fixture
def client(admin_url):
    with httpx.Client(base_url=admin_url.removesuffix("/admin"), follow_redirects=True, timeout=20) as c:
        r = c.post("/admin/admin/", data=LOGIN)
        assert r.url.path == "/admin/admin/dashboard/"
        yield c


@pytest.fixture
def sql(pristine_store):
    """Run a query on the live store database (read-only) and return all rows."""
    return lambda query, params=(): pristine_store.query("shopping", query, params)


def records(html: str) -> int:
    return int(re.search(r"(\d+) records found", html).group(1))


def first_column(html: str) -> list[str]:
    """The first cell (after a mass-action checkbox) of every row of the data grid."""
    body = html.split('<table class="data-grid">', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    out = []
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = [c for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) if 'type="checkbox"' not in c]
        out.append(re.sub(r"<[^>]+>", "", cells[0]).strip())
    return out


def messages(html: str) -> list[str]:
    return [re.sub(r"\s+", " ", m).strip() for m in re.findall(r'role="alert">(.*?)</div>', html, re.S)]


# ---------------------------------------------------------------------------------------------
# Sign-in


def test_pages_need_login_and_bad_login_is_refused(admin_url):
    root = admin_url.removesuffix("/admin")
    with httpx.Client(base_url=root, timeout=20) as c:
        assert c.get("/").headers["location"] == "/admin"
        r = c.get("/admin/sales/order/")
        assert r.status_code == 303 and r.headers["location"] == "/admin"
        login = c.get("/admin")
        assert 'placeholder="user name"' in login.text and 'placeholder="password"' in login.text
        assert "Sign in" in login.text
        r = c.post(
            "/admin/admin/", data={"login[username]": "admin", "login[password]": "wrong"}, follow_redirects=True
        )
        assert (
            "The account sign-in was incorrect or your account is disabled temporarily. "
            "Please wait and try again later."
        ) in messages(r.text)
        # after signing in, the page first asked for is shown
        r = c.post("/admin/admin/", data=LOGIN, follow_redirects=True)
        assert r.url.path == "/admin/sales/order/" and "records found" in r.text
        assert "admin" in c.get("/admin/admin/dashboard/").text
        r = c.get("/admin/admin/auth/logout/", follow_redirects=True)
        assert 'placeholder="user name"' in r.text
        assert c.get("/admin/admin/dashboard/").status_code == 303


def test_dashboard_and_unknown_pages(client, sql):
    html = client.get("/admin/admin/dashboard/").text
    lifetime = sql("SELECT SUM(grand_total) FROM orders WHERE status != 'canceled'")[0][0]
    assert f"${lifetime:,.2f}" in html
    assert "Last Orders" in html and "Bestsellers" in html
    r = client.get("/admin/no/such/page/")
    assert r.status_code == 404 and "Sorry, we can't find" in r.text


# ---------------------------------------------------------------------------------------------
# Grids


def test_orders_grid_search_filter_sort_paging(client, sql):
    html = client.get("/admin/sales/order/").text
    assert records(html) == sql("SELECT COUNT(*) FROM orders")[0][0]
    for label in (
        "Purchase Point",
        "Purchase Date",
        "Bill-to Name",
        "Ship-to Name",
        "Grand Total (Base)",
        "Grand Total (Purchased)",
        "Status",
        "Action",
    ):
        assert label in html
    newest = sql("SELECT increment_id FROM orders ORDER BY created_at DESC, id DESC LIMIT 20")
    assert first_column(html) == [r[0] for r in newest]

    html = client.get("/admin/sales/order/", params={"search": "emma.lopez@gmail.com"}).text
    emma = sql("SELECT COUNT(*) FROM orders WHERE customer_email = 'emma.lopez@gmail.com'")[0][0]
    assert emma >= 30 and records(html) == emma

    params = {"status": "pending", "sort": "grand_total", "dir": "desc", "limit": "5", "page": "2"}
    html = client.get("/admin/sales/order/", params=params).text
    expected = sql(
        "SELECT increment_id FROM orders WHERE status = 'pending' ORDER BY grand_total DESC, id DESC LIMIT 5 OFFSET 5"
    )
    assert records(html) == sql("SELECT COUNT(*) FROM orders WHERE status = 'pending'")[0][0]
    assert first_column(html) == [r[0] for r in expected]

    # the Filters form sends every field: the grid's URL keeps the set ones (a URL task's reference, in VAB exact)
    sent = client.get("/admin/sales/order/?increment_id=&created_at_from=&status=pending&billing_name=")
    assert sent.history[0].status_code == 302 and str(sent.url).endswith("/admin/sales/order/?status=pending")
    assert records(sent.text) == sql("SELECT COUNT(*) FROM orders WHERE status = 'pending'")[0][0]

    params = {"created_at_from": "01/01/2023", "created_at_to": "2023-03-31", "grand_total_from": "100"}
    html = client.get("/admin/sales/order/", params=params).text
    assert (
        records(html)
        == sql(
            "SELECT COUNT(*) FROM orders WHERE substr(created_at, 1, 10) BETWEEN '2023-01-01'"
            " AND '2023-03-31' AND grand_total >= 100"
        )[0][0]
    )


def test_products_customers_reviews_grids(client, sql):
    html = client.get("/admin/catalog/product/", params={"price_from": "20", "price_to": "30", "sort": "price"}).text
    rows = sql("SELECT id FROM products WHERE price BETWEEN 20 AND 30 ORDER BY price, id LIMIT 20")
    assert records(html) == sql("SELECT COUNT(*) FROM products WHERE price BETWEEN 20 AND 30")[0][0]
    assert first_column(html) == [str(r[0]) for r in rows]
    html = client.get("/admin/catalog/product/", params={"status": "2"}).text
    assert records(html) == sql("SELECT COUNT(*) FROM products WHERE status = 2")[0][0] > 0

    html = client.get("/admin/customer/index/", params={"search": "Lopez"}).text
    assert (
        records(html)
        == sql(
            "SELECT COUNT(*) FROM customers WHERE firstname LIKE '%lopez%' OR lastname LIKE"
            " '%lopez%' OR email LIKE '%lopez%'"
        )[0][0]
    )
    assert "emma.lopez@gmail.com" in html

    html = client.get("/admin/review/product/pending/").text
    assert records(html) == sql("SELECT COUNT(*) FROM reviews WHERE status = 'Pending'")[0][0]


# ---------------------------------------------------------------------------------------------
# Order actions


def open_order(sql) -> int:
    """A pending order with nothing invoiced or shipped."""
    return sql(
        "SELECT id FROM orders o WHERE status = 'pending' AND NOT EXISTS (SELECT 1 FROM invoices WHERE"
        " order_id = o.id) AND NOT EXISTS (SELECT 1 FROM shipments WHERE order_id = o.id) ORDER BY id"
    )[0][0]


def test_hold_unhold_comment_and_cancel(client, sql):
    oid = open_order(sql)
    base = f"/admin/sales/order/{{}}/order_id/{oid}/"
    view = client.get(f"/admin/sales/order/view/order_id/{oid}/").text
    assert f"# {oid:09d}" in view and "Items Ordered" in view and "Submit Comment" in view
    history = sql("SELECT COUNT(*) FROM order_history WHERE order_id = ?", (oid,))[0][0]

    r = client.post(base.format("hold"))
    assert "You put the order on hold." in messages(r.text)
    assert sql("SELECT status FROM orders WHERE id = ?", (oid,))[0][0] == "holded"
    r = client.post(base.format("cancel"))  # an order on hold cannot be canceled
    assert sql("SELECT status FROM orders WHERE id = ?", (oid,))[0][0] == "holded"
    r = client.post(base.format("unhold"))
    assert "You released the order from holding status." in messages(r.text)
    assert sql("SELECT status FROM orders WHERE id = ?", (oid,))[0][0] == "pending"

    r = client.post(
        base.format("addComment"),
        data={"history[status]": "pending", "history[comment]": "Call the buyer", "history[is_customer_notified]": "1"},
    )
    last = sql("SELECT * FROM order_history WHERE order_id = ? ORDER BY id DESC LIMIT 1", (oid,))[0]
    assert (last["comment"], last["is_customer_notified"], last["status"]) == ("Call the buyer", 1, "pending")
    assert "Call the buyer" in r.text

    items = sql("SELECT product_id, qty_ordered FROM order_items WHERE order_id = ?", (oid,))
    stock = {r[0]: sql("SELECT qty FROM products WHERE id = ?", (r[0],))[0][0] for r in items}
    r = client.post(base.format("cancel"))
    assert "You canceled the order." in messages(r.text)
    assert sql("SELECT status FROM orders WHERE id = ?", (oid,))[0][0] == "canceled"
    assert all(
        r[0] == r[1] for r in sql("SELECT qty_canceled, qty_ordered FROM order_items WHERE order_id = ?", (oid,))
    )
    for pid, qty in items:
        assert sql("SELECT qty FROM products WHERE id = ?", (pid,))[0][0] == stock[pid] + qty
    assert sql("SELECT COUNT(*) FROM order_history WHERE order_id = ?", (oid,))[0][0] == history + 4


def test_invoice_then_ship_completes_the_order(client, sql):
    oid = open_order(sql)
    grand_total = sql("SELECT grand_total FROM orders WHERE id = ?", (oid,))[0][0]
    form = client.get(f"/admin/sales/order_invoice/new/order_id/{oid}/").text
    assert "Submit Invoice" in form
    r = client.post(f"/admin/sales/order_invoice/save/order_id/{oid}/", data={"invoice[comment_text]": ""})
    assert "The invoice has been created." in messages(r.text)
    assert sql("SELECT status FROM orders WHERE id = ?", (oid,))[0][0] == "processing"
    assert sql("SELECT grand_total FROM invoices WHERE order_id = ?", (oid,))[0][0] == pytest.approx(grand_total)
    assert all(
        r[0] == r[1] for r in sql("SELECT qty_invoiced, qty_ordered FROM order_items WHERE order_id = ?", (oid,))
    )

    assert "Submit Shipment" in client.get(f"/admin/admin/order_shipment/new/order_id/{oid}/").text
    r = client.post(f"/admin/admin/order_shipment/save/order_id/{oid}/", data={"tracking[number]": "1Z999"})
    assert "The shipment has been created." in messages(r.text)
    assert sql("SELECT status FROM orders WHERE id = ?", (oid,))[0][0] == "complete"
    ship = sql("SELECT tracking_number, total_qty FROM shipments WHERE order_id = ?", (oid,))[0]
    assert ship[0] == "1Z999"
    assert ship[1] == sql("SELECT SUM(qty_ordered) FROM order_items WHERE order_id = ?", (oid,))[0][0]
    view = client.get(f"/admin/sales/order/view/order_id/{oid}/").text
    assert "Complete" in view and "order_invoice/new" not in view and "order_shipment/new" not in view
    # a complete order can be neither canceled nor invoiced again
    client.post(f"/admin/sales/order/cancel/order_id/{oid}/")
    assert sql("SELECT status FROM orders WHERE id = ?", (oid,))[0][0] == "complete"


# ---------------------------------------------------------------------------------------------
# Reviews, cart price rules, customers


def test_review_approve_and_mass_update(client, sql):
    pending = [r[0] for r in sql("SELECT id FROM reviews WHERE status = 'Pending' ORDER BY id LIMIT 3")]
    review = sql("SELECT * FROM reviews WHERE id = ?", (pending[0],))[0]
    assert "Save Review" in client.get(f"/admin/review/product/edit/id/{review['id']}/").text
    r = client.post(
        f"/admin/review/product/save/id/{review['id']}/",
        data={
            "status": "Approved",
            "nickname": review["nickname"],
            "title": review["title"],
            "detail": review["detail"],
            "rating": str(review["rating"]),
        },
    )
    assert "You saved the review." in messages(r.text)
    assert sql("SELECT status FROM reviews WHERE id = ?", (review["id"],))[0][0] == "Approved"

    r = client.post(
        "/admin/review/product/massUpdateStatus/",
        data={"massaction": "update_status", "status": "Not Approved", "selected": pending[1:]},
    )
    assert "A total of 2 record(s) have been updated." in messages(r.text)
    assert {r[0] for r in sql(f"SELECT status FROM reviews WHERE id IN ({pending[1]}, {pending[2]})")} == {
        "Not Approved"
    }

    r = client.post(f"/admin/review/product/delete/id/{pending[1]}/")
    assert "The review has been deleted." in messages(r.text)
    assert not sql("SELECT 1 FROM reviews WHERE id = ?", (pending[1],))


def test_cart_price_rule_creation(client, sql, pristine_store):
    r = client.post(
        "/admin/sales_rule/promo_quote/save/",
        data={
            "rule[name]": "Spring Sale",
            "rule[description]": "15% off",
            "rule[is_active]": ["0", "1"],
            "rule[coupon_type]": "2",
            "rule[coupon_code]": "SPRINGTEST15",
            "rule[uses_per_coupon]": "",
            "rule[from_date]": "01/01/2024",
            "rule[to_date]": "",
            "rule[simple_action]": "by_percent",
            "rule[discount_amount]": "15",
        },
    )
    assert "You saved the rule." in messages(r.text) and "SPRINGTEST15" in r.text
    rule = sql("SELECT * FROM cart_price_rules WHERE coupon_code = 'SPRINGTEST15'")[0]
    assert (rule["discount_type"], rule["discount_amount"], rule["is_active"], rule["from_date"]) == (
        "by_percent",
        15,
        1,
        "2024-01-01",
    )
    with closing(sqlite3.connect(f"file:{pristine_store.paths.live_db(0, 'store')}?mode=ro", uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        assert find_coupon_rule(conn, "springtest15")["name"] == "Spring Sale"
    # a duplicate code is refused
    r = client.post(
        "/admin/sales_rule/promo_quote/save/",
        data={
            "rule[name]": "Again",
            "rule[coupon_type]": "2",
            "rule[coupon_code]": "SPRINGTEST15",
            "rule[simple_action]": "by_fixed",
            "rule[discount_amount]": "5",
        },
    )
    assert any("coupon code" in m for m in messages(r.text))
    assert sql("SELECT COUNT(*) FROM cart_price_rules WHERE coupon_code = 'SPRINGTEST15'")[0][0] == 1


def test_customer_save_and_new(client, sql):
    emma = sql("SELECT * FROM customers WHERE email = 'emma.lopez@gmail.com'")[0]
    view = client.get(f"/admin/customer/index/edit/id/{emma['id']}/").text
    assert "Customer View" in view and "Lifetime Sales" in view
    r = client.post(
        f"/admin/customer/index/save/id/{emma['id']}/",
        data={
            "customer[group_name]": "Wholesale",
            "customer[firstname]": "Emma",
            "customer[lastname]": "Lopez",
            "customer[email]": "emma.lopez@gmail.com",
            "customer[dob]": "",
            "customer[gender]": "Female",
        },
    )
    assert "You saved the customer." in messages(r.text)
    assert sql("SELECT group_name FROM customers WHERE id = ?", (emma["id"],))[0][0] == "Wholesale"
    r = client.post(
        "/admin/customer/index/save/",
        data={
            "customer[firstname]": "Ann",
            "customer[lastname]": "Lee",
            "customer[email]": "ann.lee@example.com",
            "customer[group_name]": "General",
        },
    )
    assert "You saved the customer." in messages(r.text)
    assert sql("SELECT COUNT(*) FROM customers WHERE email = 'ann.lee@example.com'")[0][0] == 1


# ---------------------------------------------------------------------------------------------
# Reports


def test_reports_match_sql(client, sql):
    html = client.get(
        "/admin/reports/report_sales/sales/", params={"period_type": "year", "from": "01/01/2022", "to": "12/31/2022"}
    ).text
    count, total = sql(
        "SELECT COUNT(*), SUM(CASE WHEN status != 'canceled' THEN grand_total END) FROM orders"
        " WHERE created_at LIKE '2022%'"
    )[0]
    row = re.search(r"<tr><td[^>]*>2022</td><td[^>]*>(\d+)</td><td[^>]*>\d+</td><td[^>]*>([$\d,.]+)</td>", html)
    assert int(row.group(1)) == count and row.group(2) == f"${total:,.2f}"

    html = client.get(
        "/admin/reports/report_sales/bestsellers/",
        params={"period_type": "year", "from": "1/1/2023", "to": "12/31/2023"},
    ).text
    top = sql(
        "SELECT i.name, SUM(i.qty_ordered) AS q FROM order_items i JOIN orders o ON o.id = i.order_id"
        " WHERE o.status != 'canceled' AND o.created_at LIKE '2023%' GROUP BY i.product_id, i.name"
        " ORDER BY q DESC, i.name LIMIT 1"
    )[0]
    first = re.search(r"<tbody>\s*<tr><td[^>]*>2023</td><td[^>]*>(.*?)</td><td[^>]*>.*?</td><td[^>]*>(\d+)</td>", html)
    assert (first.group(1).replace("&amp;", "&"), int(first.group(2))) == (top["name"], top["q"])

    html = client.get("/admin/search/term/report/").text
    assert records(html) == sql("SELECT COUNT(*) FROM search_terms")[0][0]
    html = client.get("/admin/reports/report_review/product/", params={"sort": "review_cnt", "dir": "desc"}).text
    most = sql("SELECT COUNT(*) FROM reviews GROUP BY product_id ORDER BY 1 DESC LIMIT 1")[0][0]
    assert re.search(rf'<td class="num">{most}</td>', html)


# ---------------------------------------------------------------------------------------------
# In a browser: the auto-login path WebArena uses, and a price change reaching the storefront


def test_browser_login_and_price_edit_reaches_storefront(page, pristine_store, sql):
    urls = pristine_store.urls(0)
    product = sql("SELECT id, url_key FROM products WHERE status = 1 AND qty > 0 ORDER BY id LIMIT 1")[0]
    page.goto(urls["shopping_admin"])
    page.get_by_placeholder("user name").fill("admin")
    page.get_by_placeholder("password").fill("admin1234")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/admin/admin/dashboard/")
    page.goto(f"{urls['shopping_admin']}/catalog/product/edit/id/{product['id']}/")
    page.get_by_label("Price").fill("123.45")
    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_text("You saved the product.").wait_for()
    assert sql("SELECT price FROM products WHERE id = ?", (product["id"],))[0][0] == 123.45
    storefront = httpx.get(f"{urls['shopping']}/{product['url_key']}.html", timeout=20)
    assert storefront.status_code == 200 and "$123.45" in storefront.text


def test_the_grids_fit_the_1280_px_window(page, pristine_store):
    """An agent sees what is inside the window: a grid wider than it would hide its last columns (the orders
    grid's Action links)."""
    admin = pristine_store.urls(0)["shopping_admin"]
    page.goto(admin)
    page.get_by_placeholder("user name").fill("admin")
    page.get_by_placeholder("password").fill("admin1234")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/admin/admin/dashboard/")
    for grid in ("sales/order/", "catalog/product/", "customer/index/", "review/product/"):
        page.goto(f"{admin}/{grid}")
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280, grid
