-- The store database shared by the storefront (shopping) and its admin (shopping_admin),
-- as in Magento, where both read and write one database.
-- Money is stored as REAL in the store currency (USD); timestamps as 'YYYY-MM-DD HH:MM:SS' (UTC).

CREATE TABLE categories (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_id   INTEGER REFERENCES categories(id),   -- NULL for top-level categories
    name        TEXT NOT NULL,
    url_path    TEXT NOT NULL UNIQUE,                -- e.g. 'home-kitchen/bedding' (page: /home-kitchen/bedding.html)
    position    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE products (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    sku         TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    url_key     TEXT NOT NULL UNIQUE,                -- page: /<url_key>.html
    category_id INTEGER NOT NULL REFERENCES categories(id),
    price       REAL NOT NULL,
    qty         INTEGER NOT NULL DEFAULT 0,          -- salable quantity in stock
    status      INTEGER NOT NULL DEFAULT 1,          -- 1 enabled, 2 disabled (hidden from the storefront)
    description TEXT NOT NULL DEFAULT '',
    options     TEXT NOT NULL DEFAULT '{}',          -- JSON: {"Color": ["Red", ...], "Size": [...]}
    weight      REAL NOT NULL DEFAULT 1.0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX products_category ON products(category_id);

CREATE TABLE customers (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    email         TEXT NOT NULL UNIQUE,
    firstname     TEXT NOT NULL,
    lastname      TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    dob           TEXT,
    gender        TEXT,                               -- 'Male', 'Female', 'Not Specified'
    group_name    TEXT NOT NULL DEFAULT 'General',
    newsletter    INTEGER NOT NULL DEFAULT 0,         -- 1 subscribed
    created_at    TEXT NOT NULL
);

CREATE TABLE addresses (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id      INTEGER NOT NULL REFERENCES customers(id),
    firstname        TEXT NOT NULL,
    lastname         TEXT NOT NULL,
    street           TEXT NOT NULL,
    city             TEXT NOT NULL,
    region           TEXT NOT NULL,                   -- US state name
    postcode         TEXT NOT NULL,
    country          TEXT NOT NULL DEFAULT 'United States',
    telephone        TEXT NOT NULL,
    is_default_billing  INTEGER NOT NULL DEFAULT 0,
    is_default_shipping INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX addresses_customer ON addresses(customer_id);

-- Orders: the entity id equals int(increment_id), as WebArena's evaluator helpers assume.
CREATE TABLE orders (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    increment_id     TEXT NOT NULL UNIQUE,            -- '000000001'
    customer_id      INTEGER REFERENCES customers(id),-- NULL for guest orders
    customer_email   TEXT NOT NULL,
    customer_firstname TEXT NOT NULL,
    customer_lastname  TEXT NOT NULL,
    status           TEXT NOT NULL,                   -- pending, processing, complete, canceled, closed, holded
    subtotal         REAL NOT NULL,
    shipping_amount  REAL NOT NULL,
    discount_amount  REAL NOT NULL DEFAULT 0,         -- positive number subtracted from the total
    grand_total      REAL NOT NULL,
    coupon_code      TEXT,
    shipping_method  TEXT NOT NULL,                   -- 'Flat Rate - Fixed', 'Best Way - Table Rate'
    payment_method   TEXT NOT NULL DEFAULT 'Check / Money order',
    shipping_address TEXT NOT NULL,                   -- JSON of the address fields
    billing_address  TEXT NOT NULL,                   -- JSON of the address fields
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX orders_customer ON orders(customer_id);
CREATE INDEX orders_created ON orders(created_at);

CREATE TABLE order_items (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id      INTEGER NOT NULL REFERENCES orders(id),
    product_id    INTEGER REFERENCES products(id),
    sku           TEXT NOT NULL,
    name          TEXT NOT NULL,
    options       TEXT NOT NULL DEFAULT '{}',          -- JSON: the chosen options, e.g. {"Color": "Red"}
    price         REAL NOT NULL,
    qty_ordered   INTEGER NOT NULL,
    qty_invoiced  INTEGER NOT NULL DEFAULT 0,
    qty_shipped   INTEGER NOT NULL DEFAULT 0,
    qty_canceled  INTEGER NOT NULL DEFAULT 0,
    row_total     REAL NOT NULL
);
CREATE INDEX order_items_order ON order_items(order_id);

CREATE TABLE order_history (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id             INTEGER NOT NULL REFERENCES orders(id),
    status               TEXT NOT NULL,
    comment              TEXT NOT NULL DEFAULT '',
    is_customer_notified INTEGER NOT NULL DEFAULT 0,
    created_at           TEXT NOT NULL
);
CREATE INDEX order_history_order ON order_history(order_id);

CREATE TABLE invoices (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id     INTEGER NOT NULL REFERENCES orders(id),
    increment_id TEXT NOT NULL UNIQUE,
    grand_total  REAL NOT NULL,
    created_at   TEXT NOT NULL
);

CREATE TABLE shipments (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id     INTEGER NOT NULL REFERENCES orders(id),
    increment_id TEXT NOT NULL UNIQUE,
    total_qty    INTEGER NOT NULL,
    tracking_number TEXT,
    created_at   TEXT NOT NULL
);

CREATE TABLE reviews (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    product_id  INTEGER NOT NULL REFERENCES products(id),
    customer_id INTEGER REFERENCES customers(id),     -- NULL for guest reviews
    nickname    TEXT NOT NULL,
    title       TEXT NOT NULL,
    detail      TEXT NOT NULL,
    rating      INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
    status      TEXT NOT NULL DEFAULT 'Pending',      -- Approved, Pending, Not Approved
    created_at  TEXT NOT NULL
);
CREATE INDEX reviews_product ON reviews(product_id);

CREATE TABLE wishlist_items (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    product_id  INTEGER NOT NULL REFERENCES products(id),
    added_at    TEXT NOT NULL,
    UNIQUE (customer_id, product_id)
);

-- Shopping carts ("quotes" in Magento). A guest cart has customer_id NULL and lives in the session.
CREATE TABLE carts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id INTEGER REFERENCES customers(id),
    is_active   INTEGER NOT NULL DEFAULT 1,
    coupon_code TEXT,
    created_at  TEXT NOT NULL
);

CREATE TABLE cart_items (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    cart_id     INTEGER NOT NULL REFERENCES carts(id),
    product_id  INTEGER NOT NULL REFERENCES products(id),
    options     TEXT NOT NULL DEFAULT '{}',
    qty         INTEGER NOT NULL CHECK (qty > 0)
);
CREATE INDEX cart_items_cart ON cart_items(cart_id);

-- Storefront search terms, as in Magento's Marketing > Search Terms report.
CREATE TABLE search_terms (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    query_text  TEXT NOT NULL UNIQUE,
    num_results INTEGER NOT NULL,
    popularity  INTEGER NOT NULL DEFAULT 1,
    updated_at  TEXT NOT NULL
);

-- Marketing > Cart Price Rules.
CREATE TABLE cart_price_rules (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    coupon_code     TEXT UNIQUE,
    discount_type   TEXT NOT NULL,                    -- 'by_percent' or 'by_fixed' (off the cart subtotal)
    discount_amount REAL NOT NULL,
    is_active       INTEGER NOT NULL DEFAULT 1,
    from_date       TEXT,
    to_date         TEXT,
    uses_per_coupon INTEGER NOT NULL DEFAULT 0,       -- 0 = unlimited
    times_used      INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL
);

CREATE TABLE admin_users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    firstname     TEXT NOT NULL,
    lastname      TEXT NOT NULL,
    email         TEXT NOT NULL
);
