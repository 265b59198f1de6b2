"""Catalog pages: home, category listings, search, product pages and writing reviews."""

from __future__ import annotations

import json
from typing import Any

from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from webrl.sites.platform import flash, int_param, now, redirect, row_id, search_term
from webrl.sites.shopping.web import Shop, shop_of
from webrl.sites.store import store


class HtmlPathConvertor(Convertor):
    """A path ending in .html, e.g. 'home-kitchen/bedding.html'."""

    regex = r"[^?#]+\.html"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("shop_html", HtmlPathConvertor())

PAGE_SIZES = (12, 24, 36)
ORDER_COLUMNS = {"position": "p.id", "name": "p.name COLLATE NOCASE", "price": "p.price"}


def rating_summaries(shop: Shop, product_ids: list[int]) -> dict[int, tuple[int, int]]:
    """product id -> (average rating as a percent, number of approved reviews)."""
    if not product_ids:
        return {}
    marks = ",".join("?" * len(product_ids))
    rows = shop.conn.execute(
        f"SELECT product_id, AVG(rating) AS avg, COUNT(*) AS n FROM reviews WHERE status = 'Approved'"
        f" AND product_id IN ({marks}) GROUP BY product_id",
        product_ids,
    )
    return {r["product_id"]: (round(r["avg"] * 20), r["n"]) for r in rows}


def listing(
    shop: Shop, request: Request, where: str, params: list[Any], relevance: tuple[str, list[Any]] | None = None
) -> dict[str, Any]:
    """One page of enabled products matching `where`, with Magento's toolbar state: sort
    (product_list_order, product_list_dir), page size (product_list_limit) and page (p)."""
    q = request.query_params
    orders = (["relevance"] if relevance else []) + ["position", "name", "price"]
    order = q.get("product_list_order") if q.get("product_list_order") in orders else orders[0]
    direction = q.get("product_list_dir", "").lower()
    if direction not in ("asc", "desc"):
        direction = "desc" if order == "relevance" else "asc"
    limit = int_param(q.get("product_list_limit"), 12)
    if limit not in PAGE_SIZES:
        limit = 12
    base = f"FROM products p WHERE p.status = 1 AND ({where})"
    total = shop.conn.execute(f"SELECT COUNT(*) {base}", params).fetchone()[0]
    pages = max(1, -(-total // limit))
    page = int_param(q.get("p"), 1, 1, pages)
    sql_dir = "DESC" if direction == "desc" else "ASC"
    if order == "relevance" and relevance:
        order_sql, order_params = f"{relevance[0]} {sql_dir}, p.id ASC", relevance[1]
    else:
        order_sql, order_params = f"{ORDER_COLUMNS[order]} {sql_dir}, p.id ASC", []
    products = shop.conn.execute(
        f"SELECT p.* {base} ORDER BY {order_sql} LIMIT ? OFFSET ?",
        [*params, *order_params, limit, (page - 1) * limit],
    ).fetchall()
    return {
        "products": products,
        "ratings": rating_summaries(shop, [p["id"] for p in products]),
        "total": total,
        "page": page,
        "pages": pages,
        "limit": limit,
        "order": order,
        "direction": direction,
        "orders": orders,
        "first": (page - 1) * limit + 1 if total else 0,
        "last": min(page * limit, total),
    }


def breadcrumbs(shop: Shop, category_id: int) -> list[dict[str, Any]]:
    """The category and its ancestors, top first."""
    trail = []
    current = shop.conn.execute("SELECT * FROM categories WHERE id = ?", (category_id,)).fetchone()
    while current is not None:
        trail.insert(0, dict(current))
        parent = current["parent_id"]
        current = shop.conn.execute("SELECT * FROM categories WHERE id = ?", (parent,)).fetchone() if parent else None
    return trail


async def home(request: Request) -> Response:
    shop = shop_of(request)
    products = shop.conn.execute(
        "SELECT * FROM products WHERE status = 1 AND qty > 0 ORDER BY (id * 2654435761) % 1000003 LIMIT 18"
    ).fetchall()
    return shop.render(
        request,
        "home.html",
        {
            "title": "One Stop Market",
            "products": products,
            "ratings": rating_summaries(shop, [p["id"] for p in products]),
        },
    )


async def html_page(request: Request) -> Response:
    """/<url_key>.html is a product; /<url_path>.html a category."""
    shop = shop_of(request)
    key = request.path_params["path"][: -len(".html")]
    if "/" not in key:
        product = store.product_by_url_key(shop.conn, key)
        if product is not None and product["status"] == 1:
            return product_page(shop, request, product)
    category = store.category_by_path(shop.conn, key)
    if category is not None:
        return category_page(shop, request, category)
    return shop.not_found(request)


def category_page(shop: Shop, request: Request, category) -> Response:
    conn = shop.conn
    ids = store.descendant_category_ids(conn, category["id"])
    marks = ",".join("?" * len(ids))
    data = listing(shop, request, f"p.category_id IN ({marks})", ids)
    children = []
    for child in conn.execute("SELECT * FROM categories WHERE parent_id = ? ORDER BY position, id", (category["id"],)):
        sub = store.descendant_category_ids(conn, child["id"])
        count = conn.execute(
            f"SELECT COUNT(*) FROM products WHERE status = 1 AND category_id IN ({','.join('?' * len(sub))})", sub
        ).fetchone()[0]
        if count:
            children.append({"name": child["name"], "url": f"/{child['url_path']}.html", "count": count})
    return shop.render(
        request,
        "listing.html",
        {
            **data,
            "title": category["name"],
            "heading": category["name"],
            "category": category,
            "trail": breadcrumbs(shop, category["id"]),
            "filters": children,
        },
    )


async def search(request: Request) -> Response:
    shop = shop_of(request)
    conn = shop.conn
    q, cut = search_term(request.query_params.get("q"), store.MAX_QUERY_LENGTH)
    if not q:
        return RedirectResponse("/", status_code=302)
    if cut:
        flash(request, f"Maximum Search query length is {store.MAX_QUERY_LENGTH}. Your query was cut.", "notice")
    words = [w.lower() for w in q.split()]
    patterns = ["%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for w in words]
    clauses, params = [], []
    for pat in patterns:
        clauses.append("(p.name LIKE ? ESCAPE '\\' OR p.description LIKE ? ESCAPE '\\')")
        params += [pat, pat]
    where = " AND ".join(clauses)
    all_params = list(params)
    cat = row_id(request.query_params.get("cat", ""))
    cat_filter = None if cat is None else conn.execute("SELECT * FROM categories WHERE id = ?", (cat,)).fetchone()
    scoped_where, scoped_params = where, all_params
    if cat_filter is not None:
        ids = store.descendant_category_ids(conn, cat_filter["id"])
        scoped_where = f"{where} AND p.category_id IN ({','.join('?' * len(ids))})"
        scoped_params = [*all_params, *ids]
    relevance = (" + ".join(["(p.name LIKE ? ESCAPE '\\')"] * len(patterns)), patterns)
    data = listing(shop, request, scoped_where, scoped_params, relevance)
    # Layered navigation: the top-level categories of the matches, with counts.
    filters = []
    if cat_filter is None:
        rows = conn.execute(
            f"SELECT COALESCE(parent.id, c.id) AS id, COALESCE(parent.name, c.name) AS name, COUNT(*) AS n"
            f" FROM products p JOIN categories c ON c.id = p.category_id"
            f" LEFT JOIN categories parent ON parent.id = c.parent_id"
            f" WHERE p.status = 1 AND ({where}) GROUP BY 1, 2 ORDER BY 2",
            all_params,
        )
        filters = [{"name": r["name"], "url": None, "cat": r["id"], "count": r["n"]} for r in rows]
    if "p" not in request.query_params:
        total = conn.execute(
            f"SELECT COUNT(*) FROM products p WHERE p.status = 1 AND ({where})", all_params
        ).fetchone()[0]
        record_search(shop, q, total)
    return shop.render(
        request,
        "listing.html",
        {
            **data,
            "title": f"Search results for: '{q}'",
            "heading": f"Search results for: '{q}'",
            "search": q,
            "filters": filters,
            "cat_filter": cat_filter,
        },
    )


def record_search(shop: Shop, q: str, num_results: int) -> None:
    row = shop.conn.execute("SELECT id FROM search_terms WHERE lower(query_text) = lower(?)", (q,)).fetchone()
    if row:
        shop.conn.execute(
            "UPDATE search_terms SET popularity = popularity + 1, num_results = ?, updated_at = ? WHERE id = ?",
            (num_results, now(), row["id"]),
        )
    else:
        shop.conn.execute(
            "INSERT INTO search_terms (query_text, num_results, popularity, updated_at) VALUES (?, ?, 1, ?)",
            (q, num_results, now()),
        )


def product_page(shop: Shop, request: Request, product) -> Response:
    reviews = shop.conn.execute(
        "SELECT * FROM reviews WHERE product_id = ? AND status = 'Approved' ORDER BY created_at DESC, id DESC",
        (product["id"],),
    ).fetchall()
    percent, count = rating_summaries(shop, [product["id"]]).get(product["id"], (0, 0))
    customer = shop.customer(request)
    return shop.render(
        request,
        "product.html",
        {
            "title": product["name"],
            "product": product,
            "options": json.loads(product["options"] or "{}"),
            "reviews": reviews,
            "rating_percent": percent,
            "review_count": count,
            "trail": breadcrumbs(shop, product["category_id"]),
            "review_nickname": customer["firstname"] if customer else "",
            "form": request.session.pop("review_form", {}),
        },
    )


def product_redirect(request: Request, fragment: str, status_code: int) -> Response:
    """Redirect to the page of the enabled product <id> (at `fragment`), or show the 404 page."""
    shop = shop_of(request)
    product = shop.enabled_product(request.path_params["id"])
    if product is None:
        return shop.not_found(request)
    return RedirectResponse(f"/{product['url_key']}.html{fragment}", status_code=status_code)


async def product_by_id(request: Request) -> Response:
    return product_redirect(request, "", 301)


async def review_list(request: Request) -> Response:
    return product_redirect(request, "#reviews", 302)


async def review_post(request: Request) -> Response:
    shop = shop_of(request)
    product = shop.enabled_product(request.path_params["id"])
    if product is None:
        return shop.not_found(request)
    form = await request.form()
    fields = {k: str(form.get(k, "")).strip() for k in ("nickname", "title", "detail")}
    rating = int_param(form.get("rating"), 0, 0, 5)
    url = f"/{product['url_key']}.html#review-form"
    if not all(fields.values()) or not rating:
        request.session["review_form"] = {**fields, "rating": rating}
        return redirect(
            url,
            "Please select one of each of the ratings above."
            if not rating
            else "Please enter a nickname, a summary and a review.",
            "error",
            request,
        )
    customer = shop.customer(request)
    shop.conn.execute(
        "INSERT INTO reviews (product_id, customer_id, nickname, title, detail, rating, status, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, 'Pending', ?)",
        (
            product["id"],
            customer["id"] if customer else None,
            fields["nickname"],
            fields["title"],
            fields["detail"],
            rating,
            now(),
        ),
    )
    flash(request, "You submitted your review for moderation.")
    return RedirectResponse(f"/{product['url_key']}.html", status_code=303)


ROUTES = [
    Route("/", home),
    Route("/catalogsearch/result/", search),
    Route("/catalog/product/view/id/{id:id}", product_by_id),
    Route("/catalog/product/view/id/{id:id}/", product_by_id),
    Route("/review/product/list/id/{id:id}/", review_list),
    Route("/review/product/post/id/{id:id}/", review_post, methods=["POST"]),
    Route("/{path:shop_html}", html_page),  # products and categories: any path ending in .html
]
