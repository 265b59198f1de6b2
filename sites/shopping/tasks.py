"""Task templates over the storefront (see webrl.tasks.suite). Every answer, URL and element is read
from the pristine store data."""

from __future__ import annotations

from webrl.tasks.suite import Data, Instance, TaskTemplate


def product_price(data: Data) -> list[Instance]:
    rows = data.rows("store", "SELECT name, url_key, price FROM products WHERE status = 1 ORDER BY id LIMIT 12")
    return [Instance(
        values={"product": r["name"]},
        start_url=f"__SHOPPING__/{r['url_key']}.html",
        eval={"eval_types": ["string_match"], "reference_answers": {"must_include": [f"{r['price']:.2f}"]},
              "reference_url": "", "program_html": [], "string_note": ""},
        cheat=[f'# Note: the price shown is ${r["price"]:,.2f}\nexit(message="${r["price"]:,.2f}")'],
    ) for r in rows]


TEMPLATES = [
    TaskTemplate("shopping.product_price", ("shopping",), "What is the price of the {product}?", product_price),
]
