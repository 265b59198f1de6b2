"""Task templates over the shop's admin panel (see webrl.tasks.templates), after WebArena's shopping_admin
tasks: reports, customers, orders, reviews, catalog and promotion changes, navigation, and questions
about records that do not exist. Every answer, URL, locator value and element name is read from the
pristine store data; the admin grids' own search is only used to pick records that a keyword search
brings to the top (so that the scripted solution's "first Edit/View link" is the right one)."""

from __future__ import annotations

import calendar
import random
import re

from webrl.sites.shopping_admin.catalog import PRODUCTS
from webrl.sites.shopping_admin.customers import CUSTOMERS
from webrl.sites.shopping_admin.marketing import REVIEWS
from webrl.sites.store.store import ORDER_STATUS_LABELS
from webrl.tasks.script import click, done, hover, scroll_down, scroll_up, search, select, type_
from webrl.tasks.templates import Data, Instance, TaskTemplate, html_eval, string_eval, unachievable, url_eval

ADMIN = "__SHOPPING_ADMIN__"
SITES = ("shopping_admin",)


# -- helpers -----------------------------------------------------------------------------------------


def _search(text: str) -> str:
    """The admin grids' keyword search."""
    return search("placeholder=Search by keyword", text)


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _mdy(iso: str) -> str:
    """'2023-03-01' -> '03/01/2023' (the admin's date inputs)."""
    y, m, d = iso.split("-")
    return f"{m}/{d}/{y}"


def _month(ym: str) -> tuple[str, str, str]:
    """'2023-03' -> ('March 2023', '2023-03-01', '2023-03-31')."""
    y, m = (int(p) for p in ym.split("-"))
    last = calendar.monthrange(y, m)[1]
    return f"{calendar.month_name[m]} {y}", f"{y:04d}-{m:02d}-01", f"{y:04d}-{m:02d}-{last:02d}"


def _first_hit(data: Data, grid, query: dict, extra_where: str = "") -> int | None:
    """The id of the first row the admin grid shows for `query` (its keyword search, filters, sorting)."""
    result = grid.run(data.connections["store"], query, extra_where)
    return result.rows[0]["id"] if result.rows else None


def _months(data: Data) -> list[str]:
    return [r["m"] for r in data.rows("store", "SELECT DISTINCT substr(created_at, 1, 7) AS m FROM orders ORDER BY m")]


def _billing(data: Data):
    """Each customer with the address the admin shows for them (default billing first)."""
    return data.rows(
        "store",
        """
        SELECT c.id, c.firstname, c.lastname, c.email, a.telephone, a.postcode, a.region
        FROM customers c JOIN addresses a ON a.id = (
            SELECT id FROM addresses WHERE customer_id = c.id ORDER BY is_default_billing DESC, id LIMIT 1)
        ORDER BY c.id""",
    )


# -- information: orders -------------------------------------------------------------------------------


def order_status(data: Data) -> list[Instance]:
    """The status label of an order, read from the orders grid after a search by its number."""
    rows = data.rows("store", "SELECT increment_id, status FROM orders ORDER BY id")
    picked = sorted(data.sample("order_status", rows, 8, "shuffled"), key=lambda r: r["increment_id"])
    return [
        Instance(
            values={"order": r["increment_id"]},
            start_url=ADMIN,
            eval=string_eval("must_include", [ORDER_STATUS_LABELS[r["status"]]]),
            cheat=[click("Sales"), _search(r["increment_id"]), done(ORDER_STATUS_LABELS[r["status"]])],
        )
        for r in picked
    ]


def order_grand_total(data: Data) -> list[Instance]:
    """The grand total of an order, from its order view."""
    rows = data.rows("store", "SELECT id, increment_id, grand_total FROM orders ORDER BY id")
    picked = sorted(data.sample("order_grand_total", rows, 8, "shuffled"), key=lambda r: r["id"])
    return [
        Instance(
            values={"order": r["increment_id"]},
            start_url=f"{ADMIN}/sales/order/",
            eval=string_eval("must_include", [f"{r['grand_total']:,.2f}"]),
            cheat=[_search(r["increment_id"]), click("View"), done(_money(r["grand_total"]))],
        )
        for r in picked
    ]


def order_customer(data: Data) -> list[Instance]:
    """The full name of the customer who placed an order."""
    rows = data.rows(
        "store",
        "SELECT id, increment_id, customer_firstname || ' ' || customer_lastname AS name FROM orders ORDER BY id",
    )
    picked = sorted(data.sample("order_customer", rows, 8, "shuffled"), key=lambda r: r["id"])
    return [
        Instance(
            values={"order": r["increment_id"]},
            start_url=ADMIN,
            eval=string_eval("must_include", [r["name"]]),
            cheat=[click("Sales"), _search(r["increment_id"]), click("View"), done(r["name"])],
        )
        for r in picked
    ]


def latest_order_in_status(data: Data) -> list[Instance]:
    """Who placed the most recent order that is in a given status (orders grid filtered by status)."""
    out = []
    for status, label in ORDER_STATUS_LABELS.items():
        r = data.one(
            "store",
            "SELECT customer_firstname || ' ' || customer_lastname AS name FROM orders "
            "WHERE status = ? ORDER BY created_at DESC, id DESC LIMIT 1",
            (status,),
        )
        out.append(
            Instance(
                values={"status": label.lower()},
                start_url=ADMIN,
                eval=string_eval("must_include", [r["name"]]),
                cheat=[
                    click("Sales"),
                    click("Filters"),
                    type_("Status", label),
                    click("Apply Filters"),
                    done(r["name"]),
                ],
            )
        )
    return out


def orders_in_status_month(data: Data) -> list[Instance]:
    """The number of orders placed in a month that are now in a given status (grid filters)."""
    rows = data.rows(
        "store",
        "SELECT substr(created_at, 1, 7) AS m, status, COUNT(*) AS n FROM orders GROUP BY m, status ORDER BY m, status",
    )
    picked = sorted(data.sample("orders_in_status_month", rows, 10, "shuffled"), key=lambda r: (r["m"], r["status"]))
    out = []
    for r in picked:
        name, first, last = _month(r["m"])
        label, count = ORDER_STATUS_LABELS[r["status"]], str(r["n"])
        out.append(
            Instance(
                values={"month": name, "status": label},
                start_url=f"{ADMIN}/sales/order/",
                eval=string_eval("exact_match", count),
                cheat=[
                    click("Filters"),
                    type_("placeholder=from", _mdy(first)),
                    type_("placeholder=to", _mdy(last)),
                    type_("Status", label),
                    click("Apply Filters"),
                    done(count),
                ],
            )
        )
    return out


# -- information: customers ------------------------------------------------------------------------------


CONTACT_FIELDS = (("email address", "email"), ("phone number", "telephone"), ("ZIP code", "postcode"))


def customer_contact(data: Data) -> list[Instance]:
    """A customer's email, phone or ZIP code, from the customers grid after a search by name."""
    rows = [
        r
        for r in _billing(data)
        if _first_hit(data, CUSTOMERS, {"search": f"{r['firstname']} {r['lastname']}"}) == r["id"]
    ]
    out = []
    for i, r in enumerate(data.sample("customer_contact", rows, 12, "shuffled")):
        label, column = CONTACT_FIELDS[i % len(CONTACT_FIELDS)]
        name = f"{r['firstname']} {r['lastname']}"
        out.append(
            Instance(
                values={"field": label, "customer": name},
                start_url=ADMIN,
                eval=string_eval("must_include", [r[column]]),
                cheat=[click("Customers"), _search(name), done(r[column])],
            )
        )
    return out


def customers_in_state(data: Data) -> list[Instance]:
    """How many customers' (billing) address lies in a state, counted with the grid's State filter."""
    counts: dict[str, int] = {}
    for r in _billing(data):
        counts[r["region"]] = counts.get(r["region"], 0) + 1
    # a state whose name is inside another's ("Kansas" in "Arkansas") would make the filter over-count
    states = [s for s in sorted(counts) if not any(s != o and s in o for o in counts)]
    out = []
    for state in data.sample("customers_in_state", states, 8, "shuffled"):
        out.append(
            Instance(
                values={"state": state},
                start_url=f"{ADMIN}/customer/index/",
                eval=string_eval("exact_match", str(counts[state])),
                cheat=[
                    click("Filters"),
                    type_("State/Province", state),
                    click("Apply Filters"),
                    done(str(counts[state])),
                ],
            )
        )
    return out


# -- information: reports --------------------------------------------------------------------------------


def _bestsellers(data: Data, first: str, last: str) -> list:
    return data.rows(
        "store",
        """
        SELECT i.product_id, i.name, SUM(i.qty_ordered) AS qty FROM order_items i JOIN orders o ON o.id = i.order_id
        WHERE o.status != 'canceled' AND substr(o.created_at, 1, 10) BETWEEN ? AND ?
        GROUP BY i.product_id, i.name ORDER BY qty DESC, i.name""",
        (first, last),
    )


def bestseller_of_month(data: Data) -> list[Instance]:
    """The best-selling product (by quantity, canceled orders left out) of a month: Bestsellers report."""
    out = []
    for ym in data.sample("bestseller_of_month", _months(data), 24, "shuffled"):
        name, first, last = _month(ym)
        ranked = _bestsellers(data, first, last)
        if len(ranked) < 2 or ranked[0]["qty"] == ranked[1]["qty"]:
            continue  # a tie: no single answer
        out.append(
            (
                ym,
                Instance(
                    values={"month": name},
                    start_url=ADMIN,
                    eval=string_eval("must_include", [ranked[0]["name"]]),
                    cheat=[
                        hover("Reports"),
                        click("Bestsellers"),
                        select("Day", "Month"),
                        type_("From", _mdy(first)),
                        type_("To", _mdy(last)),
                        click("Show Report"),
                        done(ranked[0]["name"]),
                    ],
                ),
            )
        )
    return [inst for _, inst in sorted(out, key=lambda x: x[0])[: data.quota(10)]]


QUARTERS = (
    ("first", "01-01", "03-31"),
    ("second", "04-01", "06-30"),
    ("third", "07-01", "09-30"),
    ("fourth", "10-01", "12-31"),
)


def top3_bestsellers_of_quarter(data: Data) -> list[Instance]:
    """The top-3 best-selling products of a quarter (Bestsellers report by year over the quarter)."""
    years = [r["y"] for r in data.rows("store", "SELECT DISTINCT substr(created_at, 1, 4) AS y FROM orders ORDER BY y")]
    out = []
    for year in years:
        for quarter, start, end in QUARTERS:
            first, last = f"{year}-{start}", f"{year}-{end}"
            ranked = _bestsellers(data, first, last)
            if len(ranked) < 4 or ranked[2]["qty"] == ranked[3]["qty"]:
                continue  # the third place is shared: no single top 3
            names = [r["name"] for r in ranked[:3]]
            out.append(
                Instance(
                    values={"quarter": quarter, "year": year},
                    start_url=ADMIN,
                    eval=string_eval("must_include", names),
                    cheat=[
                        hover("Reports"),
                        click("Bestsellers"),
                        select("Day", "Year"),
                        type_("From", _mdy(first)),
                        type_("To", _mdy(last)),
                        click("Show Report"),
                        done("; ".join(names)),
                    ],
                )
            )
    return out


def sales_total_of_month(data: Data) -> list[Instance]:
    """A month's sales total (grand totals of the orders placed that month, canceled ones left out)."""
    out = []
    for ym in sorted(data.sample("sales_total_of_month", _months(data), 10, "shuffled")):
        name, first, last = _month(ym)
        total = data.one(
            "store",
            "SELECT SUM(grand_total) AS t FROM orders WHERE status != 'canceled' "
            "AND substr(created_at, 1, 10) BETWEEN ? AND ?",
            (first, last),
        )["t"]
        out.append(
            Instance(
                values={"month": name},
                start_url=ADMIN,
                eval=string_eval("must_include", [f"{total:,.2f}"]),
                cheat=[
                    hover("Reports"),
                    click("Orders"),
                    select("Day", "Month"),
                    type_("From", _mdy(first)),
                    type_("To", _mdy(last)),
                    click("Show Report"),
                    done(_money(total)),
                ],
            )
        )
    return out


def search_term_uses(data: Data) -> list[Instance]:
    """How many times a storefront search term was used (Reports > Search Terms)."""
    rows = data.rows("store", "SELECT query_text, popularity FROM search_terms ORDER BY id")
    return [
        Instance(
            values={"term": r["query_text"]},
            start_url=ADMIN,
            eval=string_eval("exact_match", str(r["popularity"])),
            cheat=[click("Reports"), _search(r["query_text"]), done(str(r["popularity"]))],
        )
        for r in sorted(data.sample("search_term_uses", rows, 8, "shuffled"), key=lambda r: r["query_text"])
    ]


def top_search_terms(data: Data) -> list[Instance]:
    """The n most used search terms (no tie at the cut)."""
    rows = data.rows("store", "SELECT query_text, popularity FROM search_terms ORDER BY popularity DESC, id")
    out = []
    for n in range(1, 6):
        if rows[n - 1]["popularity"] == rows[n]["popularity"]:
            continue
        terms = [r["query_text"] for r in rows[:n]]
        out.append(
            Instance(
                values={"n": str(n)},
                start_url=ADMIN,
                eval=string_eval("must_include", terms),
                cheat=[click("Reports"), done(", ".join(terms))],
            )
        )
    return out


# -- information: reviews ---------------------------------------------------------------------------------


def pending_reviews_of_product(data: Data) -> list[Instance]:
    """How many reviews of a product wait for moderation (Pending Reviews filtered by product)."""
    products = data.rows(
        "store",
        """
        SELECT p.id, p.name, SUM(r.status = 'Pending') AS pending FROM products p JOIN reviews r ON r.product_id = p.id
        GROUP BY p.id ORDER BY p.id""",
    )
    names = [p["name"] for p in data.rows("store", "SELECT name FROM products")]
    unique = [p for p in products if sum(p["name"].lower() in other.lower() for other in names) == 1]
    with_pending = [p for p in unique if p["pending"]]
    without = [p for p in unique if not p["pending"]]
    key = "pending_reviews_of_product"
    picked = data.sample(key, with_pending, 6, "shuffled") + data.sample(key, without, 2, "shuffled")
    return [
        Instance(
            values={"product": p["name"]},
            start_url=ADMIN,
            eval=string_eval("exact_match", str(p["pending"])),
            cheat=[
                hover("Marketing"),
                click("Pending Reviews"),
                click("Filters"),
                type_("Product", p["name"]),
                click("Apply Filters"),
                done(str(p["pending"])),
            ],
        )
        for p in sorted(picked, key=lambda p: p["id"])
    ]


# -- state changes: reviews --------------------------------------------------------------------------------


def _review_search(data: Data, r, where: str = "") -> str | None:
    """Keywords that bring review `r` to the top of the reviews grid (title, then title and nickname)."""
    for text in (r["title"], f"{r['title']} {r['nickname']}"):
        if _first_hit(data, REVIEWS, {"search": text}, where) == r["id"]:
            return text
    return None


def approve_review(data: Data) -> list[Instance]:
    """Approve a pending review (its edit form then shows the status Approved)."""
    rows = data.rows(
        "store",
        "SELECT r.id, r.title, r.nickname, p.name AS product FROM reviews r "
        "JOIN products p ON p.id = r.product_id WHERE r.status = 'Pending' ORDER BY r.id",
    )
    out = []
    for r in data.sample("approve_review", rows, len(rows), "shuffled"):
        text = _review_search(data, r, "g.status = 'Pending'")
        if text is None:
            continue
        out.append(
            (
                r["id"],
                Instance(
                    values={"title": r["title"], "nickname": r["nickname"], "product": r["product"]},
                    start_url=ADMIN,
                    eval=html_eval(
                        (
                            f"{ADMIN}/review/product/edit/id/{r['id']}/",
                            "document.querySelector('[name=\"status\"]').value",
                            "exact_match",
                            "Approved",
                        )
                    ),
                    cheat=[
                        hover("Marketing"),
                        click("Pending Reviews"),
                        _search(text),
                        click("Edit"),
                        select("data-value=Pending", "Approved"),
                        click("Save Review"),
                        done(),
                    ],
                ),
            )
        )
        if len(out) == data.quota(8):
            break
    return [inst for _, inst in sorted(out, key=lambda x: x[0])]


def delete_review(data: Data) -> list[Instance]:
    """Delete a rejected review (its edit page then says it does not exist)."""
    rows = data.rows(
        "store",
        "SELECT r.id, r.title, r.nickname, p.name AS product FROM reviews r "
        "JOIN products p ON p.id = r.product_id WHERE r.status = 'Not Approved' ORDER BY r.id",
    )
    out = []
    for r in data.sample("delete_review", rows, len(rows), "shuffled"):
        text = _review_search(data, r)
        if text is None:
            continue
        out.append(
            (
                r["id"],
                Instance(
                    values={"title": r["title"], "nickname": r["nickname"], "product": r["product"]},
                    start_url=f"{ADMIN}/review/product/",
                    eval=html_eval(  # the site's error message, not the page: a review's text can say it too
                        (
                            f"{ADMIN}/review/product/edit/id/{r['id']}/",
                            "document.querySelector('.message-error').outerText",
                            "exact_match",
                            "The review you are trying to edit does not exist.",
                        )
                    ),
                    cheat=[_search(text), click("Edit"), click("Delete Review"), done()],
                ),
            )
        )
        if len(out) == data.quota(6):
            break
    return [inst for _, inst in sorted(out, key=lambda x: x[0])]


# -- state changes: catalog ---------------------------------------------------------------------------------


def _editable_products(data: Data, key: str, n: int) -> list:
    """Enabled, in-stock products that a keyword search by their name brings to the top of the grid."""
    rows = data.rows("store", "SELECT id, name, price, qty FROM products WHERE status = 1 AND qty > 0 ORDER BY id")
    out = []
    for r in data.sample(key, rows, len(rows), "shuffled"):
        if _first_hit(data, PRODUCTS, {"search": r["name"]}) == r["id"]:
            out.append(r)
        if len(out) == data.quota(n):
            break
    return sorted(out, key=lambda r: r["id"])


def _product_form(product_id: int) -> str:
    return f"{ADMIN}/catalog/product/edit/id/{product_id}/"


def update_product_price(data: Data) -> list[Instance]:
    """Change a product's price (its edit form then holds the new price)."""
    rng = random.Random("update_product_price")
    out = []
    for r in _editable_products(data, "update_product_price", 8):
        new = round(r["price"] * rng.choice((0.8, 0.85, 0.9, 1.1, 1.15, 1.2)), 2)
        new = f"{new:.2f}"
        out.append(
            Instance(
                values={"product": r["name"], "price": new},
                start_url=ADMIN,
                eval=html_eval(
                    (
                        _product_form(r["id"]),
                        "document.querySelector('[name=\"product[price]\"]').value",
                        "exact_match",
                        new,
                    )
                ),
                cheat=[click("Catalog"), _search(r["name"]), click("Edit"), type_("Price", new), click("Save"), done()],
            )
        )
    return out


def update_product_quantity(data: Data) -> list[Instance]:
    """Set a product's stock quantity (its edit form then holds the new quantity)."""
    rng = random.Random("update_product_quantity")
    out = []
    for r in _editable_products(data, "update_product_quantity", 6):
        new = str(r["qty"] + rng.choice((25, 50, 100, 150)))
        out.append(
            Instance(
                values={"product": r["name"], "qty": new},
                start_url=ADMIN,
                eval=html_eval(
                    (
                        _product_form(r["id"]),
                        "document.querySelector('[name=\"product[qty]\"]').value",
                        "exact_match",
                        new,
                    )
                ),
                cheat=[
                    click("Catalog"),
                    _search(r["name"]),
                    click("Edit"),
                    type_("Quantity", new),
                    click("Save"),
                    done(),
                ],
            )
        )
    return out


def disable_product(data: Data) -> list[Instance]:
    """Disable a product (its edit form's Enable Product box is then unchecked)."""
    return [
        Instance(
            values={"product": r["name"]},
            start_url=ADMIN,
            eval=html_eval(
                (_product_form(r["id"]), "document.querySelector('#product_status').checked", "exact_match", "false")
            ),
            cheat=[click("Catalog"), _search(r["name"]), click("Edit"), click("Enable Product"), click("Save"), done()],
        )
        for r in _editable_products(data, "disable_product", 6)
    ]


def create_product(data: Data) -> list[Instance]:
    """Add a two-pack of an existing product as a new product (checked on the new product's edit form)."""
    next_id = data.one("store", "SELECT COALESCE(MAX(id), 0) + 1 AS n FROM products")["n"]
    categories = [c["name"] for c in data.rows("store", "SELECT name FROM categories")]
    # the category is chosen by its option text: it must not be part of another category's name
    leaves = {
        c["id"]: c["name"]
        for c in data.rows(
            "store",
            "SELECT id, name FROM categories c WHERE NOT EXISTS (SELECT 1 FROM categories k WHERE k.parent_id = c.id)",
        )
        if sum(c["name"].lower() in other.lower() for other in categories) == 1
    }
    names = {r["name"] for r in data.rows("store", "SELECT name FROM products")}
    skus = {r["sku"] for r in data.rows("store", "SELECT sku FROM products")}
    rows = [
        r
        for r in data.rows("store", "SELECT id, name, sku, price, category_id FROM products ORDER BY id")
        if r["category_id"] in leaves
    ]
    out = []
    for r in sorted(data.sample("create_product", rows, 6, "shuffled"), key=lambda r: r["id"]):
        name, sku = f"{r['name']} (2-Pack)", f"{r['sku']}-2PK"
        if name in names or sku in skus:
            continue
        price, qty, category = f"{r['price'] * 1.9:.2f}", "40", leaves[r["category_id"]]
        form = "document.querySelector('[name=\"product[{}]\"]')"
        locator = " + ' | ' + ".join(
            [
                form.format("name") + ".value",
                form.format("sku") + ".value",
                form.format("price") + ".value",
                form.format("qty") + ".value",
                form.format("category_id") + ".selectedOptions[0].textContent",
            ]
        )
        out.append(
            Instance(
                values={"name": name, "sku": sku, "price": price, "qty": qty, "category": category},
                start_url=ADMIN,
                eval=html_eval(
                    (_product_form(next_id), locator, "exact_match", f"{name} | {sku} | {price} | {qty} | {category}")
                ),
                cheat=[
                    click("Catalog"),
                    click("Add Product"),
                    type_("Product Name", name),
                    type_("SKU", sku),
                    type_("Price", price),
                    type_("Quantity", qty),
                    select("-- Please Select --", category),
                    click("Save"),
                    done(),
                ],
            )
        )
    return out


# -- state changes: promotions ------------------------------------------------------------------------------


def create_coupon_rule(data: Data) -> list[Instance]:
    """Create a percent-off cart price rule with a coupon code (checked on the new rule's edit form)."""
    next_id = data.one("store", "SELECT COALESCE(MAX(id), 0) + 1 AS n FROM cart_price_rules")["n"]
    taken = {
        r["c"].upper()
        for r in data.rows("store", "SELECT coupon_code AS c FROM cart_price_rules WHERE coupon_code IS NOT NULL")
    }
    categories = data.rows("store", "SELECT name FROM categories WHERE parent_id IS NULL ORDER BY id")
    rng = random.Random("create_coupon_rule")
    out = []
    for c in data.sample("create_coupon_rule", categories, 6, "shuffled"):
        percent = rng.choice((5, 10, 12, 15, 20, 25, 30))
        word = re.sub(r"[^A-Za-z]", "", c["name"].split()[0]).upper()
        code = f"{word}{percent}"
        if code in taken:
            continue
        name = f"{c['name']} {percent}% Off"
        out.append(
            Instance(
                values={"name": name, "code": code, "percent": str(percent)},
                start_url=ADMIN,
                eval=html_eval(
                    (
                        f"{ADMIN}/sales_rule/promo_quote/edit/id/{next_id}/",
                        (
                            "document.querySelector('[name=\"rule[name]\"]').value + ' | ' + "
                            "document.querySelector('[name=\"rule[coupon_code]\"]').value"
                        ),
                        "exact_match",
                        f"{name} | {code}",
                    ),
                    (
                        "last",
                        "document.querySelector('[name=\"rule[discount_amount]\"]').value * 1",
                        "exact_match",
                        str(percent),
                    ),
                ),
                cheat=[
                    click("Marketing"),
                    click("Add New Rule"),
                    type_("Rule Name", name),
                    type_("Coupon Code", code),
                    scroll_down(),
                    type_("Discount Amount", str(percent)),
                    scroll_up(),
                    click("Save"),
                    done(),
                ],
            )
        )
    return out


# -- state changes: orders ----------------------------------------------------------------------------------


def _open_orders(data: Data, key: str, n: int, extra: str = "") -> list:
    rows = data.rows(
        "store",
        f"SELECT o.id, o.increment_id FROM orders o WHERE o.status IN ('pending', 'processing') {extra} ORDER BY o.id",
    )
    return sorted(data.sample(key, rows, n, "shuffled"), key=lambda r: r["id"])


def _order_view(order_id: int) -> str:
    return f"{ADMIN}/sales/order/view/order_id/{order_id}/"


STATUS_LOCATOR = "document.querySelector('#order_status').outerText"


def hold_order(data: Data) -> list[Instance]:
    """Put an open order on hold (its order view then shows the status On Hold)."""
    return [
        Instance(
            values={"order": r["increment_id"]},
            start_url=f"{ADMIN}/sales/order/",
            eval=html_eval((_order_view(r["id"]), STATUS_LOCATOR, "exact_match", ORDER_STATUS_LABELS["holded"])),
            cheat=[_search(r["increment_id"]), click("View"), click("Hold"), done()],
        )
        for r in _open_orders(data, "hold_order", 6)
    ]


def cancel_order(data: Data) -> list[Instance]:
    """Cancel an open order with items left to cancel (its order view then shows Canceled)."""
    cancellable = (
        "AND EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id AND "
        "MIN(i.qty_ordered - i.qty_invoiced - i.qty_canceled, i.qty_ordered - i.qty_shipped - i.qty_canceled) > 0)"
    )
    return [
        Instance(
            values={"order": r["increment_id"]},
            start_url=f"{ADMIN}/sales/order/",
            eval=html_eval((_order_view(r["id"]), STATUS_LOCATOR, "exact_match", ORDER_STATUS_LABELS["canceled"])),
            cheat=[_search(r["increment_id"]), click("View"), click("Cancel"), done()],
        )
        for r in _open_orders(data, "cancel_order", 6, cancellable)
    ]


def comment_on_order(data: Data) -> list[Instance]:
    """Add a comment to an order's history (shown in its Notes for this Order)."""
    rows = data.rows(
        "store",
        """
        SELECT o.id, o.increment_id, o.customer_firstname AS first, o.shipping_method,
               json_extract(o.shipping_address, '$.city') AS city
        FROM orders o WHERE (SELECT COUNT(*) FROM order_items i WHERE i.order_id = o.id) = 1 ORDER BY o.id""",
    )
    out = []
    for r in sorted(data.sample("comment_on_order", rows, 6, "shuffled"), key=lambda r: r["id"]):
        comment = f"Called {r['first']} to confirm delivery to {r['city']} by {r['shipping_method']}."
        out.append(
            Instance(
                values={"order": r["increment_id"], "comment": comment},
                start_url=ADMIN,
                eval=html_eval(
                    (
                        _order_view(r["id"]),
                        "document.querySelector('#order-history').outerText",
                        "must_include",
                        [comment],
                    )
                ),
                cheat=[
                    click("Sales"),
                    _search(r["increment_id"]),
                    click("View"),
                    scroll_down(),
                    scroll_down(),
                    type_("Comment", comment),
                    click("Submit Comment"),
                    done(),
                ],
            )
        )
    return out


# -- navigation -------------------------------------------------------------------------------------------


def orders_grid_by_status(data: Data) -> list[Instance]:
    """Open the orders grid filtered by a status."""
    statuses = [r["status"] for r in data.rows("store", "SELECT DISTINCT status FROM orders ORDER BY status")]
    return [
        Instance(
            values={"status": ORDER_STATUS_LABELS[s]},
            start_url=ADMIN,
            eval=url_eval(f"{ADMIN}/sales/order/?status={s}"),
            cheat=[
                click("Sales"),
                click("Filters"),
                type_("Status", ORDER_STATUS_LABELS[s]),
                click("Apply Filters"),
                done(),
            ],
        )
        for s in statuses
    ]


def customer_edit_page(data: Data) -> list[Instance]:
    """Open a customer's edit page."""
    rows = [
        r
        for r in _billing(data)
        if _first_hit(data, CUSTOMERS, {"search": f"{r['firstname']} {r['lastname']}"}) == r["id"]
    ]
    return [
        Instance(
            values={"customer": f"{r['firstname']} {r['lastname']}"},
            start_url=ADMIN,
            eval=url_eval(f"{ADMIN}/customer/index/edit/id/{r['id']}/"),
            cheat=[click("Customers"), _search(f"{r['firstname']} {r['lastname']}"), click("Edit"), done()],
        )
        for r in sorted(data.sample("customer_edit_page", rows, 8, "shuffled"), key=lambda r: r["id"])
    ]


# -- unachievable -----------------------------------------------------------------------------------------


def missing_order(data: Data) -> list[Instance]:
    """An order number past the last one: it does not exist."""
    last = data.one("store", "SELECT MAX(CAST(increment_id AS INTEGER)) AS n FROM orders")["n"]
    rng = random.Random("missing_order")
    out = []
    for number in sorted(rng.sample(range(last + 1, last * 3), 4)):
        inc = f"{number:09d}"
        out.append(
            unachievable(
                {"order": inc},
                ADMIN,
                f"There is no order #{inc}; the last order is #{last:09d}.",
                [click("Sales"), _search(inc)],
            )
        )
    return out


def missing_customer(data: Data) -> list[Instance]:
    """A customer name made of a first and a last name of two different customers: nobody has it."""
    people = data.rows("store", "SELECT firstname, lastname FROM customers ORDER BY id")
    existing = {(p["firstname"], p["lastname"]) for p in people}
    firsts = sorted({p["firstname"] for p in people})
    lasts = sorted({p["lastname"] for p in people})
    rng = random.Random("missing_customer")
    out = []
    while len(out) < 4:
        first, last = rng.choice(firsts), rng.choice(lasts)
        name = f"{first} {last}"
        if (first, last) in existing or any(name == i.values["customer"] for i in out):
            continue
        out.append(
            unachievable(
                {"customer": name},
                ADMIN,
                f"No customer named {name} exists in the store.",
                [click("Customers"), _search(name)],
            )
        )
    return out


TEMPLATES = [
    TaskTemplate("shopping_admin.order_status", SITES, "What is the status of order #{order}?", order_status),
    TaskTemplate(
        "shopping_admin.order_grand_total", SITES, "What is the grand total of order #{order}?", order_grand_total
    ),
    TaskTemplate(
        "shopping_admin.order_customer", SITES, "Who is the customer that placed order #{order}?", order_customer
    ),
    TaskTemplate(
        "shopping_admin.latest_order_in_status",
        SITES,
        "Who placed the most recent order that is currently {status}?",
        latest_order_in_status,
    ),
    TaskTemplate(
        "shopping_admin.orders_in_status_month",
        SITES,
        'How many orders placed in {month} are in the status "{status}"?',
        orders_in_status_month,
    ),
    TaskTemplate(
        "shopping_admin.customer_contact", SITES, "What is the {field} of the customer {customer}?", customer_contact
    ),
    TaskTemplate(
        "shopping_admin.customers_in_state",
        SITES,
        "How many customers have their billing address in {state}?",
        customers_in_state,
    ),
    TaskTemplate(
        "shopping_admin.bestseller_of_month",
        SITES,
        "What was the best-selling product in {month}?",
        bestseller_of_month,
    ),
    TaskTemplate(
        "shopping_admin.top3_bestsellers_of_quarter",
        SITES,
        "What are the top-3 best-selling products in the {quarter} quarter of {year}?",
        top3_bestsellers_of_quarter,
    ),
    TaskTemplate(
        "shopping_admin.sales_total_of_month",
        SITES,
        "What was the total amount of sales (excluding canceled orders) in {month}?",
        sales_total_of_month,
    ),
    TaskTemplate(
        "shopping_admin.search_term_uses",
        SITES,
        'How many times has the term "{term}" been searched in the store?',
        search_term_uses,
    ),
    TaskTemplate(
        "shopping_admin.top_search_terms",
        SITES,
        "What are the top {n} most searched terms in the store?",
        top_search_terms,
    ),
    TaskTemplate(
        "shopping_admin.pending_reviews_of_product",
        SITES,
        "How many reviews of {product} are waiting for approval?",
        pending_reviews_of_product,
    ),
    TaskTemplate(
        "shopping_admin.approve_review",
        SITES,
        'Approve the pending review "{title}" by {nickname} for {product}.',
        approve_review,
    ),
    TaskTemplate(
        "shopping_admin.delete_review", SITES, 'Delete the review "{title}" by {nickname} for {product}.', delete_review
    ),
    TaskTemplate(
        "shopping_admin.update_product_price", SITES, "Change the price of {product} to ${price}.", update_product_price
    ),
    TaskTemplate(
        "shopping_admin.update_product_quantity",
        SITES,
        "Update the stock quantity of {product} to {qty}.",
        update_product_quantity,
    ),
    TaskTemplate("shopping_admin.disable_product", SITES, "Disable the product {product}.", disable_product),
    TaskTemplate(
        "shopping_admin.create_product",
        SITES,
        'Add a new product "{name}" with SKU {sku}, price ${price} and quantity {qty} in the category {category}.',
        create_product,
    ),
    TaskTemplate(
        "shopping_admin.create_coupon_rule",
        SITES,
        'Create a cart price rule named "{name}" that gives {percent}% off with the coupon code {code}.',
        create_coupon_rule,
    ),
    TaskTemplate("shopping_admin.hold_order", SITES, "Put order #{order} on hold.", hold_order),
    TaskTemplate("shopping_admin.cancel_order", SITES, "Cancel order #{order}.", cancel_order),
    TaskTemplate(
        "shopping_admin.comment_on_order", SITES, 'Add the comment "{comment}" to order #{order}.', comment_on_order
    ),
    TaskTemplate(
        "shopping_admin.orders_grid_by_status",
        SITES,
        "Show me the orders whose status is {status}.",
        orders_grid_by_status,
    ),
    TaskTemplate(
        "shopping_admin.customer_edit_page", SITES, "Open the edit page of the customer {customer}.", customer_edit_page
    ),
    TaskTemplate("shopping_admin.missing_order", SITES, "What is the status of order #{order}?", missing_order),
    TaskTemplate(
        "shopping_admin.missing_customer",
        SITES,
        "What is the email address of the customer {customer}?",
        missing_customer,
    ),
]
