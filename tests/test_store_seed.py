"""Properties of the seeded store database (webrl.sites.store.seed)."""

import json
import sqlite3
from collections import Counter

import pytest

from webrl.sites.platform import check_password, content_checksum
from webrl.sites.store import STORE

SEED = 0
STATUSES = {"pending", "processing", "complete", "canceled", "closed", "holded"}


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> sqlite3.Connection:
    path = STORE.build_snapshot(tmp_path_factory.mktemp("store"), SEED)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    yield conn
    conn.close()


def rows(db, sql, *args):
    return db.execute(sql, args).fetchall()


def scalar(db, sql, *args):
    return db.execute(sql, args).fetchone()[0]


def checksum_of(tmp_path, seed):
    conn = sqlite3.connect(STORE.build_snapshot(tmp_path, seed))
    try:
        return content_checksum(conn)
    finally:
        conn.close()


def test_same_seed_same_content_and_different_seed_different_content(db, tmp_path):
    again = checksum_of(tmp_path / "again", SEED)
    assert again == content_checksum(db)
    assert checksum_of(tmp_path / "other", SEED + 1) != again


@pytest.mark.parametrize(
    ("table", "low", "high"),
    [
        ("products", 350, 400),
        ("customers", 65, 75),
        ("orders", 420, 480),
        ("reviews", 650, 750),
        ("search_terms", 55, 65),
        ("cart_price_rules", 5, 8),
        ("admin_users", 2, 3),
        ("carts", 0, 0),
        ("cart_items", 0, 0),
    ],
)
def test_row_counts(db, table, low, high):
    assert low <= scalar(db, f"SELECT COUNT(*) FROM {table}") <= high


def test_category_tree(db):
    tops = rows(db, "SELECT * FROM categories WHERE parent_id IS NULL")
    assert 8 <= len(tops) <= 10
    for top in tops:
        children = rows(db, "SELECT * FROM categories WHERE parent_id = ?", top["id"])
        assert 2 <= len(children) <= 4
        assert "/" not in top["url_path"]
        for child in children:
            assert child["url_path"].startswith(top["url_path"] + "/")
            assert scalar(db, "SELECT COUNT(*) FROM categories WHERE parent_id = ?", child["id"]) == 0


def test_products_are_in_leaf_categories(db):
    assert not rows(db, "SELECT id FROM products WHERE category_id IN (SELECT parent_id FROM categories"
                        " WHERE parent_id IS NOT NULL) OR category_id NOT IN (SELECT id FROM categories)")  # fmt: skip


def test_product_identity_price_and_stock(db):
    products = rows(db, "SELECT * FROM products")
    assert len({p["sku"] for p in products}) == len(products)
    assert len({p["url_key"] for p in products}) == len(products)
    assert len({p["name"] for p in products}) == len(products)
    for p in products:
        assert len(p["sku"]) == 10 and p["sku"].startswith("B0") and p["sku"][2:].isalnum()
        assert p["sku"] == p["sku"].upper()
        assert p["price"] > 0 and round(p["price"], 2) == p["price"]
        assert 0 <= p["qty"] <= 300
        assert 2 <= p["description"].count(".") and p["description"].endswith(".")
        options = json.loads(p["options"])
        assert set(options) <= {"Size", "Color"} and all(options.values())
    disabled = sum(p["status"] == 2 for p in products)
    assert 0.01 * len(products) <= disabled <= 0.05 * len(products)
    assert 1 <= sum(p["qty"] == 0 for p in products) <= 15
    with_options = [p for p in products if p["options"] != "{}"]
    assert any("Size" in json.loads(p["options"]) for p in with_options)


def test_emma_can_log_in_and_everyone_has_the_documented_password(db):
    emma = rows(db, "SELECT * FROM customers WHERE email = 'emma.lopez@gmail.com'")[0]
    assert (emma["id"], emma["firstname"], emma["lastname"]) == (1, "Emma", "Lopez")
    assert check_password("Password.123", emma["password_hash"])
    assert not check_password("password.123", emma["password_hash"])
    other = rows(db, "SELECT password_hash FROM customers WHERE id = 2")[0][0]
    assert check_password("Password.123", other)
    emails = [r[0] for r in rows(db, "SELECT email FROM customers")]
    assert len(set(emails)) == len(emails)


def test_every_customer_has_one_default_billing_and_shipping_address(db):
    for customer_id, n, billing, shipping in rows(
        db,
        "SELECT c.id, COUNT(a.id), SUM(a.is_default_billing), SUM(a.is_default_shipping)"
        " FROM customers c LEFT JOIN addresses a ON a.customer_id = c.id GROUP BY c.id",
    ):
        assert 1 <= n <= 2 and billing == 1 and shipping == 1, customer_id


def test_admin_account(db):
    admin = rows(db, "SELECT * FROM admin_users WHERE username = 'admin'")[0]
    assert check_password("admin1234", admin["password_hash"])
    assert (admin["firstname"], admin["lastname"], admin["email"]) == ("Admin", "User", "admin@onestopshop.com")


def test_orders_ids_statuses_and_owners(db):
    orders = rows(db, "SELECT * FROM orders ORDER BY id")
    assert all(o["id"] == int(o["increment_id"]) and len(o["increment_id"]) == 9 for o in orders)
    assert [o["created_at"] for o in orders] == sorted(o["created_at"] for o in orders)
    statuses = Counter(o["status"] for o in orders)
    assert set(statuses) == STATUSES
    assert 0.4 <= statuses["complete"] / len(orders) <= 0.6
    emma = [o for o in orders if o["customer_id"] == 1]
    assert len(emma) >= 35
    assert {o["created_at"][:4] for o in emma} == {"2022", "2023"}
    assert 1 <= sum(o["customer_id"] is None for o in orders) <= 25


def test_order_totals_add_up(db):
    items = {}
    for item in rows(db, "SELECT * FROM order_items"):
        assert round(item["price"] * item["qty_ordered"], 2) == item["row_total"]
        items.setdefault(item["order_id"], []).append(item)
    for order in rows(db, "SELECT * FROM orders"):
        mine = items[order["id"]]
        assert 1 <= len(mine) <= 4
        assert round(sum(i["row_total"] for i in mine), 2) == order["subtotal"]
        expected = round(order["subtotal"] + order["shipping_amount"] - order["discount_amount"], 2)
        assert order["grand_total"] == expected
        if order["shipping_method"] == "Flat Rate - Fixed":
            assert order["shipping_amount"] == 5.0 * sum(i["qty_ordered"] for i in mine)
        else:
            assert order["shipping_method"] == "Best Way - Table Rate"
            assert order["shipping_amount"] == (0.0 if order["subtotal"] > 100 else 15.0)
        assert (order["discount_amount"] > 0) == (order["coupon_code"] is not None)


def test_coupon_use_matches_rules(db):
    rules = {r["coupon_code"]: r for r in rows(db, "SELECT * FROM cart_price_rules")}
    used = Counter(r[0] for r in rows(db, "SELECT coupon_code FROM orders WHERE coupon_code IS NOT NULL"))
    assert set(used) <= set(rules)
    for code, rule in rules.items():
        assert rule["times_used"] == used[code]
        assert not rule["uses_per_coupon"] or rule["times_used"] <= rule["uses_per_coupon"]
    assert any(r["is_active"] == 0 for r in rules.values()) and any(r["to_date"] for r in rules.values())
    for order in rows(db, "SELECT * FROM orders WHERE coupon_code IS NOT NULL"):
        rule = rules[order["coupon_code"]]
        day = order["created_at"][:10]
        assert (rule["from_date"] or "") <= day <= (rule["to_date"] or "9999")


def test_item_quantities_match_status(db):
    for item in rows(db, "SELECT i.*, o.status FROM order_items i JOIN orders o ON o.id = i.order_id"):
        q = item["qty_ordered"]
        expected = {
            "complete": (q, q, 0),
            "processing": (q, 0, 0),
            "closed": (q, 0, 0),
            "canceled": (0, 0, q),
            "pending": (0, 0, 0),
            "holded": (0, 0, 0),
        }[item["status"]]
        assert (item["qty_invoiced"], item["qty_shipped"], item["qty_canceled"]) == expected
        assert 1 <= q <= 3


def test_history_invoices_and_shipments(db):
    history = {}
    for entry in rows(db, "SELECT * FROM order_history ORDER BY id"):
        history.setdefault(entry["order_id"], []).append(entry)
    invoiced = {r[0] for r in rows(db, "SELECT order_id FROM invoices")}
    shipped = {r[0] for r in rows(db, "SELECT order_id FROM shipments")}
    for order in rows(db, "SELECT * FROM orders"):
        entries = history[order["id"]]
        assert (entries[0]["status"], entries[0]["comment"]) == ("pending", "Order placed")
        assert entries[0]["created_at"] == order["created_at"]
        assert entries[-1]["status"] == order["status"]
        assert entries[-1]["created_at"] == order["updated_at"]
        times = [e["created_at"] for e in entries]
        assert times == sorted(times)
        assert (order["id"] in invoiced) == (order["status"] in ("processing", "complete", "closed"))
        assert (order["id"] in shipped) == (order["status"] == "complete")
    for table in ("invoices", "shipments"):
        numbers = [r[0] for r in rows(db, f"SELECT increment_id FROM {table} ORDER BY id")]
        assert numbers == [f"{n:09d}" for n in range(1, len(numbers) + 1)]
    assert not rows(db, "SELECT id FROM shipments WHERE tracking_number IS NULL OR tracking_number = ''")


def test_order_addresses_copy_the_default_address(db):
    for order in rows(db, "SELECT * FROM orders WHERE customer_id IS NOT NULL"):
        shipping = rows(db, "SELECT * FROM addresses WHERE customer_id = ? AND is_default_shipping = 1",
                        order["customer_id"])[0]  # fmt: skip
        copied = json.loads(order["shipping_address"])
        assert copied == {k: shipping[k] for k in copied}
        assert {"street", "city", "region", "postcode", "telephone"} <= set(copied)


def test_order_items_use_enabled_products_and_their_options(db):
    for item in rows(db, "SELECT i.*, p.status AS p_status, p.options AS p_options, p.sku AS p_sku, p.price AS p_price"
                         " FROM order_items i JOIN products p ON p.id = i.product_id"):  # fmt: skip
        assert item["p_status"] == 1 and item["sku"] == item["p_sku"] and item["price"] == item["p_price"]
        offered, chosen = json.loads(item["p_options"]), json.loads(item["options"])
        assert set(chosen) == set(offered) and all(chosen[k] in offered[k] for k in chosen)


def test_reviews(db):
    reviews = rows(db, "SELECT * FROM reviews")
    ratings = Counter(r["rating"] for r in reviews)
    assert set(ratings) == {1, 2, 3, 4, 5}
    assert ratings[4] + ratings[5] > len(reviews) / 2
    statuses = Counter(r["status"] for r in reviews)
    assert set(statuses) == {"Approved", "Pending", "Not Approved"}
    assert 0.8 <= statuses["Approved"] / len(reviews) <= 0.9
    linked = [r for r in reviews if r["customer_id"] is not None]
    assert 0.2 <= len(linked) / len(reviews) <= 0.4
    emma = [r for r in reviews if r["customer_id"] == 1]
    assert 3 <= len(emma) <= 5 and all(r["nickname"] == "Emma" for r in emma)
    per_product = Counter(r["product_id"] for r in reviews)
    assert scalar(db, "SELECT COUNT(*) FROM products") > len(per_product)  # some products have none
    assert sum(n >= 10 for n in per_product.values()) >= 2


def test_wishlists(db):
    counts = dict(rows(db, "SELECT customer_id, COUNT(*) FROM wishlist_items GROUP BY customer_id"))
    assert 4 <= counts.pop(1) <= 6
    assert 15 <= len(counts) <= 25 and all(1 <= n <= 4 for n in counts.values())


def test_all_dates_are_in_2022_and_2023(db):
    columns = {
        "products": ("created_at", "updated_at"),
        "customers": ("created_at",),
        "orders": ("created_at", "updated_at"),
        "order_history": ("created_at",),
        "invoices": ("created_at",),
        "shipments": ("created_at",),
        "reviews": ("created_at",),
        "wishlist_items": ("added_at",),
        "search_terms": ("updated_at",),
        "cart_price_rules": ("created_at",),
    }
    for table, names in columns.items():
        for name in names:
            low, high, bad = db.execute(
                f"SELECT MIN({name}), MAX({name}), SUM({name} NOT GLOB"
                f" '20[0-9][0-9]-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-5][0-9]') FROM {table}"
            ).fetchone()
            assert "2022-01-01 00:00:00" <= low and high <= "2023-12-31 23:59:59", (table, name)
            assert bad == 0, (table, name)
    for low, high in rows(db, "SELECT MIN(from_date), MAX(to_date) FROM cart_price_rules"):
        assert "2022-01-01" <= low and high <= "2023-12-31"
