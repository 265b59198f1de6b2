"""The shop's admin panel: a look-alike of the Magento 2 admin (WebArena's shopping_admin).

URLs follow Magento's `/admin/<frontName>/<controller>/<action>/<key>/<value>/...` shape, e.g.
`/admin/sales/order/view/order_id/12/`; a missing controller or action means `index`, trailing
slashes are optional, and extra key/value pairs (Magento's `key/<secret>/`) are ignored.
One catch-all route parses that shape and dispatches through the route tables of the section modules.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from webrl.sites.platform import (
    SiteContext,
    SiteSpec,
    check_password,
    flash,
    here,
    redirect,
)
from webrl.sites.shopping_admin import catalog, customers, marketing, reports, sales
from webrl.sites.shopping_admin.web import HERE, Admin, AdminRoute, admin_of, url
from webrl.sites.store import STORE

# ---------------------------------------------------------------------------------------------
# Sign-in, dashboard and the small Content/Stores pages


LOGIN_ERROR = (
    "The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again later."
)


async def login(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    if request.method == "POST":
        form = await request.form()
        username = str(form.get("login[username]") or form.get("username") or "").strip()
        password = str(form.get("login[password]") or form.get("password") or "")
        user = admin.db.execute("SELECT * FROM admin_users WHERE username = ?", (username,)).fetchone()
        if user is None or not check_password(password, user["password_hash"]):
            flash(request, LOGIN_ERROR, "error")
            return redirect(url())
        request.session["admin_user_id"] = user["id"]
        return redirect(request.session.pop("after_login", None) or url("admin/dashboard/"))
    if admin.current_user(request) is not None:
        return redirect(url("admin/dashboard/"))
    return admin.render(request, "login.html", title="Magento Admin")


async def logout(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    request.session.pop("admin_user_id", None)
    flash(request, "You have logged out.", "success")
    return redirect(url())


async def dashboard(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    c = admin.db
    live = "status != 'canceled'"
    lifetime, count = c.execute(f"SELECT COALESCE(SUM(grand_total), 0), COUNT(*) FROM orders WHERE {live}").fetchone()
    totals = c.execute(f"""SELECT COALESCE(SUM(o.grand_total), 0) AS revenue,
            COALESCE(SUM(o.shipping_amount), 0) AS shipping,
            (SELECT COALESCE(SUM(qty_ordered), 0) FROM order_items i JOIN orders o2 ON o2.id = i.order_id
             WHERE o2.{live}) AS quantity FROM orders o WHERE o.{live}""").fetchone()
    last_orders = c.execute("""SELECT o.id, o.customer_firstname || ' ' || o.customer_lastname AS customer,
            (SELECT COALESCE(SUM(qty_ordered), 0) FROM order_items WHERE order_id = o.id) AS items, o.grand_total
            FROM orders o ORDER BY o.created_at DESC, o.id DESC LIMIT 5""").fetchall()
    last_search = c.execute(
        "SELECT query_text, num_results, popularity FROM search_terms ORDER BY updated_at DESC, id DESC LIMIT 5"
    ).fetchall()
    top_search = c.execute(
        "SELECT query_text, num_results, popularity FROM search_terms ORDER BY popularity DESC, id LIMIT 5"
    ).fetchall()
    tab = request.query_params.get("tab", "bestsellers")
    tabs = [
        ("bestsellers", "Bestsellers"),
        ("products", "Most Viewed Products"),
        ("new", "New Customers"),
        ("customers", "Customers"),
    ]
    if tab == "new":
        tab_rows = c.execute("""SELECT c.id, c.firstname || ' ' || c.lastname AS name,
                COUNT(o.id) AS orders, COALESCE(AVG(o.grand_total), 0) AS average,
                COALESCE(SUM(o.grand_total), 0) AS total
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
        request,
        "dashboard.html",
        title="Dashboard",
        lifetime=lifetime,
        average=(lifetime / count if count else 0),
        totals=totals,
        last_orders=last_orders,
        last_search=last_search,
        top_search=top_search,
        tab=tab,
        tabs=tabs,
        tab_rows=tab_rows,
    )


async def cms_pages(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    rows = [
        (1, "404 Not Found", "no-route"),
        (2, "Home Page", "home"),
        (3, "Enable Cookies", "enable-cookies"),
        (4, "Privacy and Cookie Policy", "privacy-policy-cookie-restriction-mode"),
        (5, "About us", "about-us"),
        (6, "Customer Service", "customer-service"),
    ]
    return admin.render(
        request,
        "simple_table.html",
        title="Pages",
        headers=["ID", "Title", "URL Key", "Layout", "Store View", "Status"],
        rows=[(i, t, k, "1 column", "All Store Views", "Enabled") for i, t, k in rows],
    )


async def cms_blocks(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    rows = [
        (1, "Footer Links", "footer_links_block", "All Store Views", "Enabled"),
        (2, "Contact Us Info", "contact-us-info", "All Store Views", "Enabled"),
    ]
    return admin.render(
        request,
        "simple_table.html",
        title="Blocks",
        headers=["ID", "Title", "Identifier", "Store View", "Status"],
        rows=rows,
    )


async def stores(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    return admin.render(
        request,
        "simple_table.html",
        title="Stores",
        headers=["Web Site", "Store", "Store View"],
        rows=[("Main Website", "Main Website Store", "Default Store View")],
    )


async def config(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    rows = [
        ("Store Name", "One Stop Market"),
        ("Default Country", "United States"),
        ("Base Currency", "US Dollar"),
        ("Timezone", "UTC"),
        ("Base URL", admin.ctx.urls.get("shopping", "")),
    ]
    return admin.render(request, "simple_table.html", title="Configuration", headers=["Setting", "Value"], rows=rows)


LOGIN_METHODS = ("GET", "POST")
CORE_ROUTES = [
    AdminRoute("admin/index/index", login, methods=LOGIN_METHODS, public=True),
    AdminRoute("admin/admin/index", login, methods=LOGIN_METHODS, public=True),
    AdminRoute("admin/auth/login", login, methods=LOGIN_METHODS, public=True),
    AdminRoute("admin/auth/logout", logout, public=True),
    AdminRoute("admin/dashboard/index", dashboard, section="dashboard"),
    AdminRoute("cms/page/index", cms_pages, section="content"),
    AdminRoute("cms/block/index", cms_blocks, section="content"),
    AdminRoute("admin/system_store/index", stores, section="stores"),
    AdminRoute("admin/system_config/index", config, section="stores"),
]

# ('front', 'controller', 'action') -> its route, over every section's route table
ADMIN_ROUTES = {
    route.key: route
    for table in (CORE_ROUTES, sales.ROUTES, catalog.ROUTES, customers.ROUTES, marketing.ROUTES, reports.ROUTES)
    for route in table
}


# ---------------------------------------------------------------------------------------------
# Dispatch


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


async def root(request: Request) -> Response:
    return RedirectResponse(url(), status_code=302)


async def dispatch(request: Request) -> Response:
    admin = admin_of(request)
    rest = request.path_params.get("rest", "")
    if rest and not rest.startswith("/"):
        return admin.not_found(request)
    key, params = parse_path(rest)
    route = ADMIN_ROUTES.get(key)
    if route is None:
        if request.session.get("admin_user_id") is None:
            return redirect(url())
        return admin.not_found(request)
    if not route.public and admin.current_user(request) is None:
        if request.method == "GET":
            request.session["after_login"] = here(request)
        return redirect(url())
    if request.method not in route.methods:
        return admin.not_found(request)
    request.scope["admin_section"] = route.section
    return await route.handler(request, admin, params)


async def fallback(request: Request) -> Response:
    return admin_of(request).not_found(request)


ROUTES = [
    Route("/", root),
    Mount("/admin/static", StaticFiles(directory=HERE / "static"), name="static"),
    Route("/admin{rest:path}", dispatch, methods=["GET", "POST"]),
    Route("/{anything:path}", fallback, methods=["GET", "POST"]),
]


def make_app(ctx: SiteContext) -> Starlette:
    app = Starlette(routes=ROUTES)
    app.state.admin = Admin(ctx)
    return app


SITE = SiteSpec(name="shopping_admin", title="Magento Admin", database=STORE, make_app=make_app, base_path="/admin")
