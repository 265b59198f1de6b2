"""Customer pages: sign in/up, My Account, address book, My Orders, wish list, newsletter, reviews."""

from __future__ import annotations

import functools
import json
import re
import sqlite3

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from webrl.sites.platform import (
    check_password,
    flash,
    hash_password,
    int_param,
    now,
    redirect,
)
from webrl.sites.shopping.web import ADDRESS_LABELS, Shop, shop_of
from webrl.sites.store import store

SIGN_IN_FAILED = (
    "The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again later."
)
EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
ORDER_PAGE_SIZES = (10, 20, 50)
# The customer's wish list items with their (enabled) products, and the customer's reviews with their products.
WISHLIST = (
    "SELECT w.id AS item_id, w.added_at, p.* FROM wishlist_items w JOIN products p ON p.id = w.product_id"
    " WHERE w.customer_id = ? AND p.status = 1"
)
MY_REVIEWS = (
    "SELECT r.*, p.name AS product_name, p.url_key FROM reviews r JOIN products p ON p.id = r.product_id"
    " WHERE r.customer_id = ?"
)


def password_problem(password: str) -> str | None:
    """Magento's default password rules: at least 8 characters of at least 3 classes."""
    if len(password) < 8:
        return (
            "Minimum length of this field must be equal or greater than 8 symbols. "
            "Leading and trailing spaces will be ignored."
        )
    classes = sum(bool(re.search(p, password)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^a-zA-Z0-9]"))
    if classes < 3:
        return (
            "Minimum of different classes of characters in password is 3. Classes of characters: "
            "Lower Case, Upper Case, Digits, Special Characters."
        )
    return None


def login_required(endpoint):
    """An endpoint for signed-in customers only: it gets the storefront and the customer; a guest is
    sent to the login page."""

    @functools.wraps(endpoint)
    async def wrapper(request: Request) -> Response:
        shop = shop_of(request)
        customer = shop.customer(request)
        if customer is None:
            return shop.login_redirect(request)
        return await endpoint(request, shop, customer)

    return wrapper


# -- signing in and out ----------------------------------------------------------------------


async def login(request: Request) -> Response:
    shop = shop_of(request)
    if shop.customer(request) is not None:
        return RedirectResponse("/customer/account/", status_code=302)
    return shop.render(
        request, "login.html", {"title": "Customer Login", "email": request.session.pop("login_email", "")}
    )


async def login_post(request: Request) -> Response:
    shop = shop_of(request)
    form = await request.form()
    email = str(form.get("login[username]", "")).strip()
    password = str(form.get("login[password]", ""))
    row = shop.conn.execute("SELECT * FROM customers WHERE lower(email) = lower(?)", (email,)).fetchone()
    if not email or not password:
        flash(request, "A login and a password are required.", "error")
    elif row is None or not check_password(password, row["password_hash"]):
        flash(request, SIGN_IN_FAILED, "error")
    else:
        shop.sign_in(request, row["id"])
        return RedirectResponse(request.session.pop("after_login", None) or "/customer/account/", status_code=303)
    request.session["login_email"] = email
    return RedirectResponse("/customer/account/login/", status_code=303)


async def logout(request: Request) -> Response:
    for key in ("customer_id", "cart_id", "after_login", "checkout_form"):
        request.session.pop(key, None)
    return RedirectResponse("/customer/account/logoutSuccess/", status_code=302)


async def logout_success(request: Request) -> Response:
    shop = shop_of(request)
    return shop.render(request, "logout.html", {"title": "You are signed out"})


async def create(request: Request) -> Response:
    shop = shop_of(request)
    if shop.customer(request) is not None:
        return RedirectResponse("/customer/account/", status_code=302)
    return shop.render(
        request, "create.html", {"title": "Create New Customer Account", "form": request.session.pop("create_form", {})}
    )


async def create_post(request: Request) -> Response:
    shop = shop_of(request)
    form = await request.form()
    data = {k: str(form.get(k, "")).strip() for k in ("firstname", "lastname", "email")}
    password = str(form.get("password", ""))
    errors = []
    if not data["firstname"] or not data["lastname"]:
        errors.append("First Name and Last Name are required fields.")
    if not EMAIL_RE.fullmatch(data["email"]):
        errors.append("Please enter a valid email address (Ex: johndoe@domain.com).")
    elif shop.conn.execute("SELECT 1 FROM customers WHERE lower(email) = lower(?)", (data["email"],)).fetchone():
        errors.append(
            "There is already an account with this email address. If you are sure that it is your "
            "email address, click here to get your password and access your account."
        )
    if problem := password_problem(password):
        errors.append(problem)
    elif password != str(form.get("password_confirmation", "")):
        errors.append("Please make sure your passwords match.")
    if errors:
        for e in errors:
            flash(request, e, "error")
        request.session["create_form"] = {**data, "is_subscribed": bool(form.get("is_subscribed"))}
        return RedirectResponse("/customer/account/create/", status_code=303)
    cur = shop.conn.execute(
        "INSERT INTO customers (email, firstname, lastname, password_hash, newsletter, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (
            data["email"],
            data["firstname"],
            data["lastname"],
            hash_password(password),
            int(bool(form.get("is_subscribed"))),
            now(),
        ),
    )
    shop.sign_in(request, cur.lastrowid)
    return redirect("/customer/account/", "Thank you for registering with One Stop Market.", request=request)


async def forgot(request: Request) -> Response:
    shop = shop_of(request)
    return shop.render(request, "forgot.html", {"title": "Forgot Your Password?"})


async def forgot_post(request: Request) -> Response:
    form = await request.form()
    email = str(form.get("email", "")).strip()
    return redirect(
        "/customer/account/login/",
        f"If there is an account associated with {email} you will receive an email with a link to reset your password.",
        request=request,
    )


# -- My Account --------------------------------------------------------------------------------


def default_addresses(shop: Shop, customer_id: int):
    rows = shop.conn.execute("SELECT * FROM addresses WHERE customer_id = ? ORDER BY id", (customer_id,)).fetchall()
    billing = next((a for a in rows if a["is_default_billing"]), None)
    shipping = next((a for a in rows if a["is_default_shipping"]), None)
    return rows, billing, shipping


@login_required
async def dashboard(request: Request, shop: Shop, customer) -> Response:
    _, billing, shipping = default_addresses(shop, customer["id"])
    orders = shop.conn.execute(
        "SELECT * FROM orders WHERE customer_id = ? ORDER BY created_at DESC, id DESC LIMIT 5", (customer["id"],)
    ).fetchall()
    return shop.render(
        request,
        "account.html",
        {
            "title": "My Account",
            "nav": "account",
            "billing": billing,
            "shipping": shipping,
            "orders": orders,
            "addresses_of": order_ship_to,
        },
    )


@login_required
async def edit(request: Request, shop: Shop, customer) -> Response:
    return shop.render(
        request,
        "account_edit.html",
        {
            "title": "Edit Account Information",
            "nav": "edit",
            "changepass": request.path_params.get("changepass") == "1",
        },
    )


@login_required
async def edit_post(request: Request, shop: Shop, customer) -> Response:
    form = await request.form()
    first = str(form.get("firstname", "")).strip()
    last = str(form.get("lastname", "")).strip()
    email = str(form.get("email", customer["email"])).strip()
    current = str(form.get("current_password", ""))
    new = str(form.get("password", ""))
    back = "/customer/account/edit/"
    if not first or not last:
        return redirect(back, "First Name and Last Name are required fields.", "error", request)
    changing_email = email.lower() != customer["email"].lower()
    if changing_email or new:
        if not check_password(current, customer["password_hash"]):
            return redirect(
                back, "The password doesn't match this account. Verify the password and try again.", "error", request
            )
    if changing_email:
        if not EMAIL_RE.fullmatch(email):
            return redirect(back, "Please enter a valid email address (Ex: johndoe@domain.com).", "error", request)
        if shop.conn.execute(
            "SELECT 1 FROM customers WHERE lower(email) = lower(?) AND id != ?", (email, customer["id"])
        ).fetchone():
            return redirect(
                back,
                "A customer with the same email address already exists in an associated website.",
                "error",
                request,
            )
    if new:
        if problem := password_problem(new):
            return redirect(back, problem, "error", request)
        if new != str(form.get("password_confirmation", "")):
            return redirect(back, "Password confirmation doesn't match entered password.", "error", request)
    shop.conn.execute(
        "UPDATE customers SET firstname = ?, lastname = ?, email = ?, password_hash = ? WHERE id = ?",
        (first, last, email, hash_password(new) if new else customer["password_hash"], customer["id"]),
    )
    return redirect("/customer/account/", "You saved the account information.", request=request)


# -- Address Book ------------------------------------------------------------------------------


def customer_address(shop: Shop, customer, address_id) -> sqlite3.Row | None:
    return shop.conn.execute(
        "SELECT * FROM addresses WHERE id = ? AND customer_id = ?", (address_id, customer["id"])
    ).fetchone()


def address_missing(request: Request) -> Response:
    return redirect("/customer/address/", "We can't find the address.", "error", request)


@login_required
async def address_book(request: Request, shop: Shop, customer) -> Response:
    rows, billing, shipping = default_addresses(shop, customer["id"])
    others = [a for a in rows if not a["is_default_billing"] and not a["is_default_shipping"]]
    return shop.render(
        request,
        "address_book.html",
        {
            "title": "Address Book",
            "nav": "address",
            "billing": billing,
            "shipping": shipping,
            "others": others,
        },
    )


@login_required
async def address_new(request: Request, shop: Shop, customer) -> Response:
    return shop.render(
        request,
        "address_form.html",
        {
            "title": "Add New Address",
            "nav": "address",
            "address": request.session.pop("address_form", None)
            or {"firstname": customer["firstname"], "lastname": customer["lastname"], "country": "United States"},
        },
    )


@login_required
async def address_edit(request: Request, shop: Shop, customer) -> Response:
    row = customer_address(shop, customer, request.path_params["id"])
    if row is None:
        return address_missing(request)
    return shop.render(
        request,
        "address_form.html",
        {
            "title": "Edit Address",
            "nav": "address",
            "address": request.session.pop("address_form", None) or dict(row),
        },
    )


@login_required
async def address_save(request: Request, shop: Shop, customer) -> Response:
    form = await request.form()
    address_id = str(form.get("id", "")).strip()
    values = {k: str(form.get(k, "")).strip() for k in store.ADDRESS_FIELDS}
    values["country"] = values["country"] or "United States"
    existing = None
    if address_id:
        existing = customer_address(shop, customer, address_id)
        if existing is None:
            return address_missing(request)
    missing = [ADDRESS_LABELS[k] for k in store.ADDRESS_FIELDS if not values[k]]
    if missing:
        request.session["address_form"] = {**values, "id": address_id}
        back = f"/customer/address/edit/id/{address_id}/" if existing else "/customer/address/new/"
        return redirect(back, f"Please fill in the required fields: {', '.join(missing)}.", "error", request)
    first = not shop.conn.execute("SELECT 1 FROM addresses WHERE customer_id = ?", (customer["id"],)).fetchone()
    billing = bool(form.get("default_billing")) or first or bool(existing and existing["is_default_billing"])
    shipping = bool(form.get("default_shipping")) or first or bool(existing and existing["is_default_shipping"])
    with shop.ctx.db.transaction() as c:
        if billing:
            c.execute("UPDATE addresses SET is_default_billing = 0 WHERE customer_id = ?", (customer["id"],))
        if shipping:
            c.execute("UPDATE addresses SET is_default_shipping = 0 WHERE customer_id = ?", (customer["id"],))
        cols = list(store.ADDRESS_FIELDS)
        if existing:
            c.execute(
                f"UPDATE addresses SET {', '.join(f'{k} = ?' for k in cols)}, is_default_billing = ?,"
                f" is_default_shipping = ? WHERE id = ?",
                (*(values[k] for k in cols), int(billing), int(shipping), existing["id"]),
            )
        else:
            c.execute(
                f"INSERT INTO addresses (customer_id, {', '.join(cols)}, is_default_billing, is_default_shipping)"
                f" VALUES (?, {', '.join('?' * len(cols))}, ?, ?)",
                (customer["id"], *(values[k] for k in cols), int(billing), int(shipping)),
            )
    return redirect("/customer/address/", "You saved the address.", request=request)


@login_required
async def address_delete(request: Request, shop: Shop, customer) -> Response:
    row = customer_address(shop, customer, request.path_params["id"])
    if row is None:
        return address_missing(request)
    if row["is_default_billing"] or row["is_default_shipping"]:
        return redirect("/customer/address/", "We can't delete the default address.", "error", request)
    shop.conn.execute("DELETE FROM addresses WHERE id = ?", (row["id"],))
    return redirect("/customer/address/", "You deleted the address.", request=request)


# -- My Orders ---------------------------------------------------------------------------------


def order_ship_to(order) -> str:
    address = json.loads(order["shipping_address"] or "{}")
    return f"{address.get('firstname', '')} {address.get('lastname', '')}".strip()


@login_required
async def order_history(request: Request, shop: Shop, customer) -> Response:
    limit = int_param(request.query_params.get("limit"), 10)
    if limit not in ORDER_PAGE_SIZES:
        limit = 10
    total = shop.conn.execute("SELECT COUNT(*) FROM orders WHERE customer_id = ?", (customer["id"],)).fetchone()[0]
    pages = max(1, -(-total // limit))
    page = int_param(request.query_params.get("p"), 1, 1, pages)
    orders = shop.conn.execute(
        "SELECT * FROM orders WHERE customer_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
        (customer["id"], limit, (page - 1) * limit),
    ).fetchall()
    return shop.render(
        request,
        "orders.html",
        {
            "title": "My Orders",
            "nav": "orders",
            "orders": orders,
            "addresses_of": order_ship_to,
            "total": total,
            "page": page,
            "pages": pages,
            "limit": limit,
            "limits": ORDER_PAGE_SIZES,
            "first": (page - 1) * limit + 1 if total else 0,
            "last": min(page * limit, total),
        },
    )


@login_required
async def order_view(request: Request, shop: Shop, customer) -> Response:
    order = store.load_order(shop.conn, request.path_params["id"])
    if order is None or order["customer_id"] != customer["id"]:
        return RedirectResponse("/sales/order/history/", status_code=302)
    return shop.render(
        request,
        "order_view.html",
        {
            "title": f"Order # {order['increment_id']}",
            "nav": "orders",
            "order": order,
        },
    )


@login_required
async def reorder(request: Request, shop: Shop, customer) -> Response:
    order = store.load_order(shop.conn, request.path_params["id"])
    if order is None or order["customer_id"] != customer["id"]:
        return RedirectResponse("/sales/order/history/", status_code=303)
    with shop.ctx.db.transaction() as c:
        cart_id = shop.cart_id(request, create=True)
        for item in order["items"]:
            product = c.execute("SELECT * FROM products WHERE id = ?", (item["product_id"],)).fetchone()
            in_cart = c.execute(
                "SELECT COALESCE(SUM(qty), 0) FROM cart_items WHERE cart_id = ? AND product_id = ?",
                (cart_id, item["product_id"]),
            ).fetchone()[0]
            if product is None or product["status"] != 1 or in_cart + item["qty_ordered"] > product["qty"]:
                flash(request, f'Product "{item["name"]}" that you are trying to add is not available.', "error")
                continue
            store.add_to_cart(c, cart_id, product["id"], item["qty_ordered"], item["options"])
    return RedirectResponse("/checkout/cart/", status_code=303)


# -- My Wish List ------------------------------------------------------------------------------


@login_required
async def wishlist(request: Request, shop: Shop, customer) -> Response:
    items = shop.conn.execute(WISHLIST + " ORDER BY w.id", (customer["id"],)).fetchall()
    return shop.render(request, "wishlist.html", {"title": "My Wish List", "nav": "wishlist", "items": items})


async def wishlist_add(request: Request) -> Response:
    shop = shop_of(request)
    product = shop.enabled_product(request.path_params["id"])
    if product is None:
        return shop.not_found(request)
    customer = shop.customer(request)
    if customer is None:
        flash(request, "You must login or register to add items to your wishlist.", "error")
        return shop.login_redirect(request, back=f"/{product['url_key']}.html")
    shop.conn.execute(
        "INSERT OR IGNORE INTO wishlist_items (customer_id, product_id, added_at) VALUES (?, ?, ?)",
        (customer["id"], product["id"], now()),
    )
    return redirect(
        "/wishlist/",
        f"{product['name']} has been added to your Wish List. Click here to continue shopping.",
        request=request,
    )


@login_required
async def wishlist_remove(request: Request, shop: Shop, customer) -> Response:
    shop.conn.execute(
        "DELETE FROM wishlist_items WHERE id = ? AND customer_id = ?", (request.path_params["id"], customer["id"])
    )
    return RedirectResponse("/wishlist/", status_code=303)


@login_required
async def wishlist_to_cart(request: Request, shop: Shop, customer) -> Response:
    row = shop.conn.execute(WISHLIST + " AND w.id = ?", (customer["id"], request.path_params["id"])).fetchone()
    if row is None:
        return RedirectResponse("/wishlist/", status_code=303)
    if json.loads(row["options"] or "{}"):
        return redirect(f"/{row['url_key']}.html", "You need to choose options for your item.", "error", request)
    cart_id = shop.cart_id(request)
    in_cart = (
        0
        if cart_id is None
        else shop.conn.execute(
            "SELECT COALESCE(SUM(qty), 0) FROM cart_items WHERE cart_id = ? AND product_id = ?", (cart_id, row["id"])
        ).fetchone()[0]
    )
    if in_cart + 1 > row["qty"]:
        return redirect("/wishlist/", "The requested qty is not available", "error", request)
    with shop.ctx.db.transaction() as c:
        store.add_to_cart(c, shop.cart_id(request, create=True), row["id"], 1, {})
        c.execute("DELETE FROM wishlist_items WHERE id = ?", (row["item_id"],))
    return redirect("/wishlist/", f"You added {row['name']} to your shopping cart.", request=request)


# -- Newsletter and reviews --------------------------------------------------------------------


@login_required
async def newsletter(request: Request, shop: Shop, customer) -> Response:
    return shop.render(request, "newsletter.html", {"title": "Newsletter Subscription", "nav": "newsletter"})


@login_required
async def newsletter_save(request: Request, shop: Shop, customer) -> Response:
    form = await request.form()
    subscribed = int(bool(form.get("is_subscribed")))
    shop.conn.execute("UPDATE customers SET newsletter = ? WHERE id = ?", (subscribed, customer["id"]))
    message = "We have saved your subscription." if subscribed else "We have removed your newsletter subscription."
    return redirect("/customer/account/", message, request=request)


@login_required
async def my_reviews(request: Request, shop: Shop, customer) -> Response:
    reviews = shop.conn.execute(MY_REVIEWS + " ORDER BY r.created_at DESC, r.id DESC", (customer["id"],)).fetchall()
    return shop.render(
        request, "my_reviews.html", {"title": "My Product Reviews", "nav": "reviews", "reviews": reviews}
    )


@login_required
async def my_review(request: Request, shop: Shop, customer) -> Response:
    review = shop.conn.execute(MY_REVIEWS + " AND r.id = ?", (customer["id"], request.path_params["id"])).fetchone()
    if review is None:
        return RedirectResponse("/review/customer/", status_code=302)
    return shop.render(request, "my_review.html", {"title": "Review Details", "nav": "reviews", "review": review})


ROUTES = [
    Route("/customer/account/login/", login),
    Route("/customer/account/loginPost/", login_post, methods=["POST"]),
    Route("/customer/account/logout/", logout),
    Route("/customer/account/logoutSuccess/", logout_success),
    Route("/customer/account/create/", create),
    Route("/customer/account/createpost/", create_post, methods=["POST"]),
    Route("/customer/account/forgotpassword/", forgot),
    Route("/customer/account/forgotpasswordpost/", forgot_post, methods=["POST"]),
    Route("/customer/account/", dashboard),
    Route("/customer/account/index/", dashboard),
    Route("/customer/account/edit/", edit),
    Route("/customer/account/edit/changepass/{changepass}/", edit),
    Route("/customer/account/editPost/", edit_post, methods=["POST"]),
    Route("/customer/address/", address_book),
    Route("/customer/address/new/", address_new),
    Route("/customer/address/edit/id/{id:id}/", address_edit),
    Route("/customer/address/formPost/", address_save, methods=["POST"]),
    Route("/customer/address/delete/id/{id:id}/", address_delete, methods=["POST"]),
    Route("/sales/order/history/", order_history),
    Route("/sales/order/view/order_id/{id:id}/", order_view),
    Route("/sales/order/reorder/order_id/{id:id}/", reorder, methods=["POST"]),
    Route("/wishlist/", wishlist),
    Route("/wishlist/index/index/", wishlist),
    Route("/wishlist/index/add/product/{id:id}/", wishlist_add, methods=["POST"]),
    Route("/wishlist/index/remove/item/{id:id}/", wishlist_remove, methods=["POST"]),
    Route("/wishlist/index/cart/item/{id:id}/", wishlist_to_cart, methods=["POST"]),
    Route("/newsletter/manage/", newsletter),
    Route("/newsletter/manage/save/", newsletter_save, methods=["POST"]),
    Route("/review/customer/", my_reviews),
    Route("/review/customer/view/id/{id:id}/", my_review),
]
