"""Sales: the orders grid, the order view and its actions (comment, hold, unhold, cancel, invoice,
ship), and the invoices and shipments grids."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response

from webrl.sites.platform import flash, now, redirect, row_id
from webrl.sites.shopping_admin.grid import (
    Column,
    Filter,
    Grid,
    action_column,
    datetime_column,
    money_column,
)
from webrl.sites.shopping_admin.web import POST, Admin, AdminRoute, Handler, grid_page, url
from webrl.sites.store.store import ORDER_STATUS_LABELS, load_order

STATUS_OPTIONS = tuple(ORDER_STATUS_LABELS.items())
PURCHASE_POINT = Markup("Main Website<br>Main Website Store<br>Default Store View")

BILL_NAME = "json_extract(o.billing_address, '$.firstname') || ' ' || json_extract(o.billing_address, '$.lastname')"
SHIP_NAME = "json_extract(o.shipping_address, '$.firstname') || ' ' || json_extract(o.shipping_address, '$.lastname')"


def order_view_url(order_id) -> str:
    return url(f"sales/order/view/order_id/{order_id}/")


ORDERS = Grid(
    f"""SELECT o.id, o.increment_id, o.customer_id, 'Main Website' AS store, o.created_at, {BILL_NAME} AS billing_name,
        {SHIP_NAME} AS shipping_name, o.grand_total AS base_grand_total, o.grand_total, o.status,
        o.customer_email, o.customer_firstname || ' ' || o.customer_lastname AS customer_name,
        COALESCE(c.group_name, 'NOT LOGGED IN') AS customer_group, o.payment_method, o.shipping_method,
        o.subtotal, o.shipping_amount,
        CASE WHEN o.status = 'closed' THEN o.grand_total ELSE 0 END AS total_refunded
        FROM orders o LEFT JOIN customers c ON c.id = o.customer_id""",
    [
        Column("increment_id", "ID"),
        Column("store", "Purchase Point", render=lambda r: PURCHASE_POINT, sortable=False),
        datetime_column("created_at", "Purchase Date"),
        Column("billing_name", "Bill-to Name"),
        Column("shipping_name", "Ship-to Name"),
        money_column("base_grand_total", "Grand Total (Base)"),
        money_column("grand_total", "Grand Total (Purchased)"),
        Column("status", "Status", render=lambda r: ORDER_STATUS_LABELS.get(r["status"], r["status"])),
        Column("customer_email", "Customer Email"),
        action_column("View", lambda r: order_view_url(r["id"])),
    ],
    search=("increment_id", "billing_name", "shipping_name", "customer_email", "customer_name"),
    filters=(
        Filter("increment_id", "ID"),
        Filter("created_at", "Purchase Date", "date"),
        Filter("grand_total", "Grand Total (Purchased)", "range"),
        Filter("base_grand_total", "Grand Total (Base)", "range"),
        Filter("status", "Status", "select", STATUS_OPTIONS),
        Filter("billing_name", "Bill-to Name"),
        Filter("shipping_name", "Ship-to Name"),
        Filter("customer_email", "Customer Email"),
    ),
    default_sort="created_at",
    default_dir="desc",
)

INVOICES = Grid(
    f"""SELECT i.id, i.increment_id, i.created_at, o.increment_id AS order_increment_id, o.id AS order_id,
        o.created_at AS order_date, {BILL_NAME} AS billing_name, 'Paid' AS state,
        i.grand_total AS base_grand_total, i.grand_total
        FROM invoices i JOIN orders o ON o.id = i.order_id""",
    [
        Column("increment_id", "Invoice"),
        datetime_column("created_at", "Invoice Date"),
        Column("order_increment_id", "Order #"),
        datetime_column("order_date", "Order Date"),
        Column("billing_name", "Bill-to Name"),
        Column("state", "Status"),
        money_column("base_grand_total", "Grand Total (Base)"),
        money_column("grand_total", "Grand Total (Purchased)"),
        action_column("View", lambda r: order_view_url(r["order_id"])),
    ],
    search=("increment_id", "order_increment_id", "billing_name"),
    filters=(
        Filter("increment_id", "Invoice"),
        Filter("order_increment_id", "Order #"),
        Filter("created_at", "Invoice Date", "date"),
        Filter("grand_total", "Grand Total", "range"),
        Filter("billing_name", "Bill-to Name"),
    ),
    default_sort="created_at",
    default_dir="desc",
)

SHIPMENTS = Grid(
    f"""SELECT s.id, s.increment_id, s.created_at, o.increment_id AS order_increment_id, o.id AS order_id,
        o.created_at AS order_date, {SHIP_NAME} AS shipping_name, s.total_qty,
        COALESCE(s.tracking_number, '') AS tracking_number
        FROM shipments s JOIN orders o ON o.id = s.order_id""",
    [
        Column("increment_id", "Shipment"),
        datetime_column("created_at", "Ship Date"),
        Column("order_increment_id", "Order #"),
        datetime_column("order_date", "Order Date"),
        Column("shipping_name", "Ship-to Name"),
        Column("total_qty", "Total Quantity", cls="num"),
        Column("tracking_number", "Tracking Number"),
        action_column("View", lambda r: order_view_url(r["order_id"])),
    ],
    search=("increment_id", "order_increment_id", "shipping_name", "tracking_number"),
    filters=(
        Filter("increment_id", "Shipment"),
        Filter("order_increment_id", "Order #"),
        Filter("created_at", "Ship Date", "date"),
        Filter("shipping_name", "Ship-to Name"),
    ),
    default_sort="created_at",
    default_dir="desc",
)


# ---------------------------------------------------------------------------------------------
# Order rules (Magento's canCancel / canHold / canInvoice / canShip, for whole-order operations)


def to_invoice(item) -> int:
    return max(item["qty_ordered"] - item["qty_invoiced"] - item["qty_canceled"], 0)


def to_ship(item) -> int:
    return max(item["qty_ordered"] - item["qty_shipped"] - item["qty_canceled"], 0)


def to_cancel(item) -> int:
    return min(to_invoice(item), to_ship(item))


def item_status(item) -> str:
    if item["qty_canceled"] >= item["qty_ordered"]:
        return "Canceled"
    if item["qty_shipped"] and item["qty_invoiced"]:
        return "Mixed" if item["qty_shipped"] < item["qty_ordered"] else "Shipped"
    if item["qty_shipped"]:
        return "Shipped"
    if item["qty_invoiced"]:
        return "Invoiced"
    return "Ordered"


def allowed_actions(order) -> dict[str, bool]:
    open_ = order["status"] in ("pending", "processing")
    items = order["items"]
    return {
        "cancel": open_ and any(to_cancel(i) for i in items),
        "hold": open_,
        "unhold": order["status"] == "holded",
        "invoice": open_ and any(to_invoice(i) for i in items),
        "ship": open_ and any(to_ship(i) for i in items),
    }


def _next_increment(conn, table: str) -> str:
    value = conn.execute(f"SELECT COALESCE(MAX(CAST(increment_id AS INTEGER)), 0) + 1 FROM {table}").fetchone()[0]
    return f"{value:09d}"


def _history(conn, order_id: int, status: str, comment: str = "", notified: int = 0) -> None:
    conn.execute(
        "INSERT INTO order_history (order_id, status, comment, is_customer_notified, created_at) VALUES (?, ?, ?, ?, "
        "?)",
        (order_id, status, comment, notified, now()),
    )


def _set_status(conn, order_id: int, status: str) -> None:
    conn.execute("UPDATE orders SET status = ?, updated_at = ? WHERE id = ?", (status, now(), order_id))


def status_before_hold(conn, order) -> str:
    """The status the order had before it was put on hold (from its history; else from its progress)."""
    row = conn.execute(
        "SELECT status FROM order_history WHERE order_id = ? AND status NOT IN ('holded') ORDER BY id DESC LIMIT 1",
        (order["id"],),
    ).fetchone()
    if row and row["status"] in ("pending", "processing"):
        return row["status"]
    progressed = any(i["qty_invoiced"] or i["qty_shipped"] for i in order["items"])
    return "processing" if progressed else "pending"


def load(admin: Admin, p: dict[str, str]):
    """The order of the URL's order_id, or None."""
    order_id = row_id(p.get("order_id", ""))
    return None if order_id is None else load_order(admin.db, order_id)


def back_to_order(order) -> Response:
    return redirect(order_view_url(order["id"]))


async def order_view(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    order = load(admin, p)
    if order is None:
        flash(request, "This order no longer exists.", "error")
        return redirect(url("sales/order/"))
    customer = None
    if order["customer_id"]:
        customer = admin.row("customers", order["customer_id"])
    paid = sum(inv["grand_total"] for inv in order["invoices"])
    refunded = order["grand_total"] if order["status"] == "closed" else 0.0
    totals = {
        "paid": paid,
        "refunded": refunded,
        "due": 0.0 if order["status"] in ("canceled", "closed") else max(order["grand_total"] - paid, 0.0),
    }
    for item in order["items"]:
        item["item_status"] = item_status(item)
        product = admin.db.execute("SELECT price FROM products WHERE id = ?", (item["product_id"],)).fetchone()
        item["original_price"] = product["price"] if product else item["price"]
    return admin.render(
        request,
        "order_view.html",
        title=f"# {order['increment_id']}",
        order=order,
        customer=customer,
        totals=totals,
        can=allowed_actions(order),
        status_options=[(order["status"], order["status_label"])],
    )


def order_action(endpoint):
    """A POST on the URL's order: the endpoint gets the order; a missing order is the 404 page."""

    @functools.wraps(endpoint)
    async def wrapper(request: Request, admin: Admin, p: dict[str, str]) -> Response:
        order = load(admin, p)
        if order is None:
            return admin.not_found(request)
        return await endpoint(request, admin, order)

    return wrapper


@order_action
async def add_comment(request: Request, admin: Admin, order) -> Response:
    form = await request.form()
    comment = str(form.get("history[comment]") or form.get("comment") or "").strip()
    status = str(form.get("history[status]") or form.get("status") or order["status"])
    notify = 1 if form.get("history[is_customer_notified]") or form.get("is_customer_notified") else 0
    if not comment:
        flash(request, "The comment is missing. Enter and try again.", "error")
        return back_to_order(order)
    if status not in ORDER_STATUS_LABELS:
        status = order["status"]
    with admin.ctx.db.transaction() as conn:
        if status != order["status"]:
            _set_status(conn, order["id"], status)
        else:
            conn.execute("UPDATE orders SET updated_at = ? WHERE id = ?", (now(), order["id"]))
        _history(conn, order["id"], status, comment, notify)
    flash(request, "You added a comment to the order.")
    return back_to_order(order)


@order_action
async def send_email(request: Request, admin: Admin, order) -> Response:
    flash(request, "You sent the order email.")
    return back_to_order(order)


def status_action(name: str, apply, done: str, refused: str) -> Handler:
    """A whole-order operation `name` (see allowed_actions): `apply(conn, order)` does it."""

    @order_action
    async def handler(request: Request, admin: Admin, order) -> Response:
        if not allowed_actions(order)[name]:
            flash(request, refused, "error")
        else:
            with admin.ctx.db.transaction() as conn:
                apply(conn, order)
            flash(request, done)
        return back_to_order(order)

    return handler


def do_cancel(conn, order) -> None:
    for item in order["items"]:
        qty = to_cancel(item)
        if qty:
            conn.execute("UPDATE order_items SET qty_canceled = qty_canceled + ? WHERE id = ?", (qty, item["id"]))
            if item["product_id"] is not None:
                conn.execute("UPDATE products SET qty = qty + ? WHERE id = ?", (qty, item["product_id"]))
    _set_status(conn, order["id"], "canceled")
    _history(conn, order["id"], "canceled", "")


def do_hold(conn, order) -> None:
    _set_status(conn, order["id"], "holded")
    _history(conn, order["id"], "holded", "")


def do_unhold(conn, order) -> None:
    status = status_before_hold(conn, order)
    _set_status(conn, order["id"], status)
    _history(conn, order["id"], status, "")


# Invoice and ship: a "new" form listing what will be invoiced/shipped, and its save action.
# Both cover everything still open on the order (no partial documents).


def create_invoice(conn, order, form) -> str:
    invoiced = sum(inv["grand_total"] for inv in order["invoices"])
    increment = _next_increment(conn, "invoices")
    conn.execute(
        "INSERT INTO invoices (order_id, increment_id, grand_total, created_at) VALUES (?, ?, ?, ?)",
        (order["id"], increment, round(max(order["grand_total"] - invoiced, 0.0), 2), now()),
    )
    return increment


def create_shipment(conn, order, form) -> str:
    tracking = str(form.get("tracking[number]") or "").strip() or None
    increment = _next_increment(conn, "shipments")
    conn.execute(
        "INSERT INTO shipments (order_id, increment_id, total_qty, tracking_number, created_at) VALUES (?, ?, ?, ?, ?)",
        (order["id"], increment, sum(to_ship(i) for i in order["items"]), tracking, now()),
    )
    return increment


@dataclass(frozen=True)
class Document:
    """An invoice or a shipment: `remaining(item)` is what the document covers, `qty_column` the item
    counter it advances; the order completes once `other_remaining` is zero too."""

    kind: str  # invoice | shipment
    action_key: str  # its entry in allowed_actions
    title: str
    base: str  # 'front/controller' of its new and save pages
    remaining: Callable
    qty_column: str
    other_remaining: Callable
    create: Callable  # (conn, order, form) -> the new document's increment id
    done: str
    refused: str


INVOICE = Document(
    "invoice",
    "invoice",
    "New Invoice",
    "sales/order_invoice",
    to_invoice,
    "qty_invoiced",
    to_ship,
    create_invoice,
    "The invoice has been created.",
    "The order does not allow an invoice to be created.",
)
SHIPMENT = Document(
    "shipment",
    "ship",
    "New Shipment",
    "admin/order_shipment",
    to_ship,
    "qty_shipped",
    to_invoice,
    create_shipment,
    "The shipment has been created.",
    "The order does not allow a shipment to be created.",
)


def document_action(doc: Document, endpoint) -> Handler:
    """A page creating `doc` for the URL's order: the endpoint gets the order and `doc`; an order that
    does not allow the document is shown again with `doc.refused`."""

    @order_action
    async def handler(request: Request, admin: Admin, order) -> Response:
        if not allowed_actions(order)[doc.action_key]:
            flash(request, doc.refused, "error")
            return back_to_order(order)
        return await endpoint(request, admin, order, doc)

    return handler


async def new_document(request: Request, admin: Admin, order, doc: Document) -> Response:
    for item in order["items"]:
        item["qty_to"] = doc.remaining(item)
    return admin.render(
        request,
        "order_doc_new.html",
        title=doc.title,
        order=order,
        kind=doc.kind,
        action=url(f"{doc.base}/save/order_id/{order['id']}/"),
    )


async def save_document(request: Request, admin: Admin, order, doc: Document) -> Response:
    form = await request.form()
    comment = str(form.get(f"{doc.kind}[comment_text]") or "").strip()
    with admin.ctx.db.transaction() as conn:
        for item in order["items"]:
            if qty := doc.remaining(item):
                conn.execute(
                    f"UPDATE order_items SET {doc.qty_column} = {doc.qty_column} + ? WHERE id = ?", (qty, item["id"])
                )
        increment = doc.create(conn, order, form)
        status = "complete" if all(doc.other_remaining(i) == 0 for i in order["items"]) else "processing"
        _set_status(conn, order["id"], status)
        _history(
            conn,
            order["id"],
            status,
            comment or f"{doc.kind.title()} #{increment} created.",
            1 if form.get(f"{doc.kind}[send_email]") else 0,
        )
    flash(request, doc.done)
    return back_to_order(order)


new_invoice, save_invoice = document_action(INVOICE, new_document), document_action(INVOICE, save_document)
new_shipment, save_shipment = document_action(SHIPMENT, new_document), document_action(SHIPMENT, save_document)
cancel = status_action("cancel", do_cancel, "You canceled the order.", "You have not canceled the item.")
hold = status_action("hold", do_hold, "You put the order on hold.", "You have not put the order on hold.")
unhold = status_action("unhold", do_unhold, "You released the order from holding status.", "The order was not on hold.")

ROUTES = [
    AdminRoute("sales/order/index", grid_page(ORDERS, "sales/order/", "Orders"), section="sales"),
    AdminRoute("sales/invoice/index", grid_page(INVOICES, "sales/invoice/", "Invoices"), section="sales"),
    AdminRoute("sales/shipment/index", grid_page(SHIPMENTS, "sales/shipment/", "Shipments"), section="sales"),
    AdminRoute("sales/order/view", order_view, section="sales"),
    AdminRoute("sales/order/addComment", add_comment, methods=POST, section="sales"),
    AdminRoute("sales/order/cancel", cancel, methods=POST, section="sales"),
    AdminRoute("sales/order/hold", hold, methods=POST, section="sales"),
    AdminRoute("sales/order/unhold", unhold, methods=POST, section="sales"),
    AdminRoute("sales/order/email", send_email, methods=POST, section="sales"),
    AdminRoute("sales/order_invoice/new", new_invoice, section="sales"),
    AdminRoute("sales/order_invoice/save", save_invoice, methods=POST, section="sales"),
    AdminRoute("admin/order_shipment/new", new_shipment, section="sales"),
    AdminRoute("admin/order_shipment/save", save_shipment, methods=POST, section="sales"),
    # Magento serves the shipment pages under both fronts
    AdminRoute("sales/order_shipment/new", new_shipment, section="sales"),
    AdminRoute("sales/order_shipment/save", save_shipment, methods=POST, section="sales"),
]
