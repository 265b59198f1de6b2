"""Customers: the All Customers grid, the customer edit page (tabs), new customers, addresses,
customer groups, and the newsletter subscribers grid."""

from __future__ import annotations

import re
import secrets

from starlette.requests import Request
from starlette.responses import Response

from webrl.sites.platform import flash, hash_password, now, redirect
from webrl.sites.shopping_admin.grid import (
    Column,
    Filter,
    Grid,
    action_column,
    datetime_column,
    fmt_date,
    parse_date,
    view,
)
from webrl.sites.shopping_admin.sales import ORDERS
from webrl.sites.shopping_admin.web import POST, Admin, AdminRoute, grid_page, url
from webrl.sites.store.store import ADDRESS_FIELDS

GROUPS = ("General", "Wholesale", "Retailer")
GENDERS = ("Male", "Female", "Not Specified")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
TABS = [
    ("view", "Customer View"),
    ("account", "Account Information"),
    ("addresses", "Addresses"),
    ("orders", "Orders"),
    ("newsletter", "Newsletter"),
    ("reviews", "Product Reviews"),
]


CUSTOMERS = Grid(
    """SELECT c.id, c.firstname || ' ' || c.lastname AS name, c.email, c.group_name, a.telephone AS phone,
        a.postcode AS zip, a.country, a.region, c.created_at, c.dob, c.gender, 'Main Website' AS website,
        c.firstname, c.lastname, a.street, a.city,
        a.street || ' ' || a.city || ' ' || a.region || ' ' || a.postcode AS billing_full
        FROM customers c LEFT JOIN addresses a ON a.id = (
            SELECT id FROM addresses WHERE customer_id = c.id ORDER BY is_default_billing DESC, id LIMIT 1)""",
    [
        Column("id", "ID", cls="num"),
        Column("name", "Name"),
        Column("email", "Email"),
        Column("group_name", "Group"),
        Column("phone", "Phone"),
        Column("zip", "ZIP"),
        Column("country", "Country"),
        Column("region", "State/Province"),
        datetime_column("created_at", "Customer Since"),
        Column("website", "Web Site"),
        Column("dob", "Date of Birth", render=lambda r: fmt_date(r["dob"])),
        Column("gender", "Gender"),
        action_column("Edit", lambda r: url(f"customer/index/edit/id/{r['id']}/")),
    ],
    search=("name", "email", "phone", "zip", "region", "billing_full"),
    filters=(
        Filter("id", "ID", "range"),
        Filter("name", "Name"),
        Filter("email", "Email"),
        Filter("group_name", "Group", "select", tuple((g, g) for g in GROUPS)),
        Filter("phone", "Phone"),
        Filter("zip", "ZIP"),
        Filter("region", "State/Province"),
        Filter("created_at", "Customer Since", "date"),
        Filter("dob", "Date of Birth", "date"),
        Filter("gender", "Gender", "select", tuple((g, g) for g in GENDERS)),
    ),
    default_sort="id",
)

SUBSCRIBERS = Grid(
    """SELECT c.id, c.email, 'Customer' AS type, c.firstname, c.lastname, 'Subscribed' AS status,
        'Main Website' AS website FROM customers c WHERE c.newsletter = 1""",
    [
        Column("id", "ID", cls="num"),
        Column("email", "Email"),
        Column("type", "Type"),
        Column("firstname", "Customer First Name"),
        Column("lastname", "Customer Last Name"),
        Column("status", "Status"),
        Column("website", "Web Site"),
    ],
    search=("email", "firstname", "lastname"),
    filters=(
        Filter("email", "Email"),
        Filter("firstname", "Customer First Name"),
        Filter("lastname", "Customer Last Name"),
    ),
    default_sort="id",
)


async def groups(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    counts = dict(admin.db.execute("SELECT group_name, COUNT(*) FROM customers GROUP BY group_name").fetchall())
    rows = [(0, "NOT LOGGED IN", "Retail Customer", "")] + [
        (i + 1, g, "Retail Customer", counts.get(g, 0)) for i, g in enumerate(GROUPS)
    ]
    return admin.render(
        request,
        "simple_table.html",
        title="Customer Groups",
        headers=["ID", "Group", "Tax Class", "Customers"],
        rows=rows,
    )


def customer_page(request, admin: Admin, customer: dict, tab: str, is_new: bool):
    conn = admin.db
    ctx = {
        "customer": customer,
        "tab": tab,
        "tabs": TABS if not is_new else TABS[1:2],
        "is_new": is_new,
        "groups": GROUPS,
        "genders": GENDERS,
    }
    cid = customer.get("id")
    if not is_new:
        ctx["addresses"] = conn.execute("SELECT * FROM addresses WHERE customer_id = ? ORDER BY id", (cid,)).fetchall()
        ctx["billing"] = next(
            (a for a in ctx["addresses"] if a["is_default_billing"]), ctx["addresses"][0] if ctx["addresses"] else None
        )
        ctx["stats"] = conn.execute(
            "SELECT COUNT(*) AS orders,"
            " COALESCE(SUM(CASE WHEN status != 'canceled' THEN grand_total END), 0) AS lifetime"
            " FROM orders WHERE customer_id = ?",
            (cid,),
        ).fetchone()
        base = url(f"customer/index/edit/id/{cid}/")
        if tab == "orders":
            result = ORDERS.run(conn, request.query_params, "g.customer_id = ?", (cid,))
            ctx["g"] = view(ORDERS, result, base)
        if tab == "reviews":
            ctx["reviews"] = conn.execute(
                "SELECT r.*, p.name AS product_name, p.sku FROM reviews r JOIN products p ON p.id = r.product_id"
                " WHERE r.customer_id = ? ORDER BY r.created_at DESC, r.id DESC",
                (cid,),
            ).fetchall()
    title = "New Customer" if is_new else f"{customer['firstname']} {customer['lastname']}"
    ctx["address_fields"] = ADDRESS_FIELDS
    ctx["save_action"] = url("customer/index/save/") if is_new else url(f"customer/index/save/id/{cid}/")
    return admin.render(request, "customer_edit.html", title=title, **ctx)


def load(admin: Admin, p):
    row = admin.row("customers", p.get("id", ""))
    return dict(row) if row else None


async def edit(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    customer = load(admin, p)
    if customer is None:
        flash(request, "Something went wrong while editing the customer.", "error")
        return redirect(url("customer/index/"))
    tab = request.query_params.get("tab", "view")
    if tab not in dict(TABS):
        tab = "view"
    return customer_page(request, admin, customer, tab, False)


async def new(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    blank = {
        "id": None,
        "firstname": "",
        "lastname": "",
        "email": "",
        "dob": "",
        "gender": "",
        "group_name": "General",
        "newsletter": 0,
    }
    return customer_page(request, admin, blank, "account", True)


async def save(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    conn = admin.db
    existing = load(admin, p) if p.get("id") else None
    if p.get("id") and existing is None:
        return admin.not_found(request)
    form = await request.form()
    data = (
        dict(existing)
        if existing
        else {
            "id": None,
            "firstname": "",
            "lastname": "",
            "email": "",
            "dob": None,
            "gender": None,
            "group_name": "General",
            "newsletter": 0,
        }
    )
    for field in ("firstname", "lastname", "email", "group_name", "gender"):
        key = f"customer[{field}]"
        if key in form:
            data[field] = str(form.get(key) or "").strip()
    if "customer[dob]" in form:
        raw = str(form.get("customer[dob]") or "").strip()
        data["dob"] = parse_date(raw) if raw else None
    if "customer[newsletter]" in form:
        data["newsletter"] = 1 if "1" in form.getlist("customer[newsletter]") else 0
    errors = []
    if not data["firstname"]:
        errors.append('"First Name" is a required value.')
    if not data["lastname"]:
        errors.append('"Last Name" is a required value.')
    if not EMAIL_RE.match(data["email"] or ""):
        errors.append('"Email" is not a valid email address.')
    elif conn.execute(
        "SELECT 1 FROM customers WHERE lower(email) = lower(?) AND id != ?", (data["email"], data["id"] or 0)
    ).fetchone():
        errors.append("A customer with the same email address already exists in an associated website.")
    if data["group_name"] not in GROUPS:
        data["group_name"] = "General"
    if data["gender"] not in GENDERS:
        data["gender"] = None if not data["gender"] else "Not Specified"
    if errors:
        for e in errors:
            flash(request, e, "error")
        return customer_page(request, admin, data, "account", existing is None)
    with admin.ctx.db.transaction() as c:
        if existing:
            c.execute(
                "UPDATE customers SET firstname = ?, lastname = ?, email = ?, dob = ?, gender = ?,"
                " group_name = ?, newsletter = ? WHERE id = ?",
                (
                    data["firstname"],
                    data["lastname"],
                    data["email"],
                    data["dob"],
                    data["gender"],
                    data["group_name"],
                    data["newsletter"],
                    existing["id"],
                ),
            )
            cid = existing["id"]
        else:
            cur = c.execute(
                "INSERT INTO customers (email, firstname, lastname, password_hash, dob, gender, group_name, newsletter,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    data["email"],
                    data["firstname"],
                    data["lastname"],
                    hash_password(secrets.token_hex(12)),
                    data["dob"],
                    data["gender"],
                    data["group_name"],
                    data["newsletter"],
                    now(),
                ),
            )
            cid = cur.lastrowid
    flash(request, "You saved the customer.")
    if form.get("back") == "edit":
        return redirect(url(f"customer/index/edit/id/{cid}/"))
    return redirect(url("customer/index/"))


async def address_save(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    form = await request.form()
    address_id = p.get("id")
    if address_id:
        row = admin.row("addresses", address_id)
        if row is None:
            return admin.not_found(request)
        cid = row["customer_id"]
    else:
        row = None
        customer = load(admin, {"id": p.get("parent_id", "")})
        if customer is None:
            return admin.not_found(request)
        cid = customer["id"]
    values = {f: str(form.get(f"address[{f}]") or "").strip() for f in ADDRESS_FIELDS}
    values["country"] = values["country"] or "United States"
    missing = [f for f in ADDRESS_FIELDS if not values[f]]
    back = redirect(url(f"customer/index/edit/id/{cid}/") + "?tab=addresses")
    if missing:
        flash(request, f'"{missing[0].title()}" is a required value.', "error")
        return back
    billing = 1 if form.get("address[default_billing]") else 0
    shipping = 1 if form.get("address[default_shipping]") else 0
    with admin.ctx.db.transaction() as c:
        if billing:
            c.execute("UPDATE addresses SET is_default_billing = 0 WHERE customer_id = ?", (cid,))
        if shipping:
            c.execute("UPDATE addresses SET is_default_shipping = 0 WHERE customer_id = ?", (cid,))
        cols = list(ADDRESS_FIELDS)
        if row:
            sets = ", ".join(f"{f} = ?" for f in cols)
            c.execute(
                f"UPDATE addresses SET {sets}, is_default_billing = MAX(is_default_billing, ?),"
                " is_default_shipping = MAX(is_default_shipping, ?) WHERE id = ?",
                [values[f] for f in cols] + [billing, shipping, row["id"]],
            )
        else:
            c.execute(
                f"INSERT INTO addresses (customer_id, {', '.join(cols)}, is_default_billing, is_default_shipping)"
                f" VALUES (?, {', '.join('?' for _ in cols)}, ?, ?)",
                [cid] + [values[f] for f in cols] + [billing, shipping],
            )
    flash(request, "You saved the address.")
    return back


customers = grid_page(
    CUSTOMERS, "customer/index/", "Customers", buttons=[("Add New Customer", url("customer/index/new/"))]
)
subscribers = grid_page(SUBSCRIBERS, "newsletter/subscriber/", "Newsletter Subscribers")

ROUTES = [
    AdminRoute("customer/index/index", customers, section="customers"),
    AdminRoute("newsletter/subscriber/index", subscribers, section="marketing"),
    AdminRoute("customer/group/index", groups, section="customers"),
    AdminRoute("customer/index/edit", edit, section="customers"),
    AdminRoute("customer/index/new", new, section="customers"),
    AdminRoute("customer/index/save", save, methods=POST, section="customers"),
    AdminRoute("customer/address/save", address_save, methods=POST, section="customers"),
]
