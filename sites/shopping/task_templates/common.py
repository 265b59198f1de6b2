"""Building blocks of the storefront's task templates: scripted actions in the WebRL syntax (elements named
by what a person sees), WebArena eval objects, and the catalog facts the templates draw on, read from the
pristine store data the way the storefront shows them (search ranking, category trees, Emma's orders)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from typing import Any

from webrl.sites.embedded.platform import money
from webrl.tasks.suite import Data

DB = "store"
SEARCH_BOX = "placeholder=Search entire store here..."
EMMA_EMAIL = "emma.lopez@gmail.com"
ORDERS_PER_PAGE = 10  # My Orders' default page size
CHOOSE = "Choose an Option..."  # the first option of a product's option selects


# -- actions ------------------------------------------------------------------------------------------------


def lit(text: str) -> str:
    """A Python string literal (double-quoted) for an action argument."""
    return json.dumps(text, ensure_ascii=False)


def click(target: str) -> str:
    return f'do(action="Click", element="{{{target}}}")'


def hover(target: str) -> str:
    return f'do(action="Hover", element="{{{target}}}")'


def type_in(target: str, text: str) -> str:
    return f'do(action="Type", element="{{{target}}}", argument={lit(text)})'


def search(text: str) -> str:
    return f'do(action="Search", element="{{{SEARCH_BOX}}}", argument={lit(text)})'


def select(target: str, option: str) -> str:
    return f'do(action="Select Dropdown Option", element="{{{target}}}", argument={lit(option)})'


def scroll_down() -> str:
    return 'do(action="Scroll Down")'


def finish(message: str = "") -> str:
    return f"exit(message={lit(message)})"


def open_product(name: str) -> list[str]:
    """From any page: search the product by its name and open it from the results (it ranks first). After a
    search the search box holds the name too, so the result link is named by its data-text."""
    return [search(name), click(f"data-text={name}")]


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


# -- eval objects -------------------------------------------------------------------------------------------


def answer_eval(*, must_include: Iterable[str] | None = None, exact: str | None = None) -> dict:
    answers: dict[str, Any] = {}
    if exact is not None:
        answers["exact_match"] = exact
    if must_include is not None:
        answers["must_include"] = list(must_include)
    return {"eval_types": ["string_match"], "reference_answers": answers, "reference_url": "",
            "program_html": [], "string_note": ""}


def unachievable_eval(note: str) -> dict:
    return {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"}, "reference_url": "",
            "program_html": [], "string_note": note}


def url_eval(url: str) -> dict:
    return {"eval_types": ["url_match"], "reference_answers": None, "reference_url": url,
            "url_note": "GOLD in PRED", "program_html": [], "string_note": ""}


def html_eval(*targets: dict) -> dict:
    return {"eval_types": ["program_html"], "reference_answers": None, "reference_url": "",
            "program_html": list(targets), "string_note": ""}


def target(url: str, locator: str, *, must_include: Iterable[str] | None = None, exact: str | None = None) -> dict:
    contents = {"exact_match": exact} if exact is not None else {"must_include": list(must_include or [])}
    return {"url": url, "locator": locator, "required_contents": contents}


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
        rows = data.rows(DB, "SELECT p.*, (SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id AND"
                             " r.status = 'Approved') AS reviews FROM products p WHERE p.status = 1 ORDER BY p.id")
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


def sample(rows: Sequence, n: int, key: str) -> list:
    """n rows drawn deterministically (seeded by the template key), kept in their original order."""
    picked = sorted(random.Random(key).sample(range(len(rows)), min(n, len(rows))))
    return [rows[i] for i in picked]


def categories(data: Data) -> list[dict]:
    """Categories with their parent's name and the enabled products they list (their subtree's)."""
    rows = [dict(r) for r in data.rows(DB, "SELECT * FROM categories ORDER BY id")]
    by_id = {r["id"]: r for r in rows}
    listed = data.rows(DB, "SELECT id, name, price, category_id FROM products WHERE status = 1 ORDER BY id")
    for r in rows:
        r["parent"] = by_id[r["parent_id"]]["name"] if r["parent_id"] else None
        r["products"] = [dict(p) for p in listed
                         if p["category_id"] == r["id"] or by_id[p["category_id"]]["parent_id"] == r["id"]]
    return rows


def emma_orders(data: Data) -> list[dict]:
    """Emma's orders as My Orders lists them (newest first), with their page number."""
    rows = data.rows(DB, "SELECT o.* FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.email = ?"
                         " ORDER BY o.created_at DESC, o.id DESC", (EMMA_EMAIL,))
    return [dict(r) | {"page": i // ORDERS_PER_PAGE + 1} for i, r in enumerate(rows)]


def price(value: float) -> str:
    """A price as the storefront prints it, e.g. '$1,234.50'."""
    return money(value)
