"""What every storefront page needs: rendering with the header's data, the signed-in customer, the
current cart, login-required redirects and the 404 page; `shop_of` finds the storefront of a request."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from webrl.sites.platform import (
    SiteContext,
    flash,
    login_redirect,
    make_templates,
    now,
)
from webrl.sites.store import store

TEMPLATES_DIR = Path(__file__).with_name("templates")

US_STATES = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
    "District of Columbia", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas",
    "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi",
    "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire", "New Jersey", "New Mexico", "New York",
    "North Carolina", "North Dakota", "Ohio", "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island",
    "South Carolina", "South Dakota", "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington",
    "West Virginia", "Wisconsin", "Wyoming",
)  # fmt: skip

ADDRESS_LABELS = {
    "firstname": "First Name",
    "lastname": "Last Name",
    "street": "Street Address",
    "city": "City",
    "region": "State/Province",
    "postcode": "Zip/Postal Code",
    "country": "Country",
    "telephone": "Phone Number",
}


def short_date(value: str) -> str:
    """'2023-05-17 10:00:00' -> '5/17/23', as Magento's order grid shows dates."""
    y, m, d = value[:10].split("-")
    return f"{int(m)}/{int(d)}/{y[2:]}"


def long_date(value: str) -> str:
    """'2023-05-17 10:00:00' -> 'May 17, 2023'."""
    months = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
              "October", "November", "December")  # fmt: skip
    y, m, d = value[:10].split("-")
    return f"{months[int(m) - 1]} {int(d)}, {y}"


class Shop:
    """The storefront of one instance: its context and templates."""

    def __init__(self, ctx: SiteContext):
        self.ctx = ctx
        self.templates = make_templates(TEMPLATES_DIR)
        env = self.templates.env
        env.filters["short_date"] = short_date
        env.filters["long_date"] = long_date
        env.globals["status_label"] = lambda s: store.ORDER_STATUS_LABELS.get(s, s.title())
        env.globals["US_STATES"] = US_STATES
        env.globals["query_with"] = query_with
        self.admin_tokens: dict[str, int] = {}  # REST bearer token -> admin user id

    @property
    def conn(self) -> sqlite3.Connection:
        return self.ctx.db.conn

    # -- the signed-in customer ----------------------------------------------------------------

    def customer(self, request: Request) -> sqlite3.Row | None:
        cid = request.session.get("customer_id")
        if cid is None:
            return None
        row = self.conn.execute("SELECT * FROM customers WHERE id = ?", (cid,)).fetchone()
        if row is None:
            request.session.pop("customer_id", None)
        return row

    def login_redirect(self, request: Request, back: str | None = None) -> Response:
        return login_redirect(request, "/customer/account/login/", back)

    def sign_in(self, request: Request, customer_id: int) -> None:
        """Sign the customer in and merge the guest cart into the customer's cart, as Magento does."""
        guest_cart = request.session.pop("cart_id", None)
        request.session["customer_id"] = customer_id
        if guest_cart is None:
            return
        items = self.conn.execute("SELECT * FROM cart_items WHERE cart_id = ?", (guest_cart,)).fetchall()
        if not items:
            return
        with self.ctx.db.transaction() as conn:
            cart_id = self.cart_id(request, create=True)
            for item in items:
                store.add_to_cart(conn, cart_id, item["product_id"], item["qty"], json.loads(item["options"]))
            conn.execute("DELETE FROM cart_items WHERE cart_id = ?", (guest_cart,))
            conn.execute("UPDATE carts SET is_active = 0 WHERE id = ?", (guest_cart,))

    # -- the cart --------------------------------------------------------------------------------

    def cart_id(self, request: Request, create: bool = False) -> int | None:
        """The active cart of the customer (or of this guest session); created when asked."""
        cid = request.session.get("customer_id")
        if cid is not None:
            row = self.conn.execute(
                "SELECT id FROM carts WHERE customer_id = ? AND is_active = 1 ORDER BY id DESC LIMIT 1", (cid,)
            ).fetchone()
            if row:
                return row["id"]
        else:
            guest = request.session.get("cart_id")
            if guest is not None:
                row = self.conn.execute("SELECT id FROM carts WHERE id = ? AND is_active = 1", (guest,)).fetchone()
                if row:
                    return row["id"]
                request.session.pop("cart_id", None)
        if not create:
            return None
        cur = self.conn.execute("INSERT INTO carts (customer_id, is_active, created_at) VALUES (?, 1, ?)", (cid, now()))
        if cid is None:
            request.session["cart_id"] = cur.lastrowid
        return cur.lastrowid

    def cart_count(self, request: Request) -> int:
        cart_id = self.cart_id(request)
        if cart_id is None:
            return 0
        row = self.conn.execute(
            "SELECT COALESCE(SUM(ci.qty), 0) FROM cart_items ci JOIN products p ON p.id = ci.product_id"
            " WHERE ci.cart_id = ? AND p.status = 1",
            (cart_id,),
        ).fetchone()
        return int(row[0])

    # -- products --------------------------------------------------------------------------------

    def enabled_product(self, product_id: int) -> sqlite3.Row | None:
        """The product if it exists and is enabled (a disabled product has no storefront pages)."""
        return self.conn.execute("SELECT * FROM products WHERE id = ? AND status = 1", (product_id,)).fetchone()

    # -- rendering -------------------------------------------------------------------------------

    def render(
        self, request: Request, template: str, context: dict[str, Any] | None = None, status_code: int = 200
    ) -> HTMLResponse:
        data = {
            "customer": self.customer(request),
            "cart_count": self.cart_count(request),
            "menu": store.category_tree(self.conn),
            "search_query": request.query_params.get("q", ""),
            "urls": self.ctx.urls,
        }
        data.update(context or {})
        return self.templates.TemplateResponse(request, template, data, status_code=status_code)

    def not_found(self, request: Request) -> HTMLResponse:
        return self.render(request, "404.html", {"title": "404 Not Found"}, status_code=404)

    def back(
        self, request: Request, message: str | None = None, kind: str = "success", default: str = "/"
    ) -> RedirectResponse:
        """Redirect (303) to the referring page of this site, with an optional message."""
        if message:
            flash(request, message, kind)
        referer = request.headers.get("referer", "")
        base = str(request.base_url)
        target = referer[len(base) - 1 :] if referer.startswith(base) else default
        return RedirectResponse(target or default, status_code=303)


def shop_of(request: Request) -> Shop:
    """The storefront of the app serving this request (make_app keeps it on the app)."""
    return request.app.state.shop


def query_with(request: Request, **changes: Any) -> str:
    """The current URL's query string with some parameters changed (None removes one)."""
    params = dict(request.query_params)
    for key, value in changes.items():
        if value is None:
            params.pop(key, None)
        else:
            params[key] = str(value)
    return "?" + urlencode(params) if params else request.url.path
