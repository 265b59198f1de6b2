"""Reports: period reports driven by a GET filter form ("Show Report"), and review/stock grids.

Period reports group orders by the day, month or year of `created_at` (UTC) between From and To
(inclusive; either may be left empty). Nothing is shown until the form is submitted, as in Magento.
Canceled orders never count as sales: Bestsellers, Ordered Products and the customer reports leave
them out; the Orders report counts them in "Orders" and shows their amount as "Canceled".
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from starlette.requests import Request
from starlette.responses import Response

from webrl.sites.platform import flash
from webrl.sites.shopping_admin.grid import (
    Column,
    Filter,
    Grid,
    action_column,
    datetime_column,
    parse_date,
)
from webrl.sites.shopping_admin.web import Admin, AdminRoute, Handler, grid_page, url
from webrl.sites.store.store import ORDER_STATUS_LABELS

PERIODS = (("day", "Day"), ("month", "Month"), ("year", "Year"))
PERIOD_LEN = {"day": 10, "month": 7, "year": 4}
BESTSELLER_LIMIT = 5  # Magento ranks the top 5 products of each period
CUSTOMER_LIMIT = 5


def money(value) -> str:
    return f"${(value or 0):,.2f}"


def period_label(key: str, period: str) -> str:
    if period == "day":
        dt = datetime.strptime(key, "%Y-%m-%d")
        return f"{dt:%b} {dt.day}, {dt.year}"
    if period == "month":
        year, month = key.split("-")
        return f"{int(month)}/{year}"
    return key


class ReportFilter:
    """The submitted filter form: period, date range and (optionally) order statuses."""

    def __init__(self, query):
        self.submitted = any(k in query for k in ("period_type", "from", "to"))
        self.period = query.get("period_type") if query.get("period_type") in PERIOD_LEN else "day"
        self.from_raw = query.get("from", "")
        self.to_raw = query.get("to", "")
        self.start = parse_date(self.from_raw)
        self.end = parse_date(self.to_raw)
        self.invalid = bool((self.from_raw.strip() and not self.start) or (self.to_raw.strip() and not self.end))
        self.show_statuses = query.get("show_order_statuses") == "1"
        self.statuses = (
            [s for s in query.getlist("order_statuses[]") if s in ORDER_STATUS_LABELS]
            if hasattr(query, "getlist")
            else []
        )

    def where(self, column: str = "o.created_at") -> tuple[str, list]:
        clauses, params = [], []
        if self.start:
            clauses.append(f"substr({column}, 1, 10) >= ?")
            params.append(self.start)
        if self.end:
            clauses.append(f"substr({column}, 1, 10) <= ?")
            params.append(self.end)
        if self.show_statuses and self.statuses:
            clauses.append("o.status IN (" + ", ".join("?" for _ in self.statuses) + ")")
            params.extend(self.statuses)
        return (" AND ".join(clauses) or "1"), params

    def bucket(self, column: str = "o.created_at") -> str:
        return f"substr({column}, 1, {PERIOD_LEN[self.period]})"


REVIEWS_BY_PRODUCT = Grid(
    """SELECT p.id, p.name, p.sku, COUNT(r.id) AS review_cnt, ROUND(AVG(r.rating), 2) AS avg_rating,
        ROUND(AVG(CASE WHEN r.status = 'Approved' THEN r.rating END), 2) AS avg_approved,
        MAX(r.created_at) AS last_review
        FROM products p JOIN reviews r ON r.product_id = p.id GROUP BY p.id""",
    [
        Column("id", "ID", cls="num"),
        Column("name", "Product"),
        Column("review_cnt", "Reviews", cls="num"),
        Column("avg_rating", "Average", render=lambda r: f"{r['avg_rating']:.2f}", cls="num"),
        Column(
            "avg_approved",
            "Average (Approved)",
            render=lambda r: "" if r["avg_approved"] is None else f"{r['avg_approved']:.2f}",
            cls="num",
        ),
        datetime_column("last_review", "Last Review"),
        action_column("Show Reviews", lambda r: url("review/product/") + f"?sku={r['sku']}"),
    ],
    search=("name", "sku"),
    filters=(
        Filter("name", "Product"),
        Filter("review_cnt", "Reviews", "range"),
        Filter("avg_rating", "Average", "range"),
        Filter("last_review", "Last Review", "date"),
    ),
    default_sort="review_cnt",
    default_dir="desc",
)

REVIEWS_BY_CUSTOMER = Grid(
    """SELECT c.id, c.firstname || ' ' || c.lastname AS name, c.email, COUNT(r.id) AS review_cnt,
        ROUND(AVG(r.rating), 2) AS avg_rating, MAX(r.created_at) AS last_review
        FROM customers c JOIN reviews r ON r.customer_id = c.id GROUP BY c.id""",
    [
        Column("id", "ID", cls="num"),
        Column("name", "Customer"),
        Column("review_cnt", "Reviews", cls="num"),
        Column("avg_rating", "Average", render=lambda r: f"{r['avg_rating']:.2f}", cls="num"),
        datetime_column("last_review", "Last Review"),
        action_column("Show Reviews", lambda r: url(f"customer/index/edit/id/{r['id']}/") + "?tab=reviews"),
    ],
    search=("name", "email"),
    filters=(Filter("name", "Customer"), Filter("review_cnt", "Reviews", "range")),
    default_sort="review_cnt",
    default_dir="desc",
)

LOW_STOCK_QTY = 10

LOW_STOCK = Grid(
    f"""SELECT id, name, sku, qty FROM products WHERE qty < {LOW_STOCK_QTY}""",
    [
        Column("name", "Product"),
        Column("sku", "SKU"),
        Column("qty", "Quantity", cls="num"),
        action_column("Edit", lambda r: url(f"catalog/product/edit/id/{r['id']}/")),
    ],
    search=("name", "sku"),
    filters=(Filter("name", "Product"), Filter("sku", "SKU"), Filter("qty", "Quantity", "range")),
    default_sort="qty",
)


def period_report(title: str, headers: list[str], statuses: bool = False, note: str = "", column: str = "o.created_at"):
    """The page of a period report: the filter form and, once it is submitted with valid dates, the
    rows and totals that the decorated `build(conn, filter, where, params)` returns; `where` and
    `params` select the filter's dates (of `column`) and statuses."""

    def decorate(build) -> Handler:
        async def handler(request: Request, admin: Admin, p: dict[str, str]) -> Response:
            f = ReportFilter(request.query_params)
            rows, totals = [], None
            if f.submitted and not f.invalid:
                rows, totals = build(admin.db, f, *f.where(column))
            if f.invalid:
                flash(request, "Please enter dates as MM/DD/YYYY.", "error")
            return admin.render(
                request,
                "report.html",
                title=title,
                f=f,
                headers=headers,
                rows=rows,
                totals=totals,
                periods=PERIODS,
                with_statuses=statuses,
                status_options=list(ORDER_STATUS_LABELS.items()),
                note=note,
            )

        return handler

    return decorate


@period_report(
    "Bestsellers Report",
    ["Interval", "Product", "Price", "Order Quantity"],
    note=f"The top {BESTSELLER_LIMIT} products of each period by quantity ordered; canceled orders are not counted.",
)
def bestsellers(conn, f: ReportFilter, where: str, params: list):
    data = conn.execute(
        f"""SELECT {f.bucket()} AS period, i.product_id, i.name, MAX(i.price) AS price, SUM(i.qty_ordered) AS qty
            FROM order_items i JOIN orders o ON o.id = i.order_id
            WHERE o.status != 'canceled' AND {where}
            GROUP BY period, i.product_id, i.name ORDER BY period, qty DESC, i.name""",
        params,
    ).fetchall()
    rows = []
    rank: dict[str, int] = defaultdict(int)
    for r in data:
        rank[r["period"]] += 1
        if rank[r["period"]] <= BESTSELLER_LIMIT:
            rows.append([period_label(r["period"], f.period), r["name"], money(r["price"]), r["qty"]])
    return rows, None


@period_report("Ordered Products Report", ["Interval", "Product", "SKU", "Ordered Quantity"])
def ordered(conn, f: ReportFilter, where: str, params: list):
    rows, total = [], 0
    for r in conn.execute(
        f"""SELECT {f.bucket()} AS period, i.name, i.sku, SUM(i.qty_ordered) AS qty
                FROM order_items i JOIN orders o ON o.id = i.order_id
                WHERE o.status != 'canceled' AND {where}
                GROUP BY period, i.name, i.sku ORDER BY period, qty DESC, i.name""",
        params,
    ):
        rows.append([period_label(r["period"], f.period), r["name"], r["sku"], r["qty"]])
        total += r["qty"]
    return rows, ["Total", "", "", total] if rows else None


@period_report(
    "Orders Report",
    [
        "Interval",
        "Orders",
        "Sales Items",
        "Sales Total",
        "Invoiced",
        "Refunded",
        "Sales Tax",
        "Sales Shipping",
        "Sales Discount",
        "Canceled",
    ],
    statuses=True,
    note="Sales Total, Sales Items, Shipping and Discount leave canceled orders out; Canceled shows their total.",
)
def sales(conn, f: ReportFilter, where: str, params: list):
    data = conn.execute(
        f"""SELECT {f.bucket()} AS period, COUNT(*) AS orders,
            SUM(CASE WHEN o.status != 'canceled'
                THEN (SELECT SUM(qty_ordered) FROM order_items WHERE order_id = o.id) ELSE 0 END) AS items,
            SUM(CASE WHEN o.status != 'canceled' THEN o.grand_total ELSE 0 END) AS sales_total,
            SUM((SELECT COALESCE(SUM(grand_total), 0) FROM invoices WHERE order_id = o.id)) AS invoiced,
            SUM(CASE WHEN o.status = 'closed' THEN o.grand_total ELSE 0 END) AS refunded,
            SUM(CASE WHEN o.status != 'canceled' THEN o.shipping_amount ELSE 0 END) AS shipping,
            SUM(CASE WHEN o.status != 'canceled' THEN o.discount_amount ELSE 0 END) AS discount,
            SUM(CASE WHEN o.status = 'canceled' THEN o.grand_total ELSE 0 END) AS canceled
            FROM orders o WHERE {where} GROUP BY period ORDER BY period""",
        params,
    ).fetchall()
    keys = ("orders", "items", "sales_total", "invoiced", "refunded", "shipping", "discount", "canceled")
    sums = dict.fromkeys(keys, 0)
    rows = []
    for r in data:
        for k in keys:
            sums[k] += r[k] or 0
        rows.append(
            [
                period_label(r["period"], f.period),
                r["orders"],
                r["items"] or 0,
                money(r["sales_total"]),
                money(r["invoiced"]),
                money(r["refunded"]),
                money(0),
                money(r["shipping"]),
                money(r["discount"]),
                money(r["canceled"]),
            ]
        )
    if not rows:
        return rows, None
    return rows, [
        "Total",
        sums["orders"],
        sums["items"],
        money(sums["sales_total"]),
        money(sums["invoiced"]),
        money(sums["refunded"]),
        money(0),
        money(sums["shipping"]),
        money(sums["discount"]),
        money(sums["canceled"]),
    ]


@period_report(
    "Invoice Report",
    ["Interval", "Orders", "Invoiced Orders", "Total Invoiced", "Paid Invoices", "Unpaid Invoices"],
    statuses=True,
)
def invoiced(conn, f: ReportFilter, where: str, params: list):
    data = conn.execute(
        f"""SELECT {f.bucket()} AS period, COUNT(*) AS orders,
            SUM(EXISTS (SELECT 1 FROM invoices WHERE order_id = o.id)) AS invoiced_orders,
            SUM((SELECT COALESCE(SUM(grand_total), 0) FROM invoices WHERE order_id = o.id)) AS total_invoiced
            FROM orders o WHERE {where} GROUP BY period ORDER BY period""",
        params,
    ).fetchall()
    rows, s = [], [0, 0, 0.0]
    for r in data:
        rows.append(
            [
                period_label(r["period"], f.period),
                r["orders"],
                r["invoiced_orders"],
                money(r["total_invoiced"]),
                money(r["total_invoiced"]),
                money(0),
            ]
        )
        s = [s[0] + r["orders"], s[1] + r["invoiced_orders"], s[2] + r["total_invoiced"]]
    return rows, ["Total", s[0], s[1], money(s[2]), money(s[2]), money(0)] if rows else None


@period_report("Shipping Report", ["Interval", "Carrier/Method", "Orders", "Total Sales Shipping"], statuses=True)
def shipping(conn, f: ReportFilter, where: str, params: list):
    data = conn.execute(
        f"""SELECT {f.bucket()} AS period, o.shipping_method, COUNT(*) AS orders, SUM(o.shipping_amount) AS amount
            FROM orders o WHERE o.status != 'canceled' AND {where}
            GROUP BY period, o.shipping_method ORDER BY period, o.shipping_method""",
        params,
    ).fetchall()
    rows, n, amount = [], 0, 0.0
    for r in data:
        rows.append([period_label(r["period"], f.period), r["shipping_method"], r["orders"], money(r["amount"])])
        n, amount = n + r["orders"], amount + r["amount"]
    return rows, ["Total", "", n, money(amount)] if rows else None


@period_report(
    "Coupons Report",
    ["Interval", "Coupon Code", "Price Rule", "Uses", "Sales Subtotal", "Sales Discount", "Sales Total"],
    statuses=True,
)
def coupons(conn, f: ReportFilter, where: str, params: list):
    data = conn.execute(
        f"""SELECT {f.bucket()} AS period, o.coupon_code, COALESCE(r.name, '') AS rule, COUNT(*) AS uses,
            SUM(o.subtotal) AS subtotal, SUM(o.discount_amount) AS discount, SUM(o.grand_total) AS total
            FROM orders o LEFT JOIN cart_price_rules r ON lower(r.coupon_code) = lower(o.coupon_code)
            WHERE o.coupon_code IS NOT NULL AND o.coupon_code != '' AND o.status != 'canceled' AND {where}
            GROUP BY period, o.coupon_code ORDER BY period, uses DESC""",
        params,
    ).fetchall()
    rows, s = [], [0, 0.0, 0.0, 0.0]
    for r in data:
        rows.append(
            [
                period_label(r["period"], f.period),
                r["coupon_code"],
                r["rule"],
                r["uses"],
                money(r["subtotal"]),
                money(r["discount"]),
                money(r["total"]),
            ]
        )
        s = [s[0] + r["uses"], s[1] + r["subtotal"], s[2] + r["discount"], s[3] + r["total"]]
    return rows, ["Total", "", "", s[0], money(s[1]), money(s[2]), money(s[3])] if rows else None


def customer_report(order_by: str, title: str) -> Handler:
    """The top customers of each period, ranked by `order_by`."""

    @period_report(
        title,
        ["Interval", "Customer", "Orders", "Average", "Total"],
        note=f"The top {CUSTOMER_LIMIT} customers of each period; canceled orders are not counted.",
    )
    def build(conn, f: ReportFilter, where: str, params: list):
        data = conn.execute(
            f"""SELECT {f.bucket()} AS period, o.customer_firstname || ' ' || o.customer_lastname AS customer,
                COUNT(*) AS orders, AVG(o.grand_total) AS average, SUM(o.grand_total) AS total
                FROM orders o WHERE o.customer_id IS NOT NULL AND o.status != 'canceled' AND {where}
                GROUP BY period, o.customer_id ORDER BY period, {order_by}, customer""",
            params,
        ).fetchall()
        rows = []
        rank: dict[str, int] = defaultdict(int)
        for r in data:
            rank[r["period"]] += 1
            if rank[r["period"]] <= CUSTOMER_LIMIT:
                rows.append(
                    [
                        period_label(r["period"], f.period),
                        r["customer"],
                        r["orders"],
                        money(r["average"]),
                        money(r["total"]),
                    ]
                )
        return rows, None

    return build


@period_report("New Accounts Report", ["Interval", "New Accounts"], column="c.created_at")
def accounts(conn, f: ReportFilter, where: str, params: list):
    data = conn.execute(
        f"""SELECT {f.bucket("c.created_at")} AS period, COUNT(*) AS n FROM customers c
                            WHERE {where} GROUP BY period ORDER BY period""",
        params,
    ).fetchall()
    rows = [[period_label(r["period"], f.period), r["n"]] for r in data]
    return rows, ["Total", sum(r["n"] for r in data)] if rows else None


ROUTES = [
    AdminRoute(
        "reports/report_review/product",
        grid_page(REVIEWS_BY_PRODUCT, "reports/report_review/product/", "Product Reviews Report"),
        section="reports",
    ),
    AdminRoute(
        "reports/report_review/customer",
        grid_page(REVIEWS_BY_CUSTOMER, "reports/report_review/customer/", "Customer Reviews Report"),
        section="reports",
    ),
    AdminRoute(
        "reports/report_product/lowstock",
        grid_page(LOW_STOCK, "reports/report_product/lowstock/", "Low Stock Report"),
        section="reports",
    ),
    AdminRoute("reports/report_sales/bestsellers", bestsellers, section="reports"),
    AdminRoute("reports/report_product/sold", ordered, section="reports"),
    AdminRoute("reports/report_sales/sales", sales, section="reports"),
    AdminRoute("reports/report_sales/invoiced", invoiced, section="reports"),
    AdminRoute("reports/report_sales/shipping", shipping, section="reports"),
    AdminRoute("reports/report_sales/coupons", coupons, section="reports"),
    AdminRoute(
        "reports/report_customer/totals", customer_report("total DESC", "Order Total Report"), section="reports"
    ),
    AdminRoute(
        "reports/report_customer/orders",
        customer_report("orders DESC, total DESC", "Order Count Report"),
        section="reports",
    ),
    AdminRoute("reports/report_customer/accounts", accounts, section="reports"),
]
