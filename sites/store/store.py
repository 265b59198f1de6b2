"""Store logic shared by the storefront (shopping) and the admin (shopping_admin).

Catalog lookups, cart totals with shipping and coupon discounts, placing an order, and loading an
order with its items. Every function takes the store's sqlite3 connection (Row factory); functions
that write expect to run inside `db.transaction()` or open one themselves where noted.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from webrl.sites.platform import Transaction, now

# Magento's "Maximum Query Length" (catalog/search/max_query_length, 128 by default): the storefront cuts a longer
# search there (and says so); the admin's grids take no more in a search or filter either.
MAX_QUERY_LENGTH = 128

# ---------------------------------------------------------------------------------------------
# Orders: statuses, as Magento labels them, and the state each status belongs to.

ORDER_STATUS_LABELS: dict[str, str] = {
    "pending": "Pending",
    "processing": "Processing",
    "complete": "Complete",
    "canceled": "Canceled",
    "closed": "Closed",
    "holded": "On Hold",
}
ORDER_STATES: dict[str, str] = {
    "pending": "new",
    "processing": "processing",
    "complete": "complete",
    "canceled": "canceled",
    "closed": "closed",
    "holded": "holded",
}

# The fields of an address, in display order (orders store them as JSON).
ADDRESS_FIELDS = ("firstname", "lastname", "street", "city", "region", "postcode", "country", "telephone")


# ---------------------------------------------------------------------------------------------
# Shipping


@dataclass(frozen=True)
class ShippingMethod:
    code: str
    carrier: str  # "Flat Rate"
    method: str  # "Fixed"

    @property
    def title(self) -> str:
        """The name orders store, e.g. 'Flat Rate - Fixed'."""
        return f"{self.carrier} - {self.method}"


SHIPPING_METHODS: dict[str, ShippingMethod] = {
    "flatrate": ShippingMethod("flatrate", "Flat Rate", "Fixed"),
    "tablerate": ShippingMethod("tablerate", "Best Way", "Table Rate"),
}
FLAT_RATE_PER_ITEM = 5.0
TABLE_RATE_PER_ORDER = 15.0
TABLE_RATE_FREE_FROM = 100.0


def shipping_amount(code: str, qty: int, subtotal: float) -> float:
    """Flat Rate: $5.00 per item. Best Way: $15.00 per order, free from a $100 subtotal."""
    if code == "flatrate":
        return round(FLAT_RATE_PER_ITEM * qty, 2)
    if code == "tablerate":
        return 0.0 if subtotal >= TABLE_RATE_FREE_FROM else TABLE_RATE_PER_ORDER
    raise ValueError(f"unknown shipping method: {code}")


# ---------------------------------------------------------------------------------------------
# Catalog


def category_tree(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Top-level categories in menu order, each a dict with its `children` (same shape)."""
    rows = [dict(r) for r in conn.execute("SELECT * FROM categories ORDER BY position, id")]
    by_id = {r["id"]: {**r, "children": []} for r in rows}
    top = []
    for r in rows:
        node = by_id[r["id"]]
        parent = by_id.get(r["parent_id"]) if r["parent_id"] is not None else None
        (parent["children"] if parent else top).append(node)
    return top


def category_by_path(conn: sqlite3.Connection, url_path: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM categories WHERE url_path = ?", (url_path,)).fetchone()


def descendant_category_ids(conn: sqlite3.Connection, category_id: int) -> list[int]:
    """The category and all categories below it."""
    rows = conn.execute(
        "WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT c.id FROM categories c JOIN sub ON c.parent_id = sub.id)"
        " SELECT id FROM sub",
        (category_id,),
    )
    return [r[0] for r in rows]


def product_by_sku(conn: sqlite3.Connection, sku: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM products WHERE sku = ?", (sku,)).fetchone()


def product_by_url_key(conn: sqlite3.Connection, url_key: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM products WHERE url_key = ?", (url_key,)).fetchone()


# ---------------------------------------------------------------------------------------------
# Coupons (cart price rules)


def today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def find_coupon_rule(conn: sqlite3.Connection, code: str, on: str | None = None) -> sqlite3.Row | None:
    """The active cart price rule with this coupon code (case-insensitive) that is valid on date `on`
    (default today) and has uses left; None when there is none."""
    on = on or today()
    rule = conn.execute(
        "SELECT * FROM cart_price_rules WHERE lower(coupon_code) = lower(?) AND is_active = 1", (code.strip(),)
    ).fetchone()
    if rule is None:
        return None
    if rule["from_date"] and rule["from_date"][:10] > on:
        return None
    if rule["to_date"] and rule["to_date"][:10] < on:
        return None
    if rule["uses_per_coupon"] and rule["times_used"] >= rule["uses_per_coupon"]:
        return None
    return rule


def coupon_discount(rule: sqlite3.Row | dict, subtotal: float) -> float:
    """The discount (a positive amount) the rule gives off the subtotal."""
    if rule["discount_type"] == "by_percent":
        amount = subtotal * rule["discount_amount"] / 100
    else:
        amount = rule["discount_amount"]
    return round(min(max(amount, 0.0), subtotal), 2)


# ---------------------------------------------------------------------------------------------
# Carts


@dataclass
class CartLine:
    item_id: int
    product_id: int
    sku: str
    name: str
    url_key: str
    price: float
    qty: int
    options: dict[str, str]
    stock_qty: int
    status: int

    @property
    def row_total(self) -> float:
        return round(self.price * self.qty, 2)


@dataclass
class CartTotals:
    lines: list[CartLine] = field(default_factory=list)
    subtotal: float = 0.0
    qty: int = 0
    coupon_code: str | None = None
    discount: float = 0.0
    shipping_method: str | None = None  # a SHIPPING_METHODS code
    shipping: float = 0.0

    @property
    def grand_total(self) -> float:
        return round(self.subtotal - self.discount + self.shipping, 2)


def cart_lines(conn: sqlite3.Connection, cart_id: int) -> list[CartLine]:
    rows = conn.execute(
        "SELECT ci.id AS item_id, ci.product_id, ci.qty, ci.options, p.sku, p.name, p.url_key, p.price,"
        " p.qty AS stock_qty, p.status FROM cart_items ci JOIN products p ON p.id = ci.product_id"
        " WHERE ci.cart_id = ? ORDER BY ci.id",
        (cart_id,),
    )
    return [
        CartLine(
            r["item_id"],
            r["product_id"],
            r["sku"],
            r["name"],
            r["url_key"],
            r["price"],
            r["qty"],
            json.loads(r["options"] or "{}"),
            r["stock_qty"],
            r["status"],
        )
        for r in rows
    ]


def cart_totals(conn: sqlite3.Connection, cart_id: int | None, shipping_method: str | None = None) -> CartTotals:
    """Lines, subtotal, coupon discount (when the cart's coupon is still valid) and, given a method,
    shipping of a cart. Disabled products are left out, as Magento drops them from quotes."""
    totals = CartTotals(shipping_method=shipping_method)
    if cart_id is None:
        return totals
    totals.lines = [line for line in cart_lines(conn, cart_id) if line.status == 1]
    totals.subtotal = round(sum(line.row_total for line in totals.lines), 2)
    totals.qty = sum(line.qty for line in totals.lines)
    cart = conn.execute("SELECT coupon_code FROM carts WHERE id = ?", (cart_id,)).fetchone()
    if cart and cart["coupon_code"]:
        rule = find_coupon_rule(conn, cart["coupon_code"])
        if rule is not None:
            totals.coupon_code = rule["coupon_code"]
            totals.discount = coupon_discount(rule, totals.subtotal)
    if shipping_method:
        totals.shipping = shipping_amount(shipping_method, totals.qty, totals.subtotal)
    return totals


def add_to_cart(conn: sqlite3.Connection, cart_id: int, product_id: int, qty: int, options: dict[str, str]) -> None:
    """Add qty of a product with these options, merging with an identical line. The caller checks stock."""
    encoded = json.dumps(options, sort_keys=True)
    for line in cart_lines(conn, cart_id):
        if line.product_id == product_id and json.dumps(line.options, sort_keys=True) == encoded:
            conn.execute("UPDATE cart_items SET qty = qty + ? WHERE id = ?", (qty, line.item_id))
            return
    conn.execute(
        "INSERT INTO cart_items (cart_id, product_id, options, qty) VALUES (?, ?, ?, ?)",
        (cart_id, product_id, encoded, qty),
    )


# ---------------------------------------------------------------------------------------------
# Orders


class OrderError(Exception):
    """The order cannot be placed; the message is shown to the customer."""


def next_order_id(conn: sqlite3.Connection) -> int:
    row = conn.execute(
        "SELECT MAX(COALESCE(MAX(id), 0), COALESCE(MAX(CAST(increment_id AS INTEGER)), 0)) FROM orders"
    ).fetchone()
    return int(row[0]) + 1


def place_order(
    conn: sqlite3.Connection,
    cart_id: int,
    *,
    customer_id: int | None,
    email: str,
    firstname: str,
    lastname: str,
    shipping_address: dict[str, str],
    shipping_method: str,
    billing_address: dict[str, str] | None = None,
    payment_method: str = "Check / Money order",
) -> int:
    """Turn the cart into a 'pending' order and return its id (== int(increment_id)).

    Opens its own transaction: records the order, its items and a history entry, deducts stock,
    deactivates the cart and counts a use of its coupon. Raises OrderError when it cannot.
    """
    if shipping_method not in SHIPPING_METHODS:
        raise OrderError("The shipping method is missing. Select the shipping method and try again.")
    with Transaction(conn):
        totals = cart_totals(conn, cart_id, shipping_method)
        if not totals.lines:
            raise OrderError("You have no items in your shopping cart.")
        needed: dict[int, int] = {}
        for line in totals.lines:
            needed[line.product_id] = needed.get(line.product_id, 0) + line.qty
        for line in totals.lines:
            if needed[line.product_id] > line.stock_qty:
                raise OrderError(f'The requested qty of "{line.name}" is not available.')
        order_id = next_order_id(conn)
        stamp = now()
        conn.execute(
            "INSERT INTO orders (id, increment_id, customer_id, customer_email, customer_firstname, customer_lastname,"
            " status, subtotal, shipping_amount, discount_amount, grand_total, coupon_code, shipping_method,"
            " payment_method, shipping_address, billing_address, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                order_id,
                f"{order_id:09d}",
                customer_id,
                email,
                firstname,
                lastname,
                totals.subtotal,
                totals.shipping,
                totals.discount,
                totals.grand_total,
                totals.coupon_code,
                SHIPPING_METHODS[shipping_method].title,
                payment_method,
                json.dumps(shipping_address),
                json.dumps(billing_address or shipping_address),
                stamp,
                stamp,
            ),
        )
        for line in totals.lines:
            conn.execute(
                "INSERT INTO order_items (order_id, product_id, sku, name, options, price, qty_ordered, row_total)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    order_id,
                    line.product_id,
                    line.sku,
                    line.name,
                    json.dumps(line.options),
                    line.price,
                    line.qty,
                    line.row_total,
                ),
            )
            conn.execute("UPDATE products SET qty = qty - ? WHERE id = ?", (line.qty, line.product_id))
        conn.execute(
            "INSERT INTO order_history (order_id, status, comment, is_customer_notified, created_at)"
            " VALUES (?, 'pending', '', 1, ?)",
            (order_id, stamp),
        )
        conn.execute("UPDATE carts SET is_active = 0 WHERE id = ?", (cart_id,))
        if totals.coupon_code:
            conn.execute(
                "UPDATE cart_price_rules SET times_used = times_used + 1 WHERE coupon_code = ?", (totals.coupon_code,)
            )
    return order_id


def load_order(conn: sqlite3.Connection, order_id: int) -> dict[str, Any] | None:
    """The order as a dict with parsed `shipping_address`/`billing_address`, its `items` (options
    parsed), `history`, `invoices` and `shipments`, plus `status_label` and `state`."""
    row = conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
    if row is None:
        return None
    order = dict(row)
    order["shipping_address"] = json.loads(order["shipping_address"] or "{}")
    order["billing_address"] = json.loads(order["billing_address"] or "{}")
    order["status_label"] = ORDER_STATUS_LABELS.get(order["status"], order["status"].title())
    order["state"] = ORDER_STATES.get(order["status"], order["status"])
    order["items"] = []
    for item in conn.execute("SELECT * FROM order_items WHERE order_id = ? ORDER BY id", (order_id,)):
        item = dict(item)
        item["options"] = json.loads(item["options"] or "{}")
        order["items"].append(item)
    order["history"] = [
        dict(r) for r in conn.execute("SELECT * FROM order_history WHERE order_id = ? ORDER BY id", (order_id,))
    ]
    order["invoices"] = [
        dict(r) for r in conn.execute("SELECT * FROM invoices WHERE order_id = ? ORDER BY id", (order_id,))
    ]
    order["shipments"] = [
        dict(r) for r in conn.execute("SELECT * FROM shipments WHERE order_id = ? ORDER BY id", (order_id,))
    ]
    return order
