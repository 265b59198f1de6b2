"""What every admin page needs: the admin of an instance (templates, rendering, the signed-in admin
user, the 404 page), admin URLs, the entries of the section modules' route tables, and the page of
one grid."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from webrl.sites.platform import SiteContext, make_templates, set_params_only
from webrl.sites.shopping_admin import grid as gridlib

HERE = Path(__file__).parent
PREFIX = "/admin"
POST = ("POST",)  # the methods of a form's action

# Left menu: (section, label, [(group, [(label, path)])]); the section's first page is its link.
MENU: list[tuple[str, str, list[tuple[str, list[tuple[str, str]]]]]] = [
    ("dashboard", "Dashboard", [("", [("Dashboard", "admin/dashboard/")])]),
    (
        "sales",
        "Sales",
        [
            (
                "Operations",
                [
                    ("Orders", "sales/order/"),
                    ("Invoices", "sales/invoice/"),
                    ("Shipments", "sales/shipment/"),
                ],
            )
        ],
    ),
    ("catalog", "Catalog", [("Inventory", [("Products", "catalog/product/"), ("Categories", "catalog/category/")])]),
    (
        "customers",
        "Customers",
        [
            (
                "",
                [
                    ("All Customers", "customer/index/"),
                    ("Customer Groups", "customer/group/"),
                ],
            )
        ],
    ),
    (
        "marketing",
        "Marketing",
        [
            ("Promotions", [("Cart Price Rules", "sales_rule/promo_quote/")]),
            ("Communications", [("Newsletter Subscribers", "newsletter/subscriber/")]),
            ("SEO & Search", [("Search Terms", "search/term/index/")]),
            ("User Content", [("All Reviews", "review/product/"), ("Pending Reviews", "review/product/pending/")]),
        ],
    ),
    ("content", "Content", [("Elements", [("Pages", "cms/page/"), ("Blocks", "cms/block/")])]),
    (
        "reports",
        "Reports",
        [
            ("Marketing", [("Search Terms", "search/term/report/")]),
            (
                "Reviews",
                [
                    ("By Customers", "reports/report_review/customer/"),
                    ("By Products", "reports/report_review/product/"),
                ],
            ),
            (
                "Sales",
                [
                    ("Orders", "reports/report_sales/sales/"),
                    ("Invoiced", "reports/report_sales/invoiced/"),
                    ("Shipping", "reports/report_sales/shipping/"),
                    ("Coupons", "reports/report_sales/coupons/"),
                ],
            ),
            (
                "Customers",
                [
                    ("Order Total", "reports/report_customer/totals/"),
                    ("Order Count", "reports/report_customer/orders/"),
                    ("New", "reports/report_customer/accounts/"),
                ],
            ),
            (
                "Products",
                [
                    ("Bestsellers", "reports/report_sales/bestsellers/"),
                    ("Low Stock", "reports/report_product/lowstock/"),
                    ("Ordered", "reports/report_product/sold/"),
                ],
            ),
        ],
    ),
    (
        "stores",
        "Stores",
        [("Settings", [("All Stores", "admin/system_store/"), ("Configuration", "admin/system_config/")])],
    ),
]

STATUS_LABELS = {
    "pending": "Pending",
    "processing": "Processing",
    "complete": "Complete",
    "canceled": "Canceled",
    "closed": "Closed",
    "holded": "On Hold",
}


def url(path: str = "") -> str:
    """Absolute path of an admin page: url('sales/order/') -> '/admin/sales/order/'."""
    return f"{PREFIX}/{path}" if path else PREFIX


class Admin:
    """The admin panel of one instance: its context and templates."""

    def __init__(self, ctx: SiteContext):
        self.ctx = ctx
        self.templates = make_templates(HERE / "templates")
        env = self.templates.env
        env.filters["dt"] = gridlib.fmt_datetime
        env.filters["d"] = gridlib.fmt_date
        env.filters["nl2br"] = gridlib.nl2br
        env.filters["status_label"] = lambda s: STATUS_LABELS.get(s, (s or "").title())
        env.globals["url"] = url
        env.globals["MENU"] = MENU
        env.globals["storefront"] = ctx.urls.get("shopping", "")

    @property
    def db(self):
        return self.ctx.db.conn

    def render(self, request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
        context.setdefault("section", request.scope.get("admin_section", ""))
        context["admin_user"] = self.current_user(request)
        return self.templates.TemplateResponse(request, template, context, status_code=status_code)

    def row(self, table: str, row_id):
        """The row of `table` with this id (as the URL gives it), or None."""
        return self.db.execute(f"SELECT * FROM {table} WHERE id = ?", (row_id,)).fetchone()

    def current_user(self, request: Request):
        uid = request.session.get("admin_user_id")
        if uid is None:
            return None
        return self.row("admin_users", uid)

    def not_found(self, request: Request) -> Response:
        return self.render(request, "404.html", status_code=404, title="404 Error")


def admin_of(request: Request) -> Admin:
    """The admin panel of the app serving this request (make_app keeps it on the app)."""
    return request.app.state.admin


# A handler gets the request, the admin panel and the key/value pairs that follow the action in the URL.
Handler = Callable[[Request, Admin, dict[str, str]], Awaitable[Response]]


@dataclass(frozen=True)
class AdminRoute:
    """A route table entry: the handler of the page 'front/controller/action' (a missing controller
    or action is 'index')."""

    path: str
    handler: Handler
    methods: tuple[str, ...] = ("GET",)
    section: str = ""  # the left menu section shown as active
    public: bool = False  # shown without signing in

    @property
    def key(self) -> tuple[str, str, str]:
        front, controller, action = (self.path.split("/") + ["index", "index"])[:3]
        return front, controller, action


def grid_page(grid: gridlib.Grid, path: str, title: str, where: str = "", **extra: Any) -> Handler:
    """The handler of a page that shows `grid` (rows matching `where`) at url(path)."""

    @set_params_only
    async def handler(request: Request, admin: Admin, p: dict[str, str]) -> Response:
        result = grid.run(admin.db, request.query_params, where)
        return admin.render(request, "grid.html", title=title, g=gridlib.view(grid, result, url(path)), **extra)

    return handler
