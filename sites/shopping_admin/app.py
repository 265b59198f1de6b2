"""The shop's admin panel: a look-alike of the Magento 2 admin (WebArena's shopping_admin).

URLs follow Magento's `/admin/<frontName>/<controller>/<action>/<key>/<value>/...` shape, e.g.
`/admin/sales/order/view/order_id/12/`; a missing controller or action means `index`, trailing
slashes are optional, and extra key/value pairs (Magento's `key/<secret>/`) are ignored.
One catch-all route parses that shape and dispatches to the handlers the section modules register.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from webrl.sites.embedded.platform import (
    SiteContext,
    SiteSpec,
    check_password,
    flash,
    here,
    make_templates,
    redirect,
)
from webrl.sites.shopping_admin import grid as gridlib
from webrl.sites.store import STORE

HERE = Path(__file__).parent
PREFIX = "/admin"

Handler = Callable[[Request, dict[str, str]], Awaitable[Response]]

# Left menu: (section, label, [(group, [(label, path)])]); the section's first page is its link.
MENU: list[tuple[str, str, list[tuple[str, list[tuple[str, str]]]]]] = [
    ("dashboard", "Dashboard", [("", [("Dashboard", "admin/dashboard/")])]),
    ("sales", "Sales", [("Operations", [
        ("Orders", "sales/order/"), ("Invoices", "sales/invoice/"), ("Shipments", "sales/shipment/"),
    ])]),
    ("catalog", "Catalog", [("Inventory", [("Products", "catalog/product/"), ("Categories", "catalog/category/")])]),
    ("customers", "Customers", [("", [
        ("All Customers", "customer/index/"), ("Customer Groups", "customer/group/"),
    ])]),
    ("marketing", "Marketing", [
        ("Promotions", [("Cart Price Rules", "sales_rule/promo_quote/")]),
        ("Communications", [("Newsletter Subscribers", "newsletter/subscriber/")]),
        ("SEO & Search", [("Search Terms", "search/term/index/")]),
        ("User Content", [("All Reviews", "review/product/"), ("Pending Reviews", "review/product/pending/")]),
    ]),
    ("content", "Content", [("Elements", [("Pages", "cms/page/"), ("Blocks", "cms/block/")])]),
    ("reports", "Reports", [
        ("Marketing", [("Search Terms", "search/term/report/")]),
        ("Reviews", [("By Customers", "reports/report_review/customer/"),
                     ("By Products", "reports/report_review/product/")]),
        ("Sales", [("Orders", "reports/report_sales/sales/"), ("Invoiced", "reports/report_sales/invoiced/"),
                   ("Shipping", "reports/report_sales/shipping/"), ("Coupons", "reports/report_sales/coupons/")]),
        ("Customers", [("Order Total", "reports/report_customer/totals/"),
                       ("Order Count", "reports/report_customer/orders/"),
                       ("New", "reports/report_customer/accounts/")]),
        ("Products", [("Bestsellers", "reports/report_sales/bestsellers/"),
                      ("Low Stock", "reports/report_product/lowstock/"),
                      ("Ordered", "reports/report_product/sold/")]),
    ]),
    ("stores", "Stores", [("Settings", [("All Stores", "admin/system_store/"),
                                        ("Configuration", "admin/system_config/")])]),
]

STATUS_LABELS = {
    "pending": "Pending", "processing": "Processing", "complete": "Complete",
    "canceled": "Canceled", "closed": "Closed", "holded": "On Hold",
}


def url(path: str = "") -> str:
    """Absolute path of an admin page: url('sales/order/') -> '/admin/sales/order/'."""
    return f"{PREFIX}/{path}" if path else PREFIX


class Admin:
    """The app's shared state: the site context, templates and the route table."""

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
        self.routes: dict[tuple[str, str, str], tuple[Handler, tuple[str, ...], str]] = {}

    @property
    def db(self):
        return self.ctx.db.conn

    def route(self, path: str, methods: tuple[str, ...] = ("GET",), section: str = "", public: bool = False):
        """Register a handler for 'front/controller/action'."""
        front, controller, action = (path.split("/") + ["index", "index"])[:3]

        def deco(fn: Handler) -> Handler:
            self.routes[(front, controller, action)] = (fn, methods, section if not public else "__public__")
            return fn

        return deco

    def render(self, request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
        context.setdefault("section", request.scope.get("admin_section", ""))
        context["admin_user"] = self.current_user(request)
        return self.templates.TemplateResponse(request, template, context, status_code=status_code)

    def current_user(self, request: Request):
        uid = request.session.get("admin_user_id")
        if uid is None:
            return None
        return self.db.execute("SELECT * FROM admin_users WHERE id = ?", (uid,)).fetchone()

    def not_found(self, request: Request) -> Response:
        return self.render(request, "404.html", status_code=404, title="404 Error")




def parse_path(rest: str) -> tuple[tuple[str, str, str], dict[str, str]] | None:
    """'/sales/order/view/order_id/5/' -> (('sales', 'order', 'view'), {'order_id': '5'})."""
    parts = [p for p in rest.split("/") if p]
    if not parts:
        return ("admin", "index", "index"), {}
    front = parts[0]
    controller = parts[1] if len(parts) > 1 else "index"
    action = parts[2] if len(parts) > 2 else "index"
    params: dict[str, str] = {}
    extra = parts[3:]
    for i in range(0, len(extra) - 1, 2):
        params[extra[i]] = extra[i + 1]
    return (front, controller, action), params


def make_app(ctx: SiteContext) -> Starlette:
    admin = Admin(ctx)
    from webrl.sites.shopping_admin import catalog, customers, marketing, reports, sales

    register_core(admin)
    for module in (sales, catalog, customers, marketing, reports):
        module.register(admin)

    async def root(request: Request) -> Response:
        return RedirectResponse(url(), status_code=302)

    async def dispatch(request: Request) -> Response:
        rest = request.path_params.get("rest", "")
        if rest and not rest.startswith("/"):
            return admin.not_found(request)
        key, params = parse_path(rest)
        entry = admin.routes.get(key)
        if entry is None:
            if request.session.get("admin_user_id") is None:
                return redirect(url())
            return admin.not_found(request)
        handler, methods, section = entry
        if section != "__public__" and admin.current_user(request) is None:
            if request.method == "GET":
                request.session["after_login"] = here(request)
            return redirect(url())
        if request.method not in methods:
            return admin.not_found(request)
        request.scope["admin_section"] = section
        return await handler(request, params)

    async def fallback(request: Request) -> Response:
        return admin.not_found(request)

    return Starlette(routes=[
        Route("/", root),
        Mount("/admin/static", StaticFiles(directory=HERE / "static"), name="static"),
        Route("/admin{rest:path}", dispatch, methods=["GET", "POST"]),
        Route("/{anything:path}", fallback, methods=["GET", "POST"]),
    ])


# ---------------------------------------------------------------------------------------------
# Sign-in, dashboard and the small Content/Stores pages


LOGIN_ERROR = ("The account sign-in was incorrect or your account is disabled temporarily. "
               "Please wait and try again later.")


def register_core(admin: Admin) -> None:
    db = lambda: admin.db  # noqa: E731

    @admin.route("admin/index/index", methods=("GET", "POST"), public=True)
    async def login(request: Request, p: dict[str, str]) -> Response:
        if request.method == "POST":
            form = await request.form()
            username = str(form.get("login[username]") or form.get("username") or "").strip()
            password = str(form.get("login[password]") or form.get("password") or "")
            user = db().execute("SELECT * FROM admin_users WHERE username = ?", (username,)).fetchone()
            if user is None or not check_password(password, user["password_hash"]):
                flash(request, LOGIN_ERROR, "error")
                return redirect(url())
            request.session["admin_user_id"] = user["id"]
            return redirect(request.session.pop("after_login", None) or url("admin/dashboard/"))
        if admin.current_user(request) is not None:
            return redirect(url("admin/dashboard/"))
        return admin.render(request, "login.html", title="Magento Admin")

    admin.routes[("admin", "admin", "index")] = admin.routes[("admin", "index", "index")]
    admin.routes[("admin", "auth", "login")] = admin.routes[("admin", "index", "index")]

    @admin.route("admin/auth/logout", public=True)
    async def logout(request: Request, p: dict[str, str]) -> Response:
        request.session.pop("admin_user_id", None)
        flash(request, "You have logged out.", "success")
        return redirect(url())

    @admin.route("admin/dashboard/index", section="dashboard")
    async def dashboard(request: Request, p: dict[str, str]) -> Response:
        c = db()
        live = "status != 'canceled'"
        lifetime, count = c.execute(f"SELECT COALESCE(SUM(grand_total), 0), COUNT(*) FROM orders WHERE {live}").fetchone()
        totals = c.execute(f"""SELECT COALESCE(SUM(o.grand_total), 0) AS revenue, COALESCE(SUM(o.shipping_amount), 0) AS shipping,
                (SELECT COALESCE(SUM(qty_ordered), 0) FROM order_items i JOIN orders o2 ON o2.id = i.order_id
                 WHERE o2.{live}) AS quantity FROM orders o WHERE o.{live}""").fetchone()
        last_orders = c.execute("""SELECT o.id, o.customer_firstname || ' ' || o.customer_lastname AS customer,
                (SELECT COALESCE(SUM(qty_ordered), 0) FROM order_items WHERE order_id = o.id) AS items, o.grand_total
                FROM orders o ORDER BY o.created_at DESC, o.id DESC LIMIT 5""").fetchall()
        last_search = c.execute("SELECT query_text, num_results, popularity FROM search_terms "
                                "ORDER BY updated_at DESC, id DESC LIMIT 5").fetchall()
        top_search = c.execute("SELECT query_text, num_results, popularity FROM search_terms "
                               "ORDER BY popularity DESC, id LIMIT 5").fetchall()
        tab = request.query_params.get("tab", "bestsellers")
        tabs = [("bestsellers", "Bestsellers"), ("products", "Most Viewed Products"),
                ("new", "New Customers"), ("customers", "Customers")]
        if tab == "new":
            tab_rows = c.execute("""SELECT c.id, c.firstname || ' ' || c.lastname AS name,
                    COUNT(o.id) AS orders, COALESCE(AVG(o.grand_total), 0) AS average, COALESCE(SUM(o.grand_total), 0) AS total
                    FROM customers c LEFT JOIN orders o ON o.customer_id = c.id AND o.status != 'canceled'
                    GROUP BY c.id ORDER BY c.created_at DESC, c.id DESC LIMIT 5""").fetchall()
        elif tab == "customers":
            tab_rows = c.execute("""SELECT c.id, c.firstname || ' ' || c.lastname AS name,
                    COUNT(o.id) AS orders, AVG(o.grand_total) AS average, SUM(o.grand_total) AS total
                    FROM customers c JOIN orders o ON o.customer_id = c.id AND o.status != 'canceled'
                    GROUP BY c.id ORDER BY total DESC, c.id LIMIT 5""").fetchall()
        elif tab == "products":
            tab_rows = []
        else:
            tab = "bestsellers"
            tab_rows = c.execute("""SELECT i.product_id, i.name, MAX(i.price) AS price, SUM(i.qty_ordered) AS qty
                    FROM order_items i JOIN orders o ON o.id = i.order_id WHERE o.status != 'canceled'
                    GROUP BY i.product_id, i.name ORDER BY qty DESC, i.name LIMIT 5""").fetchall()
        return admin.render(
            request, "dashboard.html", title="Dashboard", lifetime=lifetime,
            average=(lifetime / count if count else 0), totals=totals, last_orders=last_orders,
            last_search=last_search, top_search=top_search, tab=tab, tabs=tabs, tab_rows=tab_rows,
        )

    @admin.route("cms/page/index", section="content")
    async def cms_pages(request: Request, p: dict[str, str]) -> Response:
        rows = [(1, "404 Not Found", "no-route"), (2, "Home Page", "home"), (3, "Enable Cookies", "enable-cookies"),
                (4, "Privacy and Cookie Policy", "privacy-policy-cookie-restriction-mode"),
                (5, "About us", "about-us"), (6, "Customer Service", "customer-service")]
        return admin.render(request, "simple_table.html", title="Pages",
                            headers=["ID", "Title", "URL Key", "Layout", "Store View", "Status"],
                            rows=[(i, t, k, "1 column", "All Store Views", "Enabled") for i, t, k in rows])

    @admin.route("cms/block/index", section="content")
    async def cms_blocks(request: Request, p: dict[str, str]) -> Response:
        rows = [(1, "Footer Links", "footer_links_block", "All Store Views", "Enabled"),
                (2, "Contact Us Info", "contact-us-info", "All Store Views", "Enabled")]
        return admin.render(request, "simple_table.html", title="Blocks",
                            headers=["ID", "Title", "Identifier", "Store View", "Status"], rows=rows)

    @admin.route("admin/system_store/index", section="stores")
    async def stores(request: Request, p: dict[str, str]) -> Response:
        return admin.render(request, "simple_table.html", title="Stores",
                            headers=["Web Site", "Store", "Store View"],
                            rows=[("Main Website", "Main Website Store", "Default Store View")])

    @admin.route("admin/system_config/index", section="stores")
    async def config(request: Request, p: dict[str, str]) -> Response:
        rows = [("Store Name", "One Stop Market"), ("Default Country", "United States"),
                ("Base Currency", "US Dollar"), ("Timezone", "UTC"),
                ("Base URL", admin.ctx.urls.get("shopping", ""))]
        return admin.render(request, "simple_table.html", title="Configuration", headers=["Setting", "Value"],
                            rows=rows)


SITE = SiteSpec(name="shopping_admin", title="Magento Admin", database=STORE,
                make_app=make_app, base_path="/admin")
