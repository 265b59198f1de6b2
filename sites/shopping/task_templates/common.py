"""Building blocks of the storefront's task templates: the steps that scripted solutions share (in the WebRL
syntax of `webrl.tasks.script`), and the catalog facts the templates draw on, read from the pristine store data
the way the storefront shows them (search ranking, category trees, Emma's orders)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from webrl.sites.platform import money
from webrl.tasks.script import before, click, hover, scroll_down, search
from webrl.tasks.templates import Data

DB = "store"
SEARCH_BOX = "placeholder=Search entire store here..."
EMMA_EMAIL = "emma.lopez@gmail.com"
ORDERS_PER_PAGE = 10  # My Orders' default page size
CHOOSE = "Choose an Option..."  # the first option of a product's option selects


# -- steps --------------------------------------------------------------------------------------------------


def search_store(text: str) -> str:
    """The store's search box (in every page's header)."""
    return search(SEARCH_BOX, text)


def open_product(name: str) -> list[str]:
    """From any page: search the product by its name and open it from the results (it ranks first) by its photo,
    the labelled <img> just before its name's link (after a search the search box holds the name too, so the link is
    named by its data-text). Not by the name: VAB's click lands at the centre of a link's bounding box, which for
    a name wrapped onto two lines lies between them, on no link (as on the real site)."""
    return [search_store(name), click(before(f"data-text={name}"))]


def open_category(category: dict) -> list[str]:
    """From any page: a top-level category from the menu, a subcategory from its parent's drop-down."""
    if category["parent"] is None:
        return [click(category["name"])]
    return [hover(category["parent"]), click(category["name"])]


def open_my_orders(page: int = 1) -> list[str]:
    """From any page: My Account > My Orders, then Next until `page`."""
    return [click("My Account"), click("My Orders")] + [scroll_down(), click("Next")] * (page - 1)


def option_reachable(options: Sequence[str], wanted: str) -> bool:
    """Whether Select Dropdown Option (the first option whose text contains the argument, case-insensitive)
    picks `wanted` itself."""
    hit = next((o for o in options if wanted.lower() in o.lower()), None)
    return hit == wanted


# -- cart and order lines (program_html) --------------------------------------------------------------------

# One line per cart / order row: "NAME (Opt: value, ...) x QTY".
CART_LINES_JS = (
    "[...document.querySelectorAll('#shopping-cart-table tbody tr')].map(r => "
    "r.querySelector('.product-item-name').innerText.trim() + "
    "([...r.querySelectorAll('.item-options dt')].map(d => d.innerText.trim() + ': ' + "
    "d.nextElementSibling.innerText.trim()).join(', ').replace(/^(.+)$/, ' ($1)')) + "
    "' x ' + r.querySelector('input.qty').value).join('\\n')"
)
ORDER_LINES_JS = (
    "[...document.querySelectorAll('#my-orders-table tbody tr')].map(r => "
    "r.querySelector('.product-item-name').innerText.trim() + "
    "' x ' + r.querySelector('.items-qty .content').innerText.trim()).join('\\n')"
)


def cart_line(name: str, qty: int, options: dict[str, str] | None = None) -> str:
    chosen = ", ".join(f"{k}: {v}" for k, v in sorted((options or {}).items()))  # the cart sorts them
    return f"{name}{f' ({chosen})' if chosen else ''} x {qty}"


# -- catalog facts ------------------------------------------------------------------------------------------


def products(data: Data) -> list[dict]:
    """Every product the storefront shows (enabled), by id, with its approved review count (read once per Data)."""
    cached = getattr(data, "_shopping_products", None)
    if cached is None:
        rows = data.rows(
            DB,
            "SELECT p.*, (SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id AND"
            " r.status = 'Approved') AS reviews FROM products p WHERE p.status = 1 ORDER BY p.id",
        )
        cached = [dict(r) | {"options": json.loads(r["options"] or "{}")} for r in rows]
        data._shopping_products = cached
    return [dict(p) for p in cached]


def search_results(catalog: list[dict], query: str) -> list[dict]:
    """The storefront's search, as /catalogsearch/result/ ranks it: every word in the name or description,
    the most words in the name first, then by id."""
    words = [w.lower() for w in query.split()]
    hits = [p for p in catalog if all(w in p["name"].lower() or w in p["description"].lower() for w in words)]
    return sorted(hits, key=lambda p: (-sum(w in p["name"].lower() for w in words), p["id"]))


def searchable(catalog: list[dict]) -> list[dict]:
    """Products that a search for their full name lists first, so the scripted click finds them: no product
    before it (by id) has every word of its name in its own name (the search's top relevance)."""
    names = [(p["id"], p["name"].lower()) for p in catalog]
    out = []
    for p in catalog:
        words = p["name"].lower().split()
        if not any(pid < p["id"] and all(w in name for w in words) for pid, name in names):
            out.append(p)
    return out


def categories(data: Data) -> list[dict]:
    """Categories with their parent's name and the enabled products they list (their subtree's)."""
    rows = [dict(r) for r in data.rows(DB, "SELECT * FROM categories ORDER BY id")]
    by_id = {r["id"]: r for r in rows}
    listed = data.rows(DB, "SELECT id, name, price, category_id FROM products WHERE status = 1 ORDER BY id")
    for r in rows:
        r["parent"] = by_id[r["parent_id"]]["name"] if r["parent_id"] else None
        r["products"] = [
            dict(p) for p in listed if p["category_id"] == r["id"] or by_id[p["category_id"]]["parent_id"] == r["id"]
        ]
    return rows


def emma_orders(data: Data) -> list[dict]:
    """Emma's orders as My Orders lists them (newest first), with their page number."""
    rows = data.rows(
        DB,
        "SELECT o.* FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.email = ?"
        " ORDER BY o.created_at DESC, o.id DESC",
        (EMMA_EMAIL,),
    )
    return [dict(r) | {"page": i // ORDERS_PER_PAGE + 1} for i, r in enumerate(rows)]


def price(value: float) -> str:
    """A price as the storefront prints it, e.g. '$1,234.50'."""
    return money(value)
