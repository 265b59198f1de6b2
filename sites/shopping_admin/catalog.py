"""Catalog: the products grid, the product edit/new form and the category tree."""

from __future__ import annotations

import json

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response

from webrl.sites.platform import flash, now, redirect, row_id
from webrl.sites.shopping_admin.grid import (
    Column,
    Filter,
    Grid,
    action_column,
    money_column,
    parse_number,
    slugify,
)
from webrl.sites.shopping_admin.web import POST, Admin, AdminRoute, grid_page, url
from webrl.sites.store.store import category_tree

STATUS = (("1", "Enabled"), ("2", "Disabled"))
MAX_QTY = 99_999_999  # Magento keeps a stock quantity in a DECIMAL(12,4) column: 8 digits before the point


PRODUCTS = Grid(
    """SELECT p.id, p.name, 'Simple Product' AS type, 'Default' AS attribute_set, p.sku, p.price, p.qty,
        p.qty AS salable_qty, 'Catalog, Search' AS visibility, p.status, 'Main Website' AS websites,
        c.name AS category, p.url_key
        FROM products p LEFT JOIN categories c ON c.id = p.category_id""",
    [
        Column("id", "ID", cls="num"),
        Column("thumbnail", "Thumbnail", render=lambda r: Markup('<span class="thumb">img</span>'), sortable=False),
        Column("name", "Name"),
        Column("type", "Type"),
        Column("attribute_set", "Attribute Set"),
        Column("sku", "SKU"),
        money_column("price", "Price"),
        Column("qty", "Quantity", render=lambda r: f"{r['qty']:.4f}", cls="num"),
        Column("salable_qty", "Salable Quantity", render=lambda r: f"Default Stock: {max(r['salable_qty'], 0)}"),
        Column("visibility", "Visibility"),
        Column("status", "Status", render=lambda r: "Enabled" if r["status"] == 1 else "Disabled"),
        Column("websites", "Websites"),
        action_column("Edit", lambda r: url(f"catalog/product/edit/id/{r['id']}/")),
    ],
    search=("name", "sku"),
    filters=(
        Filter("id", "ID", "range"),
        Filter("name", "Name"),
        Filter("sku", "SKU"),
        Filter("price", "Price", "range"),
        Filter("qty", "Quantity", "range"),
        Filter("status", "Status", "select", STATUS),
    ),
    default_sort="id",
    default_dir="asc",
)


def category_options(conn) -> list[tuple[str, list[tuple[int, str]]]]:
    """(top-level name, [(leaf id, leaf name)]) for the category select; a top level without
    children is its own option."""
    groups = []
    for top in category_tree(conn):
        leaves = [(c["id"], c["name"]) for c in top["children"]] or [(top["id"], top["name"])]
        groups.append((top["name"], leaves))
    return groups


products = grid_page(
    PRODUCTS,
    "catalog/product/",
    "Products",
    buttons=[("Add Product", url("catalog/product/new/set/4/type/simple/"))],
    massaction={
        "action": url("catalog/product/massStatus/"),
        "actions": [("status", "Update Status")],
        "statuses": STATUS,
    },
)


async def mass_status(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    form = await request.form()
    ids = [i for i in map(row_id, form.getlist("selected")) if i is not None]
    status = 1 if str(form.get("status")) == "1" else 2
    if not ids:
        flash(request, "Please select product(s).", "error")
    else:
        with admin.ctx.db.transaction() as conn:
            for pid in ids:
                conn.execute("UPDATE products SET status = ?, updated_at = ? WHERE id = ?", (status, now(), pid))
        flash(request, f"A total of {len(ids)} record(s) have been updated.")
    return redirect(url("catalog/product/"))


def form_page(request, admin: Admin, product: dict, errors: list[str], is_new: bool, status_code: int = 200):
    action = (
        url("catalog/product/save/set/4/type/simple/") if is_new else url(f"catalog/product/save/id/{product['id']}/")
    )
    options = product.get("options") or "{}"
    return admin.render(
        request,
        "product_edit.html",
        status_code=status_code,
        title="New Product" if is_new else product["name"],
        product=product,
        errors=errors,
        action=action,
        categories=category_options(admin.db),
        is_new=is_new,
        options=json.loads(options) if isinstance(options, str) else options,
        storefront_url=(admin.ctx.urls.get("shopping", "") + f"/{product['url_key']}.html") if not is_new else "",
    )


async def edit(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    row = admin.row("products", p.get("id", ""))
    if row is None:
        flash(request, "This product doesn't exist.", "error")
        return redirect(url("catalog/product/"))
    return form_page(request, admin, dict(row), [], False)


async def new(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    blank = {
        "id": None,
        "name": "",
        "sku": "",
        "price": "",
        "qty": 0,
        "status": 1,
        "description": "",
        "category_id": None,
        "weight": "",
        "url_key": "",
        "options": "{}",
    }
    return form_page(request, admin, blank, [], True)


async def save(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    conn = admin.db
    existing = admin.row("products", p["id"]) if p.get("id") else None
    if p.get("id") and existing is None:
        flash(request, "This product doesn't exist.", "error")
        return redirect(url("catalog/product/"))
    form = await request.form()
    get = lambda k: str(form.get(f"product[{k}]") or "").strip()  # noqa: E731
    data = dict(existing) if existing else {"id": None, "options": "{}"}
    data.update(
        name=get("name"),
        sku=get("sku"),
        description=get("description"),
        status=1 if "1" in form.getlist("product[status]") else 2,
        url_key=get("url_key"),
    )
    errors = []
    price = parse_number(get("price"))
    qty = parse_number(get("qty") or "0")
    weight = parse_number(get("weight") or "1")
    data["price"], data["qty"], data["weight"] = get("price"), get("qty"), get("weight")
    data["category_id"] = row_id(get("category_id"))
    if not data["name"]:
        errors.append('"Product Name" is a required value.')
    if not data["sku"]:
        errors.append('"SKU" is a required value.')
    if price is None or price < 0:
        errors.append("Please enter a number 0 or greater in the Price field.")
    if qty is None:
        errors.append("Please enter a valid number in the Quantity field.")
    elif abs(qty) > MAX_QTY:
        errors.append(f"Please enter a quantity between -{MAX_QTY} and {MAX_QTY}.")
    if weight is None or weight < 0:
        weight = 1.0
    if (
        data["category_id"] is None
        or conn.execute("SELECT 1 FROM categories WHERE id = ?", (data["category_id"],)).fetchone() is None
    ):
        errors.append("Please select a category.")
    if (
        data["sku"]
        and conn.execute("SELECT 1 FROM products WHERE sku = ? AND id != ?", (data["sku"], data["id"] or 0)).fetchone()
    ):
        errors.append(f'The product with SKU "{data["sku"]}" already exists.')
    url_key = slugify(data["url_key"] or data["name"]) if (data["url_key"] or data["name"]) else ""
    if existing is None and not get("url_key") and url_key:
        base, n = url_key, 1
        while conn.execute("SELECT 1 FROM products WHERE url_key = ?", (url_key,)).fetchone():
            url_key = f"{base}-{n}"
            n += 1
    elif (
        url_key
        and conn.execute("SELECT 1 FROM products WHERE url_key = ? AND id != ?", (url_key, data["id"] or 0)).fetchone()
    ):
        errors.append("The value specified in the URL Key field would generate a URL that already exists.")
    if errors:
        for e in errors:
            flash(request, e, "error")
        return form_page(request, admin, data, errors, existing is None)
    qty_int = int(qty)
    if get("stock_status") == "0":
        qty_int = 0  # "Out of Stock": nothing salable
    stamp = now()
    with admin.ctx.db.transaction() as c:
        if existing:
            c.execute(
                "UPDATE products SET name = ?, sku = ?, url_key = ?, category_id = ?, price = ?, qty = ?, status = ?,"
                " description = ?, weight = ?, updated_at = ? WHERE id = ?",
                (
                    data["name"],
                    data["sku"],
                    url_key,
                    data["category_id"],
                    round(price, 2),
                    qty_int,
                    data["status"],
                    data["description"],
                    weight,
                    stamp,
                    existing["id"],
                ),
            )
            pid = existing["id"]
        else:
            cur = c.execute(
                "INSERT INTO products (sku, name, url_key, category_id, price, qty, status, description, options,"
                " weight, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?)",
                (
                    data["sku"],
                    data["name"],
                    url_key,
                    data["category_id"],
                    round(price, 2),
                    qty_int,
                    data["status"],
                    data["description"],
                    weight,
                    stamp,
                    stamp,
                ),
            )
            pid = cur.lastrowid
    flash(request, "You saved the product.")
    if form.get("back") == "new":
        return redirect(url("catalog/product/new/set/4/type/simple/"))
    if form.get("back") == "close":
        return redirect(url("catalog/product/"))
    return redirect(url(f"catalog/product/edit/id/{pid}/"))


async def categories(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    counts = dict(admin.db.execute("SELECT category_id, COUNT(*) FROM products GROUP BY category_id").fetchall())
    rows = []
    for top in category_tree(admin.db):
        total = sum(counts.get(c["id"], 0) for c in top["children"]) + counts.get(top["id"], 0)
        rows.append((top["id"], top["name"], "", top["url_path"], total))
        for child in top["children"]:
            rows.append((child["id"], "", child["name"], child["url_path"], counts.get(child["id"], 0)))
    return admin.render(
        request,
        "simple_table.html",
        title="Categories",
        headers=["ID", "Category", "Subcategory", "URL Path", "Products"],
        rows=rows,
    )


ROUTES = [
    AdminRoute("catalog/product/index", products, section="catalog"),
    AdminRoute("catalog/product/massStatus", mass_status, methods=POST, section="catalog"),
    AdminRoute("catalog/product/edit", edit, section="catalog"),
    AdminRoute("catalog/product/new", new, section="catalog"),
    AdminRoute("catalog/product/save", save, methods=POST, section="catalog"),
    AdminRoute("catalog/category/index", categories, section="catalog"),
]
