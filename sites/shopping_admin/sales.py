"""Sales: the orders grid, the order view and its actions (comment, hold, unhold, cancel, invoice,
ship), and the invoices and shipments grids."""

from __future__ import annotations

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response

from webrl.sites.embedded.platform import flash, now, redirect
from webrl.sites.shopping_admin.grid import (
    Column,
    Filter,
    Grid,
    fmt_datetime,
    link,
    view,
)
from webrl.sites.store.store import ORDER_STATUS_LABELS, load_order

STATUS_OPTIONS = tuple(ORDER_STATUS_LABELS.items())
PURCHASE_POINT = Markup("Main Website<br>Main Website Store<br>Default Store View")

BILL_NAME = "json_extract(o.billing_address, '$.firstname') || ' ' || json_extract(o.billing_address, '$.lastname')"
SHIP_NAME = "json_extract(o.shipping_address, '$.firstname') || ' ' || json_extract(o.shipping_address, '$.lastname')"


def _url(path: str) -> str:
    return f"/admin/{path}"


def order_view_url(order_id) -> str:
    return _url(f"sales/order/view/order_id/{order_id}/")


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
        Column("created_at", "Purchase Date", render=lambda r: fmt_datetime(r["created_at"])),
        Column("billing_name", "Bill-to Name"),
        Column("shipping_name", "Ship-to Name"),
        Column("base_grand_total", "Grand Total (Base)", render=lambda r: f"${r['base_grand_total']:,.2f}", cls="num"),
        Column("grand_total", "Grand Total (Purchased)", render=lambda r: f"${r['grand_total']:,.2f}", cls="num"),
        Column("status", "Status", render=lambda r: ORDER_STATUS_LABELS.get(r["status"], r["status"])),
        Column("customer_email", "Customer Email"),
        Column("action", "Action", render=lambda r: link(order_view_url(r["id"]), "View"), sortable=False),
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
        Column("created_at", "Invoice Date", render=lambda r: fmt_datetime(r["created_at"])),
        Column("order_increment_id", "Order #"),
        Column("order_date", "Order Date", render=lambda r: fmt_datetime(r["order_date"])),
        Column("billing_name", "Bill-to Name"),
        Column("state", "Status"),
        Column("base_grand_total", "Grand Total (Base)", render=lambda r: f"${r['base_grand_total']:,.2f}", cls="num"),
        Column("grand_total", "Grand Total (Purchased)", render=lambda r: f"${r['grand_total']:,.2f}", cls="num"),
        Column("action", "Action", render=lambda r: link(order_view_url(r["order_id"]), "View"), sortable=False),
    ],
    search=("increment_id", "order_increment_id", "billing_name"),
    filters=(Filter("increment_id", "Invoice"), Filter("order_increment_id", "Order #"),
             Filter("created_at", "Invoice Date", "date"), Filter("grand_total", "Grand Total", "range"),
             Filter("billing_name", "Bill-to Name")),
    default_sort="created_at",
    default_dir="desc",
)

SHIPMENTS = Grid(
    f"""SELECT s.id, s.increment_id, s.created_at, o.increment_id AS order_increment_id, o.id AS order_id,
        o.created_at AS order_date, {SHIP_NAME} AS shipping_name, s.total_qty, COALESCE(s.tracking_number, '') AS tracking_number
        FROM shipments s JOIN orders o ON o.id = s.order_id""",
    [
        Column("increment_id", "Shipment"),
        Column("created_at", "Ship Date", render=lambda r: fmt_datetime(r["created_at"])),
        Column("order_increment_id", "Order #"),
        Column("order_date", "Order Date", render=lambda r: fmt_datetime(r["order_date"])),
        Column("shipping_name", "Ship-to Name"),
        Column("total_qty", "Total Quantity", cls="num"),
        Column("tracking_number", "Tracking Number"),
        Column("action", "Action", render=lambda r: link(order_view_url(r["order_id"]), "View"), sortable=False),
    ],
    search=("increment_id", "order_increment_id", "shipping_name", "tracking_number"),
    filters=(Filter("increment_id", "Shipment"), Filter("order_increment_id", "Order #"),
             Filter("created_at", "Ship Date", "date"), Filter("shipping_name", "Ship-to Name")),
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
        "INSERT INTO order_history (order_id, status, comment, is_customer_notified, created_at) VALUES (?, ?, ?, ?, ?)",
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


def register(admin) -> None:
    db = lambda: admin.db  # noqa: E731

    def grid_page(grid: Grid, path: str, title: str, template: str = "grid.html", **extra):
        async def handler(request: Request, p: dict[str, str]) -> Response:
            result = grid.run(db(), request.query_params)
            return admin.render(request, template, title=title, g=view(grid, result, _url(path)), **extra)

        return handler

    admin.route("sales/order/index", section="sales")(grid_page(ORDERS, "sales/order/", "Orders"))
    admin.route("sales/invoice/index", section="sales")(grid_page(INVOICES, "sales/invoice/", "Invoices"))
    admin.route("sales/shipment/index", section="sales")(grid_page(SHIPMENTS, "sales/shipment/", "Shipments"))

    def load(p: dict[str, str]):
        try:
            return load_order(db(), int(p.get("order_id", "")))
        except ValueError:
            return None

    @admin.route("sales/order/view", section="sales")
    async def order_view(request: Request, p: dict[str, str]) -> Response:
        order = load(p)
        if order is None:
            flash(request, "This order no longer exists.", "error")
            return admin_redirect("sales/order/")
        customer = None
        if order["customer_id"]:
            customer = db().execute("SELECT * FROM customers WHERE id = ?", (order["customer_id"],)).fetchone()
        paid = sum(inv["grand_total"] for inv in order["invoices"])
        refunded = order["grand_total"] if order["status"] == "closed" else 0.0
        totals = {
            "paid": paid,
            "refunded": refunded,
            "due": 0.0 if order["status"] in ("canceled", "closed") else max(order["grand_total"] - paid, 0.0),
        }
        for item in order["items"]:
            item["item_status"] = item_status(item)
            product = db().execute("SELECT price FROM products WHERE id = ?", (item["product_id"],)).fetchone()
            item["original_price"] = product["price"] if product else item["price"]
        return admin.render(
            request, "order_view.html", title=f"# {order['increment_id']}", order=order, customer=customer,
            totals=totals, can=allowed_actions(order), status_options=[(order["status"], order["status_label"])],
        )

    def admin_redirect(path: str):
        return redirect(_url(path))

    @admin.route("sales/order/addComment", methods=("POST",), section="sales")
    async def add_comment(request: Request, p: dict[str, str]) -> Response:
        order = load(p)
        if order is None:
            return admin.not_found(request)
        form = await request.form()
        comment = str(form.get("history[comment]") or form.get("comment") or "").strip()
        status = str(form.get("history[status]") or form.get("status") or order["status"])
        notify = 1 if form.get("history[is_customer_notified]") or form.get("is_customer_notified") else 0
        if not comment:
            flash(request, "The comment is missing. Enter and try again.", "error")
            return admin_redirect(f"sales/order/view/order_id/{order['id']}/")
        if status not in ORDER_STATUS_LABELS:
            status = order["status"]
        with admin.ctx.db.transaction() as conn:
            if status != order["status"]:
                _set_status(conn, order["id"], status)
            else:
                conn.execute("UPDATE orders SET updated_at = ? WHERE id = ?", (now(), order["id"]))
            _history(conn, order["id"], status, comment, notify)
        flash(request, "You added a comment to the order.")
        return admin_redirect(f"sales/order/view/order_id/{order['id']}/")

    def action(name: str, fn, done: str, refused: str):
        async def handler(request: Request, p: dict[str, str]) -> Response:
            order = load(p)
            if order is None:
                return admin.not_found(request)
            if not allowed_actions(order)[name]:
                flash(request, refused, "error")
            else:
                with admin.ctx.db.transaction() as conn:
                    fn(conn, order)
                flash(request, done)
            return admin_redirect(f"sales/order/view/order_id/{order['id']}/")

        admin.route(f"sales/order/{name}", methods=("POST",), section="sales")(handler)

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

    action("cancel", do_cancel, "You canceled the order.", "You have not canceled the item.")
    action("hold", do_hold, "You put the order on hold.", "You have not put the order on hold.")
    action("unhold", do_unhold, "You released the order from holding status.",
           "The order was not on hold.")

    @admin.route("sales/order/email", methods=("POST",), section="sales")
    async def send_email(request: Request, p: dict[str, str]) -> Response:
        order = load(p)
        if order is None:
            return admin.not_found(request)
        flash(request, "You sent the order email.")
        return admin_redirect(f"sales/order/view/order_id/{order['id']}/")

    # Invoice and ship: a "new" form listing what will be invoiced/shipped, and its save action.
    # Both cover everything still open on the order (no partial documents).

    def create_invoice(conn, order, form) -> str:
        invoiced = sum(inv["grand_total"] for inv in order["invoices"])
        increment = _next_increment(conn, "invoices")
        conn.execute("INSERT INTO invoices (order_id, increment_id, grand_total, created_at) VALUES (?, ?, ?, ?)",
                     (order["id"], increment, round(max(order["grand_total"] - invoiced, 0.0), 2), now()))
        return increment

    def create_shipment(conn, order, form) -> str:
        tracking = str(form.get("tracking[number]") or "").strip() or None
        increment = _next_increment(conn, "shipments")
        conn.execute(
            "INSERT INTO shipments (order_id, increment_id, total_qty, tracking_number, created_at) VALUES (?, ?, ?, ?, ?)",
            (order["id"], increment, sum(to_ship(i) for i in order["items"]), tracking, now()),
        )
        return increment

    def document_routes(doc: str, action_key: str, title: str, new_path: str, remaining, qty_column: str, other_remaining,
                        create, done: str, refused: str) -> None:
        """Routes for creating an invoice or a shipment: `remaining(item)` is what the document covers,
        `qty_column` the item counter it advances; the order completes once `other_remaining` is zero too."""
        base = new_path.rsplit("/", 1)[0]

        def refuse(request: Request, order) -> Response:
            flash(request, refused, "error")
            return admin_redirect(f"sales/order/view/order_id/{order['id']}/")

        async def new(request: Request, p: dict[str, str]) -> Response:
            order = load(p)
            if order is None:
                return admin.not_found(request)
            if not allowed_actions(order)[action_key]:
                return refuse(request, order)
            for item in order["items"]:
                item["qty_to"] = remaining(item)
            return admin.render(request, "order_doc_new.html", title=title, order=order, kind=doc,
                                action=_url(f"{base}/save/order_id/{order['id']}/"))

        async def save(request: Request, p: dict[str, str]) -> Response:
            order = load(p)
            if order is None:
                return admin.not_found(request)
            if not allowed_actions(order)[action_key]:
                return refuse(request, order)
            form = await request.form()
            comment = str(form.get(f"{doc}[comment_text]") or "").strip()
            with admin.ctx.db.transaction() as conn:
                for item in order["items"]:
                    if qty := remaining(item):
                        conn.execute(f"UPDATE order_items SET {qty_column} = {qty_column} + ? WHERE id = ?",
                                     (qty, item["id"]))
                increment = create(conn, order, form)
                status = "complete" if all(other_remaining(i) == 0 for i in order["items"]) else "processing"
                _set_status(conn, order["id"], status)
                _history(conn, order["id"], status, comment or f"{doc.title()} #{increment} created.",
                         1 if form.get(f"{doc}[send_email]") else 0)
            flash(request, done)
            return admin_redirect(f"sales/order/view/order_id/{order['id']}/")

        admin.route(new_path, section="sales")(new)
        admin.route(f"{base}/save", methods=("POST",), section="sales")(save)

    document_routes("invoice", "invoice", "New Invoice", "sales/order_invoice/new", to_invoice, "qty_invoiced", to_ship,
                    create_invoice, "The invoice has been created.",
                    "The order does not allow an invoice to be created.")
    document_routes("shipment", "ship", "New Shipment", "admin/order_shipment/new", to_ship, "qty_shipped", to_invoice,
                    create_shipment, "The shipment has been created.",
                    "The order does not allow a shipment to be created.")
    for action_name in ("new", "save"):  # Magento serves the shipment pages under both fronts
        admin.routes[("sales", "order_shipment", action_name)] = admin.routes[("admin", "order_shipment", action_name)]
