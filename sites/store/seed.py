"""Deterministic seed data for the store (OneStopShop storefront and admin).

`seed_store(conn, seed)` fills a freshly created store database. The same seed always gives the
same table contents: all randomness comes from `random.Random` instances derived from the seed
(one per table group, so that changing one group does not reshuffle the others) and from one
`Faker("en_US")` seeded with `seed` (names, streets, cities, phone numbers). Dates are drawn from
the rng rather than Faker, whose date helpers depend on the local time zone and today's date.
Every timestamp lies in 2022-01-01 .. 2023-12-31 and is formatted 'YYYY-MM-DD HH:MM:SS'.

Accounts:
- customers: Emma Lopez, emma.lopez@gmail.com (WebArena's account, customer id 1, with a rich
  order history). Every customer, Emma included, has the password `Password.123`.
- admin users: admin / admin1234 (WebArena's admin), plus sarah.chen / Catalog#2023 and
  david.ortiz / Orders#2023.

Orders are inserted in chronological order so that id == int(increment_id), as WebArena's
evaluator assumes. Carts are left empty so that purchase flows start clean.
"""

from __future__ import annotations

import bisect
import itertools
import json
import random
import re
import sqlite3
import string
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from faker import Faker
from faker.providers.address.en_US import Provider as UsAddressProvider

from webrl.sites.platform import hash_password
from webrl.sites.store import catalog_data as cat

START = datetime(2022, 1, 1)
END = datetime(2023, 12, 31, 23, 59, 59)

CUSTOMER_PASSWORD = "Password.123"
N_PRODUCTS = 380
N_CUSTOMERS = 70
N_ORDERS = 450
N_EMMA_ORDERS_PER_YEAR = 19
N_GUEST_ORDERS = 12
N_REVIEWS = 700
N_SEARCH_TERMS = 60

EMMA = {"firstname": "Emma", "lastname": "Lopez", "email": "emma.lopez@gmail.com"}
EMMA_ADDRESS = {
    "firstname": "Emma", "lastname": "Lopez", "street": "101 S San Mateo Dr", "city": "San Mateo",
    "region": "California", "postcode": "94010", "country": "United States", "telephone": "650-555-1212",
}  # fmt: skip

ADMINS = (  # username, password, firstname, lastname, email
    ("admin", "admin1234", "Admin", "User", "admin@onestopshop.com"),
    ("sarah.chen", "Catalog#2023", "Sarah", "Chen", "sarah.chen@onestopshop.com"),
    ("david.ortiz", "Orders#2023", "David", "Ortiz", "david.ortiz@onestopshop.com"),
)

# Share of each order status (complete takes whatever rounding leaves).
STATUS_SHARES = {"canceled": 0.15, "pending": 0.12, "processing": 0.12, "closed": 0.06, "holded": 0.05}


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    code: str
    discount_type: str  # 'by_percent' or 'by_fixed'
    amount: float
    is_active: int
    from_date: str | None
    to_date: str | None
    uses_per_coupon: int = 0
    used_by_orders: bool = True  # False: a rule no seeded order used


# Marketing > Cart Price Rules. Dated rules are used only by orders inside their window.
RULES = (
    Rule("10% Off Storewide", "10% off any order.", "SAVE10", "by_percent", 10, 1, "2022-01-01", None),
    Rule("$5 Welcome Discount", "$5 off for new customers.", "WELCOME5", "by_fixed", 5, 1, "2022-01-01", None, 200),
    Rule("$20 Off Your Order", "$20 off the cart subtotal.", "TAKE20", "by_fixed", 20, 1, "2022-03-01", None, 100),
    Rule("Summer Sale 2022", "15% off during the summer sale.", "SUMMER22", "by_percent", 15, 1,
         "2022-06-01", "2022-08-31"),
    Rule("Black Friday 2022", "25% off everything on Black Friday weekend.", "BLACKFRIDAY22", "by_percent", 25, 0,
         "2022-11-24", "2022-11-28"),
    Rule("Spring Clearance 2023", "$15 off during the spring clearance.", "SPRING15", "by_fixed", 15, 1,
         "2023-03-01", "2023-05-31"),
    Rule("Holiday Savings 2023", "20% off holiday orders.", "HOLIDAY23", "by_percent", 20, 1,
         "2023-12-01", "2023-12-31"),
    Rule("Employee Discount", "30% off for staff; retired.", "STAFF30", "by_percent", 30, 0, None, None,
         used_by_orders=False),
)  # fmt: skip


def seed_store(conn: sqlite3.Connection, seed: int) -> None:
    fake = Faker("en_US")
    fake.seed_instance(seed)

    def rng(group: str) -> random.Random:  # str seeds are hashed deterministically (not PYTHONHASHSEED)
        return random.Random(f"store:{seed}:{group}")

    leaves = _insert_categories(conn)
    products = _insert_products(conn, rng("products"), leaves)
    customers = _insert_customers(conn, rng("customers"), fake)
    _insert_addresses(conn, rng("addresses"), fake, customers)
    orders = _insert_orders(conn, rng("orders"), fake, products, customers)
    _insert_cart_price_rules(conn, orders)
    _insert_reviews(conn, rng("reviews"), fake, products, customers, orders)
    _insert_wishlists(conn, rng("wishlists"), products, customers)
    _insert_search_terms(conn, rng("search"), products, leaves)
    _insert_admin_users(conn, rng("admins"))


# ---------------------------------------------------------------------------------------------
# Helpers


def _fmt(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S")


def _between(rng: random.Random, a: datetime, b: datetime) -> datetime:
    return a + timedelta(seconds=rng.randint(0, int((b - a).total_seconds())))


def _later(rng: random.Random, t: datetime, min_hours: float, max_hours: float) -> datetime:
    """A time a little after `t`, never past END (orders placed late in 2023 get compressed)."""
    return min(t + timedelta(seconds=rng.randint(int(min_hours * 3600), int(max_hours * 3600))), END)


def _slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower().replace("'", "")).strip("-")


def _cents(amount: float) -> int:
    return int(round(amount * 100))


def _money(cents: int) -> float:
    return round(cents / 100, 2)


def _is_plural(noun: str) -> bool:
    last = noun.split()[-1]
    return last.endswith("s") and not last.endswith("ss")


def _agree(phrase: str, plural: bool) -> str:
    """Turn a feature written for a singular subject ("has ...", "removes ...") plural."""
    if not plural:
        return phrase
    verb, _, rest = phrase.partition(" ")
    irregular = {"is": "are", "has": "have", "does": "do"}
    if verb in irregular:
        verb = irregular[verb]
    elif verb.endswith(("sses", "shes", "ches", "xes")):
        verb = verb[:-2]
    elif verb.endswith("ies"):
        verb = verb[:-3] + "y"
    elif verb.endswith("s"):
        verb = verb[:-1]
    return f"{verb} {rest}"


def _lower_noun(noun: str) -> str:
    """'Chef's Knife' -> "chef's knife", but keep 'USB-C', 'LED', 'iPhone', 'D3' as written."""

    def keep(word: str) -> bool:
        return any(c.isupper() for c in word[1:]) or (word[0].isupper() and any(c.isdigit() for c in word))

    return " ".join(w if keep(w) else w.lower() for w in noun.split())


def _weighted_distinct(rng: random.Random, items: list, cum_weights: list[float], k: int) -> list:
    """k distinct items drawn with probability proportional to their weight."""
    chosen: list = []
    while len(chosen) < k:
        item = rng.choices(items, cum_weights=cum_weights)[0]
        if item not in chosen:
            chosen.append(item)
    return chosen


# ---------------------------------------------------------------------------------------------
# Categories


@dataclass
class _Leaf:
    id: int
    data: cat.Leaf


def _insert_categories(conn: sqlite3.Connection) -> list[_Leaf]:
    """The two-level tree of catalog_data.CATALOG, each parent followed by its children."""
    leaves = []
    for position, (name, children) in enumerate(cat.CATALOG, start=1):
        top_slug = _slug(name)
        parent_id = conn.execute(
            "INSERT INTO categories (parent_id, name, url_path, position) VALUES (NULL, ?, ?, ?)",
            (name, top_slug, position),
        ).lastrowid
        for child_position, leaf in enumerate(children, start=1):
            leaf_id = conn.execute(
                "INSERT INTO categories (parent_id, name, url_path, position) VALUES (?, ?, ?, ?)",
                (parent_id, leaf.name, f"{top_slug}/{_slug(leaf.name)}", child_position),
            ).lastrowid
            leaves.append(_Leaf(leaf_id, leaf))
    return leaves


# ---------------------------------------------------------------------------------------------
# Products


@dataclass
class _Product:
    name: str
    noun: str
    category_id: int
    price: int  # cents
    description: str
    options: dict[str, list[str]]
    weight: float
    id: int = 0
    sku: str = ""
    qty: int = 0
    enabled: bool = True
    created: datetime = START
    popularity: float = 1.0  # relative chance of being ordered
    review_weight: float = 1.0  # relative chance of being reviewed (0: never)


def _insert_products(conn: sqlite3.Connection, rng: random.Random, leaves: list[_Leaf]) -> list[_Product]:
    names: set[str] = set()
    products = [
        _compose_product(rng, leaf, names)
        for leaf, count in zip(leaves, _split_evenly(rng, N_PRODUCTS, len(leaves)))
        for _ in range(count)
    ]
    # Ids are not grouped by category (as in a real catalog), and ids follow creation time.
    rng.shuffle(products)
    created = sorted(_product_created(rng) for _ in products)
    skus: set[str] = set()
    for number, (product, when) in enumerate(zip(products, created), start=1):
        product.id, product.created, product.sku = number, when, _new_sku(rng, skus)
        product.qty = int(rng.triangular(1, 300, 60))
        # A long tail with a few bestsellers, which also collect the most reviews.
        bestseller = rng.random() < 0.04
        product.popularity = rng.lognormvariate(0, 0.6) * (4 if bestseller else 1)
        review_weight = min(product.popularity * (2 if bestseller else 1), 8.0)  # cap: about 20 reviews at most
        product.review_weight = 0 if rng.random() < 0.15 else review_weight
    for product in rng.sample(products, round(N_PRODUCTS * 0.03)):
        product.enabled = False
    for product in rng.sample([p for p in products if p.enabled], 8):
        product.qty = 0  # out of stock
    conn.executemany(
        "INSERT INTO products (id, sku, name, url_key, category_id, price, qty, status, description, options,"
        " weight, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (p.id, p.sku, p.name, _slug(p.name), p.category_id, _money(p.price), p.qty, 1 if p.enabled else 2,
             p.description, json.dumps(p.options), p.weight, _fmt(p.created),
             _fmt(_between(rng, p.created, datetime(2022, 12, 31, 23, 59, 59))))
            for p in products
        ],
    )  # fmt: skip
    return products


def _split_evenly(rng: random.Random, total: int, parts: int) -> list[int]:
    """`parts` counts that vary around total/parts by about ±30% and sum to exactly `total`."""
    weights = [rng.uniform(0.7, 1.3) for _ in range(parts)]
    raw = [total * w / sum(weights) for w in weights]
    counts = [int(x) for x in raw]
    by_remainder = sorted(range(parts), key=lambda i: raw[i] - counts[i], reverse=True)
    for i in by_remainder[: total - sum(counts)]:
        counts[i] += 1
    return counts


def _compose_product(rng: random.Random, leaf: _Leaf, names: set[str]) -> _Product:
    """A new product of the leaf whose name is not in `names` yet (and add it there)."""
    data = leaf.data
    while True:
        kind = rng.choice(data.kinds)
        brand, adjective = rng.choice(data.brands), rng.choice(kind.adjectives)
        suffix, factor = rng.choice(kind.variants)
        name = f"{brand} {adjective} {kind.noun}{suffix}"
        if name not in names:
            break
    names.add(name)
    option_kind = data.options if kind.options is None else kind.options
    return _Product(
        name=name,
        noun=kind.noun,
        category_id=leaf.id,
        price=_retail_price(rng, rng.uniform(*kind.price) * factor),
        description=_describe(rng, f"{brand} {adjective} {kind.noun}", kind, data),
        options=_product_options(rng, option_kind, name),
        weight=round(rng.uniform(*data.weight), 2),
    )


def _retail_price(rng: random.Random, amount: float) -> int:
    """Cents with a shop-like ending: mostly .99, some .95/.49/.00."""
    dollars = max(1, int(amount))
    ending = rng.choices((99, 95, 49, 0), weights=(70, 10, 10, 10))[0]
    return dollars * 100 + ending if ending else dollars * 100


def _describe(rng: random.Random, title: str, kind: cat.Kind, leaf: cat.Leaf) -> str:
    """2-4 sentences: two features of the kind, maybe one of the leaf, maybe a closer."""
    plural = _is_plural(kind.noun)
    pronoun = "They" if plural else "It"
    first, second = rng.sample(kind.features, 2)
    sentences = [f"The {title} {_agree(first, plural)}.", f"{pronoun} {_agree(second, plural)}."]
    if rng.random() < 0.6:
        verb, _, rest = _agree(rng.choice(leaf.features), plural).partition(" ")
        # "It is also ...", "It can also ...", but "It also has ...".
        also = f"{verb} also {rest}" if verb in ("is", "are", "can") else f"also {verb} {rest}"
        sentences.append(f"{pronoun} {also}.")
    if rng.random() < 0.4:
        sentences.append(rng.choice(cat.DESCRIPTION_CLOSERS))
    return " ".join(sentences)


def _product_options(rng: random.Random, option_kind: str, name: str) -> dict[str, list[str]]:
    def colors(low: int, high: int) -> list[str]:
        picked = sorted(rng.sample(range(len(cat.COLORS)), rng.randint(low, high)))
        return [cat.COLORS[i] for i in picked]

    if option_kind == cat.APPAREL:
        return {"Size": list(cat.APPAREL_SIZES[rng.randint(0, 1) : rng.randint(5, 6)]), "Color": colors(2, 5)}
    if option_kind == cat.SHOES:
        sizes = cat.SHOE_SIZES
        if name.endswith("for Women"):
            sizes = sizes[: sizes.index("10") + 1]
        elif name.endswith("for Men"):
            sizes = sizes[sizes.index("8") :]
        return {"Size": list(sizes), "Color": colors(2, 4)}
    if option_kind == cat.COLOR:
        return {"Color": colors(3, 6)}
    if option_kind == cat.METAL:
        picked = rng.sample(cat.METALS, rng.randint(2, 3))
        return {"Color": [m for m in cat.METALS if m in picked]}
    return {}


def _product_created(rng: random.Random) -> datetime:
    # About half the catalog was imported at launch in early January 2022; the rest was added over the year.
    if rng.random() < 0.45:
        return _between(rng, START, datetime(2022, 1, 10))
    return _between(rng, datetime(2022, 1, 10), datetime(2022, 12, 15))


def _new_sku(rng: random.Random, taken: set[str]) -> str:
    """An Amazon ASIN-style SKU: 'B0' and 8 upper-case letters or digits."""
    while (sku := "B0" + "".join(rng.choices(string.ascii_uppercase + string.digits, k=8))) in taken:
        pass
    taken.add(sku)
    return sku


# ---------------------------------------------------------------------------------------------
# Customers and addresses


@dataclass
class _Customer:
    id: int
    email: str
    firstname: str
    lastname: str
    created: datetime
    loyalty: int  # relative chance of placing an order
    billing: dict[str, str] = field(default_factory=dict)
    shipping: dict[str, str] = field(default_factory=dict)


def _insert_customers(conn: sqlite3.Connection, rng: random.Random, fake: Faker) -> list[_Customer]:
    """Emma Lopez first, then Faker people; ids follow sign-up time."""
    customers = [_Customer(1, EMMA["email"], EMMA["firstname"], EMMA["lastname"],
                           _between(rng, START, datetime(2022, 1, 3)), loyalty=0)]  # fmt: skip
    rows = [(1, EMMA["email"], "Emma", "Lopez", "1990-04-12", "Female", "General", 0)]
    emails = {EMMA["email"]}
    # Sign-ups are front-loaded (the shop's launch), so later orders have many customers to come from.
    signups = sorted(
        datetime(2022, 1, 3) + (datetime(2023, 11, 30) - datetime(2022, 1, 3)) * rng.random() ** 1.6
        for _ in range(N_CUSTOMERS - 1)
    )
    others = list(range(2, N_CUSTOMERS + 1))
    groups = dict.fromkeys(rng.sample(others, 4), "Wholesale") | dict.fromkeys(rng.sample(others, 3), "Retailer")
    subscribed = set(rng.sample(others, round(N_CUSTOMERS * 0.3)))
    for customer_id, signup in zip(others, signups):
        gender = rng.choices(("Female", "Male", "Not Specified"), weights=(48, 46, 6))[0]
        first = {"Female": fake.first_name_female, "Male": fake.first_name_male}.get(gender, fake.first_name)()
        last = fake.last_name()
        email = _new_email(rng, first, last, emails)
        dob = None
        if rng.random() < 0.85:
            dob = _between(rng, datetime(1955, 1, 1), datetime(2003, 12, 31)).strftime("%Y-%m-%d")
        customers.append(_Customer(customer_id, email, first, last, signup, rng.choice((1, 1, 1, 2, 2, 3, 5))))
        rows.append((customer_id, email, first, last, dob, gender, groups.get(customer_id, "General"),
                     int(customer_id in subscribed)))  # fmt: skip
    conn.executemany(
        "INSERT INTO customers (id, email, firstname, lastname, password_hash, dob, gender, group_name, newsletter,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (*row[:4], hash_password(CUSTOMER_PASSWORD, salt=f"{rng.getrandbits(64):016x}"), *row[4:],
             _fmt(c.created))
            for row, c in zip(rows, customers)
        ],
    )  # fmt: skip
    return customers


def _new_email(rng: random.Random, first: str, last: str, taken: set[str]) -> str:
    domain = rng.choice(("gmail.com", "gmail.com", "yahoo.com", "hotmail.com", "outlook.com", "icloud.com"))
    first, last = _slug(first).replace("-", ""), _slug(last).replace("-", "")
    for local in itertools.chain(
        (rng.choice((f"{first}.{last}", f"{first}{last}", f"{first[0]}{last}", f"{first}_{last}")),),
        (f"{first}.{last}{n}" for n in itertools.count(rng.randint(2, 90))),
    ):
        if (email := f"{local}@{domain}") not in taken:
            taken.add(email)
            return email
    raise AssertionError("unreachable")


# Faker lists the states in the same order as their abbreviations, DC aside.
_STATE_ABBR = dict(zip(UsAddressProvider.states, (a for a in UsAddressProvider.states_abbr if a != "DC")))


def _fake_address(fake: Faker, firstname: str, lastname: str) -> dict[str, str]:
    state = fake.state()
    return {
        "firstname": firstname, "lastname": lastname, "street": fake.street_address(), "city": fake.city(),
        "region": state, "postcode": fake.zipcode_in_state(_STATE_ABBR[state]), "country": "United States",
        "telephone": fake.numerify("%##-%##-####"),
    }  # fmt: skip


def _insert_addresses(conn: sqlite3.Connection, rng: random.Random, fake: Faker, customers: list[_Customer]) -> None:
    """1-2 addresses each; exactly one default billing and one default shipping address per customer."""
    rows = []
    for customer in customers:
        if customer.id == 1:
            book = [dict(EMMA_ADDRESS), _fake_address(fake, "Emma", "Lopez")]
        else:
            book = [_fake_address(fake, customer.firstname, customer.lastname)
                    for _ in range(rng.choices((1, 2), weights=(70, 30))[0])]  # fmt: skip
        billing = 0
        shipping = 1 if len(book) == 2 and customer.id != 1 and rng.random() < 0.3 else 0  # e.g. ship to work
        customer.billing, customer.shipping = book[billing], book[shipping]
        for i, address in enumerate(book):
            rows.append((customer.id, *address.values(), int(i == billing), int(i == shipping)))
    conn.executemany(
        "INSERT INTO addresses (customer_id, firstname, lastname, street, city, region, postcode, country,"
        " telephone, is_default_billing, is_default_shipping) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )


# ---------------------------------------------------------------------------------------------
# Orders, their items, history, invoices and shipments


@dataclass
class _Order:
    id: int
    created: datetime
    customer: _Customer | None
    status: str
    items: list[tuple[_Product, dict[str, str], int]] = field(default_factory=list)  # product, options, qty
    coupon: Rule | None = None


def _insert_orders(
    conn: sqlite3.Connection, rng: random.Random, fake: Faker, products: list[_Product], customers: list[_Customer]
) -> list[_Order]:
    times = sorted(_between(rng, datetime(2022, 1, 12), datetime(2023, 12, 24)) for _ in range(N_ORDERS))
    buyers = _assign_buyers(rng, times, customers)
    statuses = _assign_statuses(rng, buyers)
    orders = [_Order(i, t, b, s) for i, (t, b, s) in enumerate(zip(times, buyers, statuses), start=1)]

    # Orders draw from the enabled products that already existed, weighted by popularity.
    catalog = [p for p in products if p.enabled]  # products are in creation order
    created = [p.created for p in catalog]
    cum_weights = list(itertools.accumulate(p.popularity for p in catalog))
    uses = dict.fromkeys((r.code for r in RULES), 0)
    guest_emails = {c.email for c in customers}

    order_rows, item_rows, history_rows, invoices, shipments = [], [], [], [], []
    for order in orders:
        available = bisect.bisect_left(created, order.created)
        count = min(rng.choices((1, 2, 3, 4), weights=(45, 30, 15, 10))[0], available)
        for product in _weighted_distinct(rng, catalog[:available], cum_weights[:available], count):
            chosen = {key: rng.choice(values) for key, values in product.options.items()}
            order.items.append((product, chosen, rng.choices((1, 2, 3), weights=(70, 20, 10))[0]))

        subtotal = sum(p.price * qty for p, _, qty in order.items)
        total_qty = sum(qty for _, _, qty in order.items)
        if rng.random() < 0.6:
            method, shipping = "Flat Rate - Fixed", 500 * total_qty
        else:
            method, shipping = "Best Way - Table Rate", 0 if subtotal > 10000 else 1500
        order.coupon = _pick_coupon(rng, order.created, uses)
        discount = _discount(order.coupon, subtotal) if order.coupon else 0
        if order.coupon:
            uses[order.coupon.code] += 1
        grand_total = subtotal + shipping - discount

        if order.customer:
            email, first, last = order.customer.email, order.customer.firstname, order.customer.lastname
            ship_to, bill_to = order.customer.shipping, order.customer.billing
        else:
            first, last = fake.first_name(), fake.last_name()
            email = _new_email(rng, first, last, guest_emails)
            ship_to = bill_to = _fake_address(fake, first, last)

        timeline = _order_timeline(rng, order.status, order.created)
        invoiced_at = next((t for s, _, _, t in timeline if s == "processing"), None)
        shipped_at = next((t for s, _, _, t in timeline if s == "complete"), None)
        tracking = _tracking_number(rng) if shipped_at else None
        if tracking:  # the shipment's history entry names its tracking number
            timeline = [
                (s, f"Shipped via UPS, tracking number {tracking}." if s == "complete" else c, n, t)
                for s, c, n, t in timeline
            ]
        order_rows.append((
            order.id, f"{order.id:09d}", order.customer.id if order.customer else None, email, first, last,
            order.status, _money(subtotal), _money(shipping), _money(discount), _money(grand_total),
            order.coupon.code if order.coupon else None, method, json.dumps(ship_to), json.dumps(bill_to),
            _fmt(order.created), _fmt(timeline[-1][3]),
        ))  # fmt: skip
        for product, chosen, qty in order.items:
            invoiced = qty if order.status in ("complete", "processing", "closed") else 0
            item_rows.append((
                order.id, product.id, product.sku, product.name, json.dumps(chosen), _money(product.price), qty,
                invoiced, qty if order.status == "complete" else 0, qty if order.status == "canceled" else 0,
                _money(product.price * qty),
            ))  # fmt: skip
        history_rows += [(order.id, s, c, n, _fmt(t)) for s, c, n, t in timeline]
        if invoiced_at:
            invoices.append((invoiced_at, order.id, _money(grand_total)))
        if shipped_at:
            shipments.append((shipped_at, order.id, total_qty, tracking))

    conn.executemany(
        "INSERT INTO orders (id, increment_id, customer_id, customer_email, customer_firstname, customer_lastname,"
        " status, subtotal, shipping_amount, discount_amount, grand_total, coupon_code, shipping_method,"
        " shipping_address, billing_address, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        order_rows,
    )
    conn.executemany(
        "INSERT INTO order_items (order_id, product_id, sku, name, options, price, qty_ordered, qty_invoiced,"
        " qty_shipped, qty_canceled, row_total) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        item_rows,
    )
    conn.executemany(
        "INSERT INTO order_history (order_id, status, comment, is_customer_notified, created_at)"
        " VALUES (?, ?, ?, ?, ?)",
        history_rows,
    )
    # Invoices and shipments are numbered in the order they were created, each in a series of its own.
    conn.executemany(
        "INSERT INTO invoices (order_id, increment_id, grand_total, created_at) VALUES (?, ?, ?, ?)",
        [(oid, f"{n:09d}", total, _fmt(t)) for n, (t, oid, total) in enumerate(sorted(invoices), start=1)],
    )
    conn.executemany(
        "INSERT INTO shipments (order_id, increment_id, total_qty, tracking_number, created_at) VALUES (?, ?, ?, ?, ?)",
        [(oid, f"{n:09d}", qty, trk, _fmt(t)) for n, (t, oid, qty, trk) in enumerate(sorted(shipments), start=1)],
    )
    return orders


def _assign_buyers(rng: random.Random, times: list[datetime], customers: list[_Customer]) -> list[_Customer | None]:
    """Who placed each order: Emma about 19 orders a year, a few guests (None), the rest registered
    customers who had signed up by then, weighted by loyalty."""
    emma, others = customers[0], customers[1:]  # others are in sign-up order
    per_year = [[i for i, t in enumerate(times) if t.year == year] for year in (2022, 2023)]
    emma_orders = {i for indices in per_year for i in rng.sample(indices, N_EMMA_ORDERS_PER_YEAR)}
    guest_orders = set(rng.sample([i for i in range(len(times)) if i not in emma_orders], N_GUEST_ORDERS))
    signups = [c.created for c in others]
    cum_loyalty = list(itertools.accumulate(c.loyalty for c in others))
    buyers: list[_Customer | None] = []
    for i, t in enumerate(times):
        signed_up = bisect.bisect_left(signups, t)
        if i in emma_orders:
            buyers.append(emma)
        elif i in guest_orders or signed_up == 0:
            buyers.append(None)
        else:
            buyers.append(rng.choices(others[:signed_up], cum_weights=cum_loyalty[:signed_up])[0])
    return buyers


def _assign_statuses(rng: random.Random, buyers: list[_Customer | None]) -> list[str]:
    counts = {status: round(len(buyers) * share) for status, share in STATUS_SHARES.items()}
    statuses = [s for s, n in counts.items() for _ in range(n)]
    statuses += ["complete"] * (len(buyers) - len(statuses))
    rng.shuffle(statuses)
    # Emma's history should offer every kind of order to ask about (reorder, cancel, track, ...).
    emma = [i for i, b in enumerate(buyers) if b is not None and b.id == 1]
    for status in ("complete", "pending", "processing", "canceled", "closed", "holded"):
        if not any(statuses[i] == status for i in emma):
            donor = rng.choice([i for i, s in enumerate(statuses) if s == status and i not in emma])
            mine = rng.choice([i for i in emma if statuses[i] == "complete"])
            statuses[donor], statuses[mine] = statuses[mine], statuses[donor]
    return statuses


def _pick_coupon(rng: random.Random, when: datetime, uses: dict[str, int]) -> Rule | None:
    """A coupon valid at `when` for about one order in eight; seasonal codes are used eagerly."""
    day = when.strftime("%Y-%m-%d")
    valid = [
        r for r in RULES
        if r.used_by_orders and (r.from_date or "") <= day <= (r.to_date or "9999")
        and not (r.uses_per_coupon and uses[r.code] >= r.uses_per_coupon)
    ]  # fmt: skip
    seasonal = [r for r in valid if r.to_date]
    if seasonal and rng.random() < 0.3:
        return rng.choice(seasonal)
    evergreen = [r for r in valid if not r.to_date]
    if evergreen and rng.random() < 0.12:
        return rng.choice(evergreen)
    return None


def _discount(rule: Rule, subtotal: int) -> int:
    if rule.discount_type == "by_percent":
        return int(subtotal * rule.amount / 100 + 0.5)  # round half up, in cents
    return min(_cents(rule.amount), subtotal)


def _order_timeline(rng: random.Random, status: str, placed: datetime) -> list[tuple[str, str, int, datetime]]:
    """History entries (status, comment, customer notified, time): placement, then one per status
    change on the way to `status`, sometimes followed by an admin comment."""
    entries = [("pending", "Order placed", 1, placed)]
    if status in ("processing", "complete", "closed"):
        entries.append(("processing", "Invoice created; payment received.", 0, _later(rng, placed, 1, 48)))
    if status == "complete":
        entries.append(("complete", "", 1, _later(rng, entries[-1][3], 12, 120)))  # comment: see tracking
    elif status == "closed":
        entries.append(("closed", rng.choice(cat.REFUND_REASONS), 1, _later(rng, entries[-1][3], 72, 480)))
    elif status == "canceled":
        entries.append(("canceled", rng.choice(cat.CANCEL_REASONS), 1, _later(rng, placed, 1, 240)))
    elif status == "holded":
        entries.append(("holded", rng.choice(cat.HOLD_REASONS), 0, _later(rng, placed, 2, 72)))
    if rng.random() < 0.1:
        entries.append((status, rng.choice(cat.ORDER_COMMENTS), 0, _later(rng, entries[-1][3], 1, 48)))
    return entries


def _tracking_number(rng: random.Random) -> str:
    """A UPS-style tracking number: '1Z', 6 letters/digits, a 2-digit service code, 8 digits."""
    account = "".join(rng.choices(string.ascii_uppercase + string.digits, k=6))
    return f"1Z{account}{rng.choice(('03', '12', '42'))}{rng.randint(0, 99_999_999):08d}"


def _insert_cart_price_rules(conn: sqlite3.Connection, orders: list[_Order]) -> None:
    used = {rule.code: sum(1 for o in orders if o.coupon is rule) for rule in RULES}
    conn.executemany(
        "INSERT INTO cart_price_rules (name, description, coupon_code, discount_type, discount_amount, is_active,"
        " from_date, to_date, uses_per_coupon, times_used, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (r.name, r.description, r.code, r.discount_type, r.amount, r.is_active, r.from_date, r.to_date,
             r.uses_per_coupon, used[r.code], _rule_created(r))
            for r in RULES
        ],
    )  # fmt: skip


def _rule_created(rule: Rule) -> str:
    """A week before the rule starts (not before the shop opened)."""
    start = datetime.strptime(rule.from_date, "%Y-%m-%d") if rule.from_date else START
    return _fmt(max(START, start - timedelta(days=7)) + timedelta(hours=10))


# ---------------------------------------------------------------------------------------------
# Reviews, wishlists, search terms, admin users


def _insert_reviews(
    conn: sqlite3.Connection, rng: random.Random, fake: Faker,
    products: list[_Product], customers: list[_Customer], orders: list[_Order],
) -> None:  # fmt: skip
    """Reviews skewed to popular products and to 4-5 stars; ~30% by registered customers,
    including a few by Emma on products she received."""
    reviews = []  # (created, product, customer or None, nickname)
    emma = customers[0]
    received = {}  # product -> when Emma received it
    for order in orders:
        if order.customer is emma and order.status == "complete":
            for product, _, _ in order.items:
                received.setdefault(product.id, (product, order.created))
    for product, when in rng.sample(sorted(received.values(), key=lambda x: x[0].id), rng.randint(3, 5)):
        reviews.append((_later(rng, when, 168, 720), product, emma, "Emma"))  # after delivery

    candidates = [p for p in products if p.review_weight > 0]
    cum_weights = list(itertools.accumulate(p.review_weight for p in candidates))
    n_linked = round(N_REVIEWS * 0.3) - len(reviews)
    for i in range(N_REVIEWS - len(reviews)):
        product = rng.choices(candidates, cum_weights=cum_weights)[0]
        if i < n_linked:
            customer = rng.choice(customers[1:])
            since = max(product.created, customer.created)
            reviews.append((_between(rng, since, END), product, customer, customer.firstname))
        else:
            reviews.append((_between(rng, max(product.created, START + timedelta(days=10)), END), product, None,
                            fake.first_name()))  # fmt: skip

    statuses = ["Approved"] * round(N_REVIEWS * 0.85) + ["Pending"] * round(N_REVIEWS * 0.10)
    statuses += ["Not Approved"] * (len(reviews) - len(statuses))
    rng.shuffle(statuses)
    rows = []
    for (created, product, customer, nickname), status in zip(sorted(reviews, key=lambda r: r[0]), statuses):
        rating = rng.choices((1, 2, 3, 4, 5), weights=(6, 7, 13, 29, 45))[0]
        noun = _lower_noun(product.noun)
        title = rng.choice(cat.REVIEW_TITLES[rating]).format(noun=noun)
        detail = " ".join(rng.sample(cat.REVIEW_SENTENCES[rating], rng.randint(1, 3))).format(noun=noun)
        rows.append((product.id, customer.id if customer else None, nickname, title, detail, rating, status,
                     _fmt(created)))  # fmt: skip
    conn.executemany(
        "INSERT INTO reviews (product_id, customer_id, nickname, title, detail, rating, status, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )


def _insert_wishlists(
    conn: sqlite3.Connection, rng: random.Random, products: list[_Product], customers: list[_Customer]
) -> None:
    """Emma keeps 4-6 items, twenty other customers 1-4 each."""
    enabled = [p for p in products if p.enabled]
    owners = [(customers[0], rng.randint(4, 6))] + [(c, rng.randint(1, 4)) for c in rng.sample(customers[1:], 20)]
    rows = []
    for customer, count in sorted(owners, key=lambda o: o[0].id):
        items = rng.sample(enabled, count)
        added = sorted((_between(rng, max(customer.created, p.created), END), p.id) for p in items)
        rows += [(customer.id, product_id, _fmt(when)) for when, product_id in added]
    conn.executemany("INSERT INTO wishlist_items (customer_id, product_id, added_at) VALUES (?, ?, ?)", rows)


def _insert_search_terms(
    conn: sqlite3.Connection, rng: random.Random, products: list[_Product], leaves: list[_Leaf]
) -> None:
    """Past storefront queries; num_results counts the enabled products whose name or description
    contains every word of the query (case-insensitive)."""
    nouns = sorted({p.noun.lower() for p in products if p.enabled})
    brands = sorted({b.lower() for leaf in leaves for b in leaf.data.brands})
    n_extra = 20
    n_brands = 10
    queries = (rng.sample(nouns, N_SEARCH_TERMS - n_extra - n_brands) + rng.sample(brands, n_brands)
               + rng.sample(cat.EXTRA_SEARCH_QUERIES, n_extra))  # fmt: skip
    texts = [f"{p.name} {p.description}".lower() for p in products if p.enabled]
    rows = []
    for query in sorted(set(queries)):
        words = query.split()
        hits = sum(1 for text in texts if all(w in text for w in words))
        popularity = max(1, int(rng.lognormvariate(2.0, 1.1)))
        rows.append((query, hits, popularity, _fmt(_between(rng, datetime(2023, 1, 1), END))))
    conn.executemany(
        "INSERT INTO search_terms (query_text, num_results, popularity, updated_at) VALUES (?, ?, ?, ?)", rows
    )


def _insert_admin_users(conn: sqlite3.Connection, rng: random.Random) -> None:
    conn.executemany(
        "INSERT INTO admin_users (username, password_hash, firstname, lastname, email) VALUES (?, ?, ?, ?, ?)",
        [
            (user, hash_password(password, salt=f"{rng.getrandbits(64):016x}"), first, last, email)
            for user, password, first, last, email in ADMINS
        ],
    )
