"""Task templates over the storefront (see webrl.tasks.templates), after WebArena's shopping tasks: product and
review facts, Emma's order history, navigation to listings and account pages, changes made through the
storefront's forms (cart, wish list, reviews, address book, newsletter, checkout) and questions that have no
answer. Every answer, URL, locator value and element name is read from the pristine store data."""

from __future__ import annotations

import calendar
import random
from urllib.parse import quote_plus

from webrl.sites.shopping.task_templates.common import (
    CART_LINES_JS,
    CHOOSE,
    DB,
    EMMA_EMAIL,
    ORDER_LINES_JS,
    cart_line,
    categories,
    emma_orders,
    open_category,
    open_my_orders,
    open_product,
    option_reachable,
    price,
    products,
    search_results,
    search_store,
    searchable,
)
from webrl.sites.shopping.web import US_STATES
from webrl.sites.store import store
from webrl.tasks.script import click, done, scroll_down, select, type_
from webrl.tasks.templates import Data, Instance, TaskTemplate, html_eval, string_eval, unachievable, url_eval

HOME = "__SHOPPING__/"
SHOP = "__SHOPPING__"


# -- product facts ------------------------------------------------------------------------------------------


def product_price(data: Data) -> list[Instance]:
    """The price shown on a product's page, found by searching for it from the home page."""
    return [
        Instance(
            values={"product": p["name"]},
            start_url=HOME,
            eval=string_eval("must_include", [price(p["price"])[1:]]),
            cheat=[*open_product(p["name"]), done(price(p["price"]))],
        )
        for p in data.sample("shopping.product_price", searchable(products(data)), 10, "kept")
    ]


def product_sku(data: Data) -> list[Instance]:
    """The SKU printed on a product's page."""
    return [
        Instance(
            values={"product": p["name"]},
            start_url=HOME,
            eval=string_eval("must_include", [p["sku"]]),
            cheat=[*open_product(p["name"]), done(p["sku"])],
        )
        for p in data.sample("shopping.product_sku", searchable(products(data)), 8, "kept")
    ]


def product_review_count(data: Data) -> list[Instance]:
    """The number of (approved) reviews a product has, as the search results show it."""
    rated = [p for p in searchable(products(data)) if p["reviews"] > 0]
    return [
        Instance(
            values={"product": p["name"]},
            start_url=HOME,
            eval=string_eval("exact_match", count),
            cheat=[search_store(p["name"]), done(count)],
        )
        for p in data.sample("shopping.product_review_count", rated, 8, "kept")
        for count in [str(p["reviews"])]
    ]


def _approved_reviews(data: Data, product_id: int) -> list:
    """A product's approved reviews as its page lists them (newest first)."""
    return data.rows(
        DB,
        "SELECT * FROM reviews WHERE product_id = ? AND status = 'Approved' ORDER BY created_at DESC, id DESC",
        (product_id,),
    )


def latest_review_author(data: Data) -> list[Instance]:
    """The nickname on the newest review of a product (the first one its page lists)."""
    out = []
    reviewed = [p for p in searchable(products(data)) if p["reviews"] >= 2]
    for p in data.sample("shopping.latest_review_author", reviewed, 8, "kept"):
        nickname = _approved_reviews(data, p["id"])[0]["nickname"]
        out.append(
            Instance(
                values={"product": p["name"]},
                start_url=HOME,
                eval=string_eval("must_include", [nickname]),
                cheat=[*open_product(p["name"]), scroll_down(), scroll_down(), done(nickname)],
            )
        )
    return out


def review_rating_by(data: Data) -> list[Instance]:
    """The star rating one reviewer gave a product (a nickname that reviewed it once)."""
    out = []
    candidates = [p for p in searchable(products(data)) if p["reviews"] >= 2]
    for p in data.sample("shopping.review_rating_by", candidates, 8, "kept"):
        reviews = _approved_reviews(data, p["id"])
        names = [r["nickname"] for r in reviews]
        review = next((r for r in reversed(reviews) if names.count(r["nickname"]) == 1), None)  # oldest unique
        if review is None:
            continue
        stars = review["rating"]
        out.append(
            Instance(
                values={"reviewer": review["nickname"], "product": p["name"]},
                start_url=HOME,
                eval=string_eval("must_include", [str(stars)]),
                cheat=[
                    *open_product(p["name"]),
                    scroll_down(),
                    scroll_down(),
                    done(f"{stars} star{'s' * (stars > 1)}"),
                ],
            )
        )
    return out


def category_extreme(data: Data) -> list[Instance]:
    """The cheapest / most expensive product of a category (a unique price), by sorting its listing."""
    out = []
    cats = [c for c in categories(data) if len(c["products"]) >= 4]
    for i, c in enumerate(data.sample("shopping.category_extreme", cats, 10, "kept")):
        ranked = sorted(c["products"], key=lambda p: p["price"])
        cheapest = i % 2 == 0
        if not cheapest:
            ranked.reverse()
        if ranked[0]["price"] == ranked[1]["price"]:
            continue
        steps = [*open_category(c), select("Position", "Price")]
        if not cheapest:
            steps.append(click("title=Set Descending Direction"))
        out.append(
            Instance(
                values={"extreme": "cheapest" if cheapest else "most expensive", "category": c["name"]},
                start_url=HOME,
                eval=string_eval("must_include", [ranked[0]["name"]]),
                cheat=[*steps, done(ranked[0]["name"])],
            )
        )
    return out


def category_count(data: Data) -> list[Instance]:
    """How many products a category page lists (its subcategories' included)."""
    cats = [c for c in categories(data) if c["products"]]
    return [
        Instance(
            values={"category": c["name"]},
            start_url=HOME,
            eval=string_eval("exact_match", count),
            cheat=[*open_category(c), done(count)],
        )
        for c in data.sample("shopping.category_count", cats, 8, "kept")
        for count in [str(len(c["products"]))]
    ]


# -- Emma's orders ------------------------------------------------------------------------------------------


def order_status(data: Data) -> list[Instance]:
    """The status My Orders shows for one of Emma's orders (paging through the list)."""
    out = []
    for o in data.sample("shopping.order_status", emma_orders(data), 10, "kept"):
        label = store.ORDER_STATUS_LABELS[o["status"]]
        out.append(
            Instance(
                values={"number": o["increment_id"]},
                start_url=HOME,
                eval=string_eval("must_include", [label]),
                cheat=[*open_my_orders(o["page"]), done(label)],
            )
        )
    return out


def month_spending(data: Data) -> list[Instance]:
    """The sum of the grand totals of Emma's orders in one month, canceled orders left out."""
    orders = emma_orders(data)
    months = sorted({o["created_at"][:7] for o in orders if o["status"] != "canceled"})
    out = []
    for month in data.sample("shopping.month_spending", months, 10, "kept"):
        in_month = [o for o in orders if o["created_at"][:7] == month]
        total = round(sum(o["grand_total"] for o in in_month if o["status"] != "canceled"), 2)
        year, number = month.split("-")
        out.append(
            Instance(
                values={"month": f"{calendar.month_name[int(number)]} {year}"},
                start_url=HOME,
                eval=string_eval("must_include", [f"{total:.2f}"]),
                cheat=[*open_my_orders(max(o["page"] for o in in_month)), done(f"${total:.2f}")],
            )
        )
    return out


def order_products(data: Data) -> list[Instance]:
    """The names of the products bought in one order, read on the order's page."""
    out = []
    multi = [
        o
        for o in emma_orders(data)
        if data.one(DB, "SELECT COUNT(*) FROM order_items WHERE order_id = ?", (o["id"],))[0] >= 2
    ]
    for o in data.sample("shopping.order_products", multi, 8, "kept"):
        names = [
            r["name"] for r in data.rows(DB, "SELECT name FROM order_items WHERE order_id = ? ORDER BY id", (o["id"],))
        ]
        out.append(
            Instance(
                values={"number": o["increment_id"]},
                start_url=f"{SHOP}/sales/order/view/order_id/{o['id']}/",
                eval=string_eval("fuzzy_match", names),
                cheat=[done("; ".join(names))],
            )
        )
    return out


# -- navigation ---------------------------------------------------------------------------------------------


def category_sorted(data: Data) -> list[Instance]:
    """A category listing sorted by price, ascending or descending (the URL's sort parameters)."""
    out = []
    listing = [c for c in categories(data) if c["products"]]
    for i, c in enumerate(data.sample("shopping.category_sorted", listing, 10, "kept")):
        descending = i % 2 == 1
        steps = [*open_category(c), select("Position", "Price")]
        url = f"{SHOP}/{c['url_path']}.html?product_list_order=price"
        if descending:
            steps.append(click("title=Set Descending Direction"))
            url += "&product_list_dir=desc"
        out.append(
            Instance(
                values={"category": c["name"], "direction": "most expensive first" if descending else "cheapest first"},
                start_url=HOME,
                eval=url_eval(url),
                cheat=[*steps, done()],
            )
        )
    return out


def search_sorted(data: Data) -> list[Instance]:
    """Search results for a popular search term, sorted by price."""
    catalog = products(data)
    terms = [
        r["query_text"]
        for r in data.rows(DB, "SELECT query_text FROM search_terms ORDER BY id")
        if len(search_results(catalog, r["query_text"])) >= 2
    ]
    out = []
    for term in data.sample("shopping.search_sorted", terms, 8, "kept"):
        out.append(
            Instance(
                values={"term": term},
                start_url=HOME,
                eval=url_eval(f"{SHOP}/catalogsearch/result/?q={quote_plus(term)}&product_list_order=price"),
                cheat=[search_store(term), select("Relevance", "Price"), done()],
            )
        )
    return out


def product_page(data: Data) -> list[Instance]:
    """A product's own page."""
    return [
        Instance(
            values={"product": p["name"]},
            start_url=HOME,
            eval=url_eval(f"{SHOP}/{p['url_key']}.html"),
            cheat=[*open_product(p["name"]), done()],
        )
        for p in data.sample("shopping.product_page", searchable(products(data)), 8, "kept")
    ]


# What the request calls an account page, the link that leads there (My Account's sidebar) and its path.
ACCOUNT_PAGES = (
    ("order history", "My Orders", "/sales/order/history/"),
    ("wish list", "My Wish List", "/wishlist/"),
    ("address book", "Address Book", "/customer/address/"),
    ("account information form", "Account Information", "/customer/account/edit/"),
    ("product reviews", "My Product Reviews", "/review/customer/"),
    ("newsletter subscription settings", "Newsletter Subscriptions", "/newsletter/manage/"),
)


def account_page(data: Data) -> list[Instance]:
    """One of the pages of My Account, from the home page."""
    return [
        Instance(
            values={"page": what},
            start_url=HOME,
            eval=url_eval(f"{SHOP}{path}"),
            cheat=[click("My Account"), click(link), done()],
        )
        for what, link, path in ACCOUNT_PAGES
    ]


# -- changes ------------------------------------------------------------------------------------------------

CART = f"{SHOP}/checkout/cart/"


def add_to_cart(data: Data) -> list[Instance]:
    """A quantity of a product (without options) in the cart, checked on the cart page."""
    rng = random.Random("shopping.add_to_cart")
    out = []
    plain = [p for p in searchable(products(data)) if not p["options"] and p["qty"] >= 10]
    for p in data.sample("shopping.add_to_cart", plain, 10, "kept"):
        qty = rng.randint(2, 5)
        out.append(
            Instance(
                values={"qty": str(qty), "product": p["name"]},
                start_url=HOME,
                eval=html_eval((CART, CART_LINES_JS, "must_include", [cart_line(p["name"], qty)])),
                cheat=[*open_product(p["name"]), type_("title=Qty", str(qty)), click("title=Add to Cart"), done()],
            )
        )
    return out


def add_with_options(data: Data) -> list[Instance]:
    """A product with chosen options (size, colour, ...) in the cart, checked on the cart page."""
    rng = random.Random("shopping.add_with_options")
    out = []
    configurable = [p for p in searchable(products(data)) if p["options"] and p["qty"] > 0]
    for p in data.sample("shopping.add_with_options", configurable, 8, "kept"):
        chosen = {}
        for name, values in p["options"].items():
            reachable = [v for v in values if option_reachable([CHOOSE, *values], v)]
            chosen[name] = rng.choice(reachable)
        steps = open_product(p["name"])
        for value in chosen.values():  # each select shows CHOOSE until chosen: the first such is the next one
            steps.append(select(CHOOSE, value))
        wording = " and ".join(f"{k.lower()} {v}" for k, v in chosen.items())
        out.append(
            Instance(
                values={"product": p["name"], "options": wording},
                start_url=HOME,
                eval=html_eval((CART, CART_LINES_JS, "must_include", [cart_line(p["name"], 1, chosen)])),
                cheat=[*steps, click("title=Add to Cart"), done()],
            )
        )
    return out


def add_to_wishlist(data: Data) -> list[Instance]:
    """A product added to Emma's wish list, checked on the wish list page."""
    listed = {
        r[0]
        for r in data.rows(
            DB,
            "SELECT w.product_id FROM wishlist_items w JOIN customers c ON c.id = w.customer_id WHERE c.email = ?",
            (EMMA_EMAIL,),
        )
    }
    candidates = [p for p in searchable(products(data)) if p["id"] not in listed]
    return [
        Instance(
            values={"product": p["name"]},
            start_url=HOME,
            eval=html_eval(
                (
                    f"{SHOP}/wishlist/",
                    "document.querySelector('.product-items.wishlist').outerText",
                    "must_include",
                    [p["name"]],
                )
            ),
            cheat=[*open_product(p["name"]), click("Add to Wish List"), done()],
        )
        for p in data.sample("shopping.add_to_wishlist", candidates, 8, "kept")
    ]


def write_review(data: Data) -> list[Instance]:
    """A review submitted from a product's page: its nickname and rating are the product's latest (REST)."""
    rng = random.Random("shopping.write_review")
    names = [
        r[0]
        for r in data.rows(DB, "SELECT DISTINCT firstname FROM customers WHERE email != ? ORDER BY 1", (EMMA_EMAIL,))
    ]
    out = []
    unreviewed = [p for p in searchable(products(data)) if p["reviews"] == 0]
    for p in data.sample("shopping.write_review", unreviewed, 8, "kept"):
        nickname, stars = rng.choice(names), rng.randint(1, 5)
        summary = ["Not for me", "Disappointing", "It is okay", "Good value", "Love it"][stars - 1]
        detail = f"I bought the {p['name']} last month. {summary}."
        sku = p["sku"]
        out.append(
            Instance(
                values={
                    "product": p["name"],
                    "stars": str(stars),
                    "nickname": nickname,
                    "summary": summary,
                    "detail": detail,
                },
                start_url=HOME,
                eval=html_eval(
                    ("last", f"func:shopping_get_sku_latest_review_author('{sku}')", "exact_match", nickname),
                    ("last", f"func:shopping_get_sku_latest_review_rating('{sku}')", "exact_match", str(stars * 20)),
                ),
                cheat=[
                    *open_product(p["name"]),
                    scroll_down(),
                    scroll_down(),
                    scroll_down(),
                    click(f"{stars} star{'s' * (stars > 1)}"),
                    type_("title=Nickname", nickname),
                    type_("title=Summary", summary),
                    type_("title=Review", detail),
                    click("Submit Review"),
                    done(),
                ],
            )
        )
    return out


def _emma_default_address(data: Data):
    return data.one(
        DB,
        "SELECT a.* FROM addresses a JOIN customers c ON c.id = a.customer_id WHERE c.email = ?"
        " AND a.is_default_shipping = 1",
        (EMMA_EMAIL,),
    )


def _other_addresses(data: Data) -> list:
    return data.rows(
        DB,
        "SELECT a.* FROM addresses a JOIN customers c ON c.id = a.customer_id WHERE c.email != ? ORDER BY a.id",
        (EMMA_EMAIL,),
    )


ADDRESS_BOX_JS = "document.querySelector('.box-address-shipping address').outerText"


def update_address(data: Data) -> list[Instance]:
    """Emma's default address moved (street, city, state, zip), checked in the Address Book."""
    current = _emma_default_address(data)
    options = ["Please select a region, state or province.", *US_STATES]
    moves = [
        a for a in _other_addresses(data) if option_reachable(options, a["region"]) and a["region"] != current["region"]
    ]
    out = []
    for a in data.sample("shopping.update_address", moves, 8, "kept"):
        out.append(
            Instance(
                values={"street": a["street"], "city": a["city"], "state": a["region"], "zip": a["postcode"]},
                start_url=HOME,
                eval=html_eval(
                    (
                        f"{SHOP}/customer/address/",
                        ADDRESS_BOX_JS,
                        "must_include",
                        [a["street"], f"{a['city']}, {a['region']}, {a['postcode']}"],
                    )
                ),
                cheat=[
                    click("My Account"),
                    click("Edit Address"),
                    scroll_down(),
                    type_(current["street"], a["street"]),
                    type_(current["city"], a["city"]),
                    select(current["region"], a["region"]),
                    type_(current["postcode"], a["postcode"]),
                    click("Save Address"),
                    done(),
                ],
            )
        )
    return out


def update_phone(data: Data) -> list[Instance]:
    """A new phone number on Emma's default address, checked in the Address Book."""
    current = _emma_default_address(data)
    phones = [a["telephone"] for a in _other_addresses(data)]
    return [
        Instance(
            values={"phone": phone},
            start_url=HOME,
            eval=html_eval((f"{SHOP}/customer/address/", ADDRESS_BOX_JS, "must_include", [phone])),
            cheat=[
                click("My Account"),
                click("Edit Address"),
                type_(current["telephone"], phone),
                scroll_down(),
                click("Save Address"),
                done(),
            ],
        )
        for phone in data.sample("shopping.update_phone", phones, 6, "kept")
    ]


def newsletter(data: Data) -> list[Instance]:
    """Emma (not subscribed in the seed data) subscribed to the newsletter, checked on My Account."""
    subscribed = data.one(DB, "SELECT newsletter FROM customers WHERE email = ?", (EMMA_EMAIL,))[0]
    if subscribed:
        return []
    return [
        Instance(
            values={},
            start_url=HOME,
            eval=html_eval(
                (
                    f"{SHOP}/customer/account/",
                    "document.querySelector('.box-newsletter').outerText",
                    "must_include",
                    ['You are subscribed to "General Subscription"'],
                )
            ),
            cheat=[
                click("My Account"),
                click("Newsletter Subscriptions"),
                click("title=General Subscription"),
                click("Save"),
                done(),
            ],
        )
    ]


def place_order(data: Data) -> list[Instance]:
    """An order placed through the checkout: items, shipping method and grand total of the newest order."""
    rng = random.Random("shopping.place_order")
    out = []
    plain = [p for p in searchable(products(data)) if not p["options"] and p["qty"] >= 10]
    for i, p in enumerate(data.sample("shopping.place_order", plain, 8, "kept")):
        qty = rng.randint(1, 3)
        method = store.SHIPPING_METHODS["flatrate" if i % 2 == 0 else "tablerate"]
        subtotal = round(p["price"] * qty, 2)
        grand = round(subtotal + store.shipping_amount(method.code, qty, subtotal), 2)
        out.append(
            Instance(
                values={"qty": str(qty), "product": p["name"], "method": method.title},
                start_url=HOME,
                eval=html_eval(
                    (
                        "func:shopping_get_latest_order_url()",
                        ORDER_LINES_JS,
                        "must_include",
                        [cart_line(p["name"], qty)],
                    ),
                    (
                        "last",
                        "document.querySelector('.box-order-shipping-method').outerText",
                        "must_include",
                        [method.title],
                    ),
                    (
                        "last",
                        "document.querySelector('#my-orders-table tfoot').outerText",
                        "must_include",
                        [price(grand)],
                    ),
                ),
                cheat=[
                    *open_product(p["name"]),
                    type_("title=Qty", str(qty)),
                    click("title=Add to Cart"),
                    click("My Cart"),
                    click("Proceed to Checkout"),
                    scroll_down(),
                    scroll_down(),
                    click(method.method),
                    click("Place Order"),
                    done(),
                ],
            )
        )
    return out


def apply_coupon(data: Data) -> list[Instance]:
    """A product in the cart with a coupon code applied: the discount and order total of the cart."""
    rules = data.rows(
        DB,
        "SELECT * FROM cart_price_rules WHERE is_active = 1 AND to_date IS NULL AND"
        " (uses_per_coupon = 0 OR times_used < uses_per_coupon) ORDER BY id",
    )
    plain = [p for p in searchable(products(data)) if not p["options"] and p["qty"] >= 10]
    out = []
    for i, p in enumerate(data.sample("shopping.apply_coupon", plain, 6, "kept")):
        rule = rules[i % len(rules)]
        discount = store.coupon_discount(rule, p["price"])
        out.append(
            Instance(
                values={"product": p["name"], "code": rule["coupon_code"]},
                start_url=HOME,
                eval=html_eval(
                    (
                        CART,
                        "document.querySelector('.cart-summary').outerText",
                        "must_include",
                        [f"Discount ({rule['coupon_code']})", price(round(p["price"] - discount, 2))],
                    )
                ),
                cheat=[
                    *open_product(p["name"]),
                    click("title=Add to Cart"),
                    click("My Cart"),
                    type_("placeholder=Enter discount code", rule["coupon_code"]),
                    click("Apply Discount"),
                    done(),
                ],
            )
        )
    return out


# -- unachievable -------------------------------------------------------------------------------------------


def missing_product(data: Data) -> list[Instance]:
    """A product the store does not sell: one brand's name on another brand's kind of product."""
    catalog = products(data)
    names = {p["name"].lower() for p in catalog}
    brands = sorted({p["name"].split()[0] for p in catalog})
    rng = random.Random("shopping.missing_product")
    out = []
    for p in data.sample("shopping.missing_product", catalog, 6, "kept"):
        brand = rng.choice([b for b in brands if b != p["name"].split()[0]])
        fake = f"{brand} {' '.join(p['name'].split()[1:])}"
        if fake.lower() in names:
            continue
        out.append(
            unachievable(
                {"product": fake}, HOME, f"One Stop Market sells no product named '{fake}'.", [search_store(fake)]
            )
        )
    return out


def missing_order(data: Data) -> list[Instance]:
    """An order number that does not exist in Emma's order history."""
    last = data.one(DB, "SELECT MAX(id) FROM orders")[0]
    return [
        unachievable(
            {"number": f"{last + k:09d}"},
            HOME,
            f"Order #{last + k:09d} does not exist; the customer has no such order.",
            open_my_orders(),
        )
        for k in (7, 19, 42, 108, 560)
    ]


TEMPLATES = [
    TaskTemplate("shopping.product_price", ("shopping",), "What is the price of the {product}?", product_price),
    TaskTemplate("shopping.product_sku", ("shopping",), "What is the SKU of the {product}?", product_sku),
    TaskTemplate(
        "shopping.product_review_count",
        ("shopping",),
        "How many reviews does the {product} have?",
        product_review_count,
    ),
    TaskTemplate(
        "shopping.latest_review_author",
        ("shopping",),
        "Who wrote the most recent review of the {product}?",
        latest_review_author,
    ),
    TaskTemplate(
        "shopping.review_rating_by",
        ("shopping",),
        "How many stars did {reviewer} give the {product} in their review?",
        review_rating_by,
    ),
    TaskTemplate(
        "shopping.category_extreme",
        ("shopping",),
        "What is the {extreme} product in the {category} category?",
        category_extreme,
    ),
    TaskTemplate(
        "shopping.category_count", ("shopping",), "How many products does the {category} category list?", category_count
    ),
    TaskTemplate(
        "shopping.order_status", ("shopping",), "What is the status of my order number {number}?", order_status
    ),
    TaskTemplate(
        "shopping.month_spending",
        ("shopping",),
        "How much did I spend on orders placed in {month}? Add up their order totals and leave out canceled orders.",
        month_spending,
    ),
    TaskTemplate(
        "shopping.order_products", ("shopping",), "Which products did I buy in order number {number}?", order_products
    ),
    TaskTemplate(
        "shopping.category_sorted",
        ("shopping",),
        "Show me the {category} products sorted by price, {direction}.",
        category_sorted,
    ),
    TaskTemplate(
        "shopping.search_sorted",
        ("shopping",),
        'Search the store for "{term}" and sort the results by price, lowest first.',
        search_sorted,
    ),
    TaskTemplate("shopping.product_page", ("shopping",), "Open the product page of the {product}.", product_page),
    TaskTemplate("shopping.account_page", ("shopping",), "Take me to my {page} page.", account_page),
    TaskTemplate("shopping.add_to_cart", ("shopping",), "Add {qty} of the {product} to my shopping cart.", add_to_cart),
    TaskTemplate(
        "shopping.add_with_options",
        ("shopping",),
        "Add the {product} in {options} to my shopping cart.",
        add_with_options,
    ),
    TaskTemplate("shopping.add_to_wishlist", ("shopping",), "Add the {product} to my wish list.", add_to_wishlist),
    TaskTemplate(
        "shopping.write_review",
        ("shopping",),
        "Write a {stars}-star review of the {product} under the nickname {nickname}, with the summary "
        '"{summary}" and the text "{detail}"',
        write_review,
    ),
    TaskTemplate(
        "shopping.update_address",
        ("shopping",),
        "I moved: change my default address to {street}, {city}, {state} {zip}.",
        update_address,
    ),
    TaskTemplate(
        "shopping.update_phone",
        ("shopping",),
        "Change the phone number of my default address to {phone}.",
        update_phone,
    ),
    TaskTemplate("shopping.newsletter", ("shopping",), "Subscribe me to the store's newsletter.", newsletter),
    TaskTemplate(
        "shopping.place_order",
        ("shopping",),
        "Buy {qty} of the {product} and have it shipped with {method}; pay by check / money order and "
        "ship to my default address.",
        place_order,
    ),
    TaskTemplate(
        "shopping.apply_coupon",
        ("shopping",),
        "Put the {product} in my cart and apply the discount code {code}.",
        apply_coupon,
    ),
    TaskTemplate("shopping.missing_product", ("shopping",), "What is the price of the {product}?", missing_product),
    TaskTemplate(
        "shopping.missing_order", ("shopping",), "What is the status of my order number {number}?", missing_order
    ),
]
