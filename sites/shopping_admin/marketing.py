"""Marketing: reviews (grid, pending, edit, delete, mass actions), cart price rules and search terms."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from webrl.sites.platform import flash, now, redirect, row_id
from webrl.sites.shopping_admin.grid import (
    Column,
    Filter,
    Grid,
    action_column,
    datetime_column,
    fmt_date,
    parse_date,
    parse_number,
)
from webrl.sites.shopping_admin.web import POST, Admin, AdminRoute, grid_page, url

REVIEW_STATUSES = (("Approved", "Approved"), ("Pending", "Pending"), ("Not Approved", "Not Approved"))
ACTIONS = (("by_percent", "Percent of product price discount"), ("by_fixed", "Fixed amount discount for whole cart"))
CUSTOMER_GROUPS = ("NOT LOGGED IN", "General", "Wholesale", "Retailer")
MAX_USES = 2**31 - 1  # Magento keeps uses_per_coupon in an INT column


def _shorten(text: str, n: int = 50) -> str:
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


REVIEWS = Grid(
    """SELECT r.id, r.created_at, r.status, r.title, r.nickname, r.detail, 'Main Website' AS visibility,
        CASE WHEN r.customer_id IS NULL THEN 'Guest' ELSE 'Customer' END AS type, p.name AS product_name,
        p.sku, r.rating, r.product_id, r.customer_id
        FROM reviews r JOIN products p ON p.id = r.product_id""",
    [
        Column("id", "ID", cls="num"),
        datetime_column("created_at", "Created"),
        Column("status", "Status"),
        Column("title", "Title"),
        Column("nickname", "Nickname"),
        Column("detail", "Review", render=lambda r: _shorten(r["detail"])),
        Column("visibility", "Visibility"),
        Column("type", "Type"),
        Column("product_name", "Product"),
        Column("sku", "SKU"),
        action_column("Edit", lambda r: url(f"review/product/edit/id/{r['id']}/")),
    ],
    search=("title", "nickname", "detail", "product_name", "sku"),
    filters=(
        Filter("id", "ID", "range"),
        Filter("created_at", "Created", "date"),
        Filter("status", "Status", "select", REVIEW_STATUSES),
        Filter("title", "Title"),
        Filter("nickname", "Nickname"),
        Filter("detail", "Review"),
        Filter("type", "Type", "select", (("Guest", "Guest"), ("Customer", "Customer"))),
        Filter("product_name", "Product"),
        Filter("sku", "SKU"),
    ),
    default_sort="created_at",
    default_dir="desc",
)

RULES = Grid(
    """SELECT id, name, COALESCE(coupon_code, '') AS coupon_code, 0 AS priority, is_active, 'Main Website' AS website,
        from_date, to_date, discount_type, discount_amount, times_used FROM cart_price_rules""",
    [
        Column("id", "ID", cls="num"),
        Column("name", "Rule"),
        Column("coupon_code", "Coupon Code"),
        Column("priority", "Priority", cls="num"),
        Column("is_active", "Status", render=lambda r: "Active" if r["is_active"] else "Inactive"),
        Column("website", "Web Site"),
        Column("from_date", "Start", render=lambda r: fmt_date(r["from_date"])),
        Column("to_date", "End", render=lambda r: fmt_date(r["to_date"])),
        action_column("Edit", lambda r: url(f"sales_rule/promo_quote/edit/id/{r['id']}/")),
    ],
    search=("name", "coupon_code"),
    filters=(
        Filter("id", "ID", "range"),
        Filter("name", "Rule"),
        Filter("coupon_code", "Coupon Code"),
        Filter("is_active", "Status", "select", (("1", "Active"), ("0", "Inactive"))),
        Filter("from_date", "Start", "date"),
        Filter("to_date", "End", "date"),
    ),
    default_sort="id",
)


def search_terms_grid(report: bool) -> Grid:
    cols = [
        Column("id", "ID", cls="num"),
        Column("query_text", "Search Query"),
        Column("store", "Store", sortable=False),
        Column("num_results", "Results", cls="num"),
        Column("popularity", "Hits" if report else "Uses", cls="num"),
    ]
    if not report:
        cols.append(datetime_column("updated_at", "Updated"))
    return Grid(
        "SELECT id, query_text, 'Default Store View' AS store, num_results, popularity, updated_at FROM search_terms",
        cols,
        search=("query_text",),
        filters=(
            Filter("id", "ID", "range"),
            Filter("query_text", "Search Query"),
            Filter("num_results", "Results", "range"),
            Filter("popularity", "Hits" if report else "Uses", "range"),
        ),
        default_sort="popularity" if report else "id",
        default_dir="desc" if report else "asc",
    )


SEARCH_TERMS = search_terms_grid(False)
SEARCH_REPORT = search_terms_grid(True)
REVIEW_MASSACTION = {
    "action": url("review/product/massUpdateStatus/"),
    "actions": [("update_status", "Update Status"), ("delete", "Delete")],
    "statuses": REVIEW_STATUSES,
}


async def review_edit(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    review = admin.db.execute(
        "SELECT r.*, p.name AS product_name, p.sku, c.firstname || ' ' || c.lastname AS customer_name"
        " FROM reviews r JOIN products p ON p.id = r.product_id LEFT JOIN customers c ON c.id = r.customer_id"
        " WHERE r.id = ?",
        (p.get("id", ""),),
    ).fetchone()
    if review is None:
        flash(request, "The review you are trying to edit does not exist.", "error")
        return redirect(url("review/product/"))
    return admin.render(request, "review_edit.html", title="Edit Review", review=review, statuses=REVIEW_STATUSES)


async def review_save(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    review = admin.row("reviews", p.get("id", ""))
    if review is None:
        return admin.not_found(request)
    form = await request.form()
    status = str(form.get("status") or review["status"])
    nickname = str(form.get("nickname") or "").strip()
    title = str(form.get("title") or "").strip()
    detail = str(form.get("detail") or "").strip()
    try:
        rating = int(str(form.get("rating") or review["rating"]))
    except ValueError:
        rating = review["rating"]
    if status not in dict(REVIEW_STATUSES) or not (1 <= rating <= 5) or not (nickname and title and detail):
        flash(request, "Please fill in all required fields.", "error")
        return redirect(url(f"review/product/edit/id/{review['id']}/"))
    with admin.ctx.db.transaction() as c:
        c.execute(
            "UPDATE reviews SET status = ?, nickname = ?, title = ?, detail = ?, rating = ? WHERE id = ?",
            (status, nickname, title, detail, rating, review["id"]),
        )
    flash(request, "You saved the review.")
    return redirect(url("review/product/"))


async def review_delete(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    with admin.ctx.db.transaction() as c:
        deleted = c.execute("DELETE FROM reviews WHERE id = ?", (p.get("id", ""),)).rowcount
    if deleted:
        flash(request, "The review has been deleted.")
    else:
        flash(request, "The review you are trying to delete does not exist.", "error")
    return redirect(url("review/product/"))


async def review_mass_action(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    form = await request.form()
    ids = [i for i in map(row_id, form.getlist("selected")) if i is not None]
    ref = urlsplit(request.headers.get("referer") or "")
    target = ref.path + ("?" + ref.query if ref.query else "")
    back = redirect(target if ref.path.startswith("/admin/review/product") else url("review/product/"))
    if not ids:
        flash(request, "Please select review(s).", "error")
        return back
    marks = ", ".join("?" for _ in ids)
    with admin.ctx.db.transaction() as c:
        if form.get("massaction") == "delete":
            n = c.execute(f"DELETE FROM reviews WHERE id IN ({marks})", ids).rowcount
            flash(request, f"A total of {n} record(s) have been deleted.")
        else:
            status = str(form.get("status") or "")
            if status not in dict(REVIEW_STATUSES):
                flash(request, "Please select a status.", "error")
                return back
            n = c.execute(f"UPDATE reviews SET status = ? WHERE id IN ({marks})", [status, *ids]).rowcount
            flash(request, f"A total of {n} record(s) have been updated.")
    return back


# Cart price rules


def rule_form(request, admin: Admin, rule: dict, is_new: bool):
    action = url("sales_rule/promo_quote/save/") if is_new else url(f"sales_rule/promo_quote/save/id/{rule['id']}/")
    return admin.render(
        request,
        "rule_edit.html",
        title="New Cart Price Rule" if is_new else rule["name"],
        rule=rule,
        is_new=is_new,
        action=action,
        actions=ACTIONS,
        groups=CUSTOMER_GROUPS,
    )


async def rule_new(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    blank = {
        "id": None,
        "name": "",
        "description": "",
        "coupon_code": "",
        "discount_type": "by_percent",
        "discount_amount": "",
        "is_active": 1,
        "from_date": "",
        "to_date": "",
        "uses_per_coupon": 0,
    }
    return rule_form(request, admin, blank, True)


async def rule_edit(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    row = admin.row("cart_price_rules", p.get("id", ""))
    if row is None:
        flash(request, "This rule no longer exists.", "error")
        return redirect(url("sales_rule/promo_quote/"))
    return rule_form(request, admin, dict(row), False)


async def rule_save(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    conn = admin.db
    existing = admin.row("cart_price_rules", p["id"]) if p.get("id") else None
    if p.get("id") and existing is None:
        return admin.not_found(request)
    form = await request.form()
    get = lambda k: str(form.get(f"rule[{k}]") or "").strip()  # noqa: E731
    data = dict(existing) if existing else {"id": None, "times_used": 0}
    coupon_type = get("coupon_type") or "2"
    data.update(
        name=get("name"),
        description=get("description"),
        is_active=1 if "1" in form.getlist("rule[is_active]") else 0,
        coupon_code=(get("coupon_code") or None) if coupon_type == "2" else None,
        discount_type=get("simple_action") if get("simple_action") in dict(ACTIONS) else "by_percent",
        discount_amount=get("discount_amount"),
        from_date=get("from_date"),
        to_date=get("to_date"),
        uses_per_coupon=get("uses_per_coupon") or "0",
    )
    errors = []
    amount = parse_number(data["discount_amount"])
    uses = parse_number(data["uses_per_coupon"])
    start = parse_date(data["from_date"]) if data["from_date"] else None
    end = parse_date(data["to_date"]) if data["to_date"] else None
    if not data["name"]:
        errors.append('"Rule Name" is a required value.')
    if amount is None or amount < 0:
        errors.append("Please enter a number 0 or greater in the Discount Amount field.")
    elif data["discount_type"] == "by_percent" and amount > 100:
        errors.append("Percent discount should be between 0 and 100.")
    if coupon_type == "2" and not data["coupon_code"]:
        errors.append('"Coupon Code" is a required value.')
    if (
        data["coupon_code"]
        and conn.execute(
            "SELECT 1 FROM cart_price_rules WHERE lower(coupon_code) = lower(?) AND id != ?",
            (data["coupon_code"], data["id"] or 0),
        ).fetchone()
    ):
        errors.append("The coupon code isn't unique. Use a different coupon code and try again.")
    if (data["from_date"] and start is None) or (data["to_date"] and end is None):
        errors.append("Please enter dates as MM/DD/YYYY.")
    elif start and end and end < start:
        errors.append("End Date must follow Start Date.")
    if uses is None or uses < 0:
        errors.append("Please enter a number 0 or greater in the Uses per Coupon field.")
    elif uses > MAX_USES:
        errors.append(f"Please enter a value less than or equal to {MAX_USES} in the Uses per Coupon field.")
    if errors:
        for e in errors:
            flash(request, e, "error")
        return rule_form(request, admin, data, existing is None)
    values = (
        data["name"],
        data["description"],
        data["coupon_code"],
        data["discount_type"],
        round(amount, 4),
        data["is_active"],
        start,
        end,
        int(uses),
    )
    with admin.ctx.db.transaction() as c:
        if existing:
            c.execute(
                "UPDATE cart_price_rules SET name = ?, description = ?, coupon_code = ?, discount_type = ?,"
                " discount_amount = ?, is_active = ?, from_date = ?, to_date = ?, uses_per_coupon = ?"
                " WHERE id = ?",
                (*values, existing["id"]),
            )
            rid = existing["id"]
        else:
            rid = c.execute(
                "INSERT INTO cart_price_rules (name, description, coupon_code, discount_type,"
                " discount_amount, is_active, from_date, to_date, uses_per_coupon, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*values, now()),
            ).lastrowid
    flash(request, "You saved the rule.")
    if form.get("back") == "edit":
        return redirect(url(f"sales_rule/promo_quote/edit/id/{rid}/"))
    return redirect(url("sales_rule/promo_quote/"))


async def rule_delete(request: Request, admin: Admin, p: dict[str, str]) -> Response:
    with admin.ctx.db.transaction() as c:
        n = c.execute("DELETE FROM cart_price_rules WHERE id = ?", (p.get("id", ""),)).rowcount
    flash(request, "You deleted the rule." if n else "We can't find a rule to delete.", "success" if n else "error")
    return redirect(url("sales_rule/promo_quote/"))


# Search terms


reviews = grid_page(REVIEWS, "review/product/", "Reviews", massaction=REVIEW_MASSACTION)
pending_reviews = grid_page(
    REVIEWS, "review/product/pending/", "Pending Reviews", "g.status = 'Pending'", massaction=REVIEW_MASSACTION
)
rules = grid_page(
    RULES, "sales_rule/promo_quote/", "Cart Price Rules", buttons=[("Add New Rule", url("sales_rule/promo_quote/new/"))]
)
terms = grid_page(SEARCH_TERMS, "search/term/index/", "Search Terms")
terms_report = grid_page(SEARCH_REPORT, "search/term/report/", "Search Terms Report")

ROUTES = [
    AdminRoute("review/product/index", reviews, section="marketing"),
    AdminRoute("review/product/pending", pending_reviews, section="marketing"),
    AdminRoute("review/product/edit", review_edit, section="marketing"),
    AdminRoute("review/product/save", review_save, methods=POST, section="marketing"),
    AdminRoute("review/product/delete", review_delete, methods=POST, section="marketing"),
    AdminRoute("review/product/massUpdateStatus", review_mass_action, methods=POST, section="marketing"),
    AdminRoute("review/product/massDelete", review_mass_action, methods=POST, section="marketing"),
    AdminRoute("sales_rule/promo_quote/index", rules, section="marketing"),
    AdminRoute("sales_rule/promo_quote/new", rule_new, section="marketing"),
    AdminRoute("sales_rule/promo_quote/edit", rule_edit, section="marketing"),
    AdminRoute("sales_rule/promo_quote/save", rule_save, methods=POST, section="marketing"),
    AdminRoute("sales_rule/promo_quote/delete", rule_delete, methods=POST, section="marketing"),
    AdminRoute("search/term/index", terms, section="marketing"),
    AdminRoute("search/term/report", terms_report, section="reports"),
]
