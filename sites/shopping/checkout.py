"""The shopping cart and the one-page checkout."""

from __future__ import annotations

import functools
import json
import re

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from webrl.sites.platform import flash, redirect, row_id
from webrl.sites.shopping.web import ADDRESS_LABELS, Shop, shop_of
from webrl.sites.store import store

NOT_AVAILABLE = "The requested qty is not available"
CHOOSE_OPTIONS = "You need to choose options for your item."


def product_qty_in_cart(shop: Shop, cart_id: int | None, product_id: int, except_item: int | None = None) -> int:
    if cart_id is None:
        return 0
    row = shop.conn.execute(
        "SELECT COALESCE(SUM(qty), 0) FROM cart_items WHERE cart_id = ? AND product_id = ? AND id IS NOT ?",
        (cart_id, product_id, except_item),
    ).fetchone()
    return int(row[0])


def parse_qty(value) -> int | None:
    try:
        qty = float(str(value).strip() or "1")
        return int(qty) if qty == int(qty) else None
    except (ValueError, OverflowError):  # not a number, or nan / inf
        return None


def address_from_form(form) -> dict[str, str]:
    return {key: str(form.get(key, "")).strip() for key in store.ADDRESS_FIELDS} | {
        "country": str(form.get("country") or "United States").strip()
    }


def cart_required(endpoint):
    """A form POST that needs the active cart: the endpoint gets the storefront, the cart and the form;
    without a cart it goes back to the cart page."""

    @functools.wraps(endpoint)
    async def wrapper(request: Request) -> Response:
        shop = shop_of(request)
        cart_id = shop.cart_id(request)
        if cart_id is None:
            return RedirectResponse("/checkout/cart/", status_code=303)
        return await endpoint(request, shop, cart_id, await request.form())

    return wrapper


async def cart_page(request: Request) -> Response:
    shop = shop_of(request)
    totals = store.cart_totals(shop.conn, shop.cart_id(request))
    return shop.render(request, "cart.html", {"title": "Shopping Cart", "totals": totals})


async def add(request: Request) -> Response:
    shop = shop_of(request)
    product = shop.conn.execute("SELECT * FROM products WHERE id = ?", (request.path_params["id"],)).fetchone()
    if product is None or product["status"] != 1:
        return redirect(
            "/checkout/cart/",
            "The product that was requested doesn't exist. Verify the product and try again.",
            "error",
            request,
        )
    page = f"/{product['url_key']}.html"
    form = await request.form()
    qty = parse_qty(form.get("qty", "1"))
    if qty is None or qty < 1:
        return redirect(page, "The fewest you may purchase is 1.", "error", request)
    available = json.loads(product["options"] or "{}")
    chosen: dict[str, str] = {}
    for name, values in available.items():
        value = str(form.get(f"options[{name}]", "")).strip()
        if value not in values:
            return redirect(page, CHOOSE_OPTIONS, "error", request)
        chosen[name] = value
    if product["qty"] <= 0:
        return redirect(page, "Product that you are trying to add is not available.", "error", request)
    cart_id = shop.cart_id(request)
    if product_qty_in_cart(shop, cart_id, product["id"]) + qty > product["qty"]:
        return redirect(page, NOT_AVAILABLE, "error", request)
    with shop.ctx.db.transaction() as c:
        cart_id = shop.cart_id(request, create=True)
        store.add_to_cart(c, cart_id, product["id"], qty, chosen)
    return shop.back(request, f"You added {product['name']} to your shopping cart.", default="/checkout/cart/")


@cart_required
async def update(request: Request, shop: Shop, cart_id: int, form: FormData) -> Response:
    wanted: dict[int, int] = {}
    for key, value in form.multi_items():
        m = re.fullmatch(r"cart\[(\d+)\]\[qty\]", key)
        if m:
            qty = parse_qty(value)
            if qty is None or qty < 0:
                return redirect(
                    "/checkout/cart/", "Please enter a number 0 or greater in this field.", "error", request
                )
            wanted[int(m.group(1))] = qty
    lines = {line.item_id: line for line in store.cart_lines(shop.conn, cart_id)}
    per_product: dict[int, int] = {}
    for item_id, line in lines.items():
        qty = wanted.get(item_id, line.qty)
        per_product[line.product_id] = per_product.get(line.product_id, 0) + qty
    for line in lines.values():
        if wanted.get(line.item_id, line.qty) > 0 and per_product[line.product_id] > line.stock_qty:
            return redirect("/checkout/cart/", NOT_AVAILABLE, "error", request)
    with shop.ctx.db.transaction() as c:
        for item_id, qty in wanted.items():
            if item_id not in lines:
                continue
            if qty == 0:
                c.execute("DELETE FROM cart_items WHERE id = ?", (item_id,))
            else:
                c.execute("UPDATE cart_items SET qty = ? WHERE id = ?", (qty, item_id))
    return RedirectResponse("/checkout/cart/", status_code=303)


async def delete(request: Request) -> Response:
    shop = shop_of(request)
    form = await request.form()
    cart_id = shop.cart_id(request)
    if cart_id is not None:
        shop.conn.execute("DELETE FROM cart_items WHERE id = ? AND cart_id = ?", (str(form.get("id", "")), cart_id))
    return RedirectResponse("/checkout/cart/", status_code=303)


async def coupon(request: Request) -> Response:
    shop = shop_of(request)
    form = await request.form()
    code = str(form.get("coupon_code", "")).strip()
    cart_id = shop.cart_id(request)
    if form.get("remove") == "1":
        if cart_id is not None:
            shop.conn.execute("UPDATE carts SET coupon_code = NULL WHERE id = ?", (cart_id,))
        return redirect("/checkout/cart/", "You canceled the coupon code.", request=request)
    rule = store.find_coupon_rule(shop.conn, code) if code else None
    if rule is None or cart_id is None or not store.cart_totals(shop.conn, cart_id).lines:
        return redirect("/checkout/cart/", f'The coupon code "{code}" is not valid.', "error", request)
    shop.conn.execute("UPDATE carts SET coupon_code = ? WHERE id = ?", (rule["coupon_code"], cart_id))
    return redirect("/checkout/cart/", f'You used coupon code "{rule["coupon_code"]}".', request=request)


async def checkout_page(request: Request) -> Response:
    shop = shop_of(request)
    totals = store.cart_totals(shop.conn, shop.cart_id(request))
    if not totals.lines:
        return RedirectResponse("/checkout/cart/", status_code=302)
    customer = shop.customer(request)
    addresses = []
    if customer is not None:
        addresses = shop.conn.execute(
            "SELECT * FROM addresses WHERE customer_id = ? ORDER BY is_default_shipping DESC, id",
            (customer["id"],),
        ).fetchall()
    form = request.session.pop("checkout_form", {})
    methods = [
        {
            "code": m.code,
            "carrier": m.carrier,
            "method": m.method,
            "price": store.shipping_amount(m.code, totals.qty, totals.subtotal),
        }
        for m in store.SHIPPING_METHODS.values()
    ]
    return shop.render(
        request,
        "checkout.html",
        {
            "title": "Checkout",
            "totals": totals,
            "addresses": addresses,
            "methods": methods,
            "form": form,
        },
    )


@cart_required
async def place_order(request: Request, shop: Shop, cart_id: int, form: FormData) -> Response:
    customer = shop.customer(request)
    saved = None
    address_choice = row_id(form.get("address_id", "new"))
    if customer is not None and address_choice is not None:
        saved = shop.conn.execute(
            "SELECT * FROM addresses WHERE id = ? AND customer_id = ?", (address_choice, customer["id"])
        ).fetchone()
    if saved is not None:
        address = {key: saved[key] for key in store.ADDRESS_FIELDS}
    else:
        address = address_from_form(form)
    email = customer["email"] if customer else str(form.get("email", "")).strip()
    errors = []
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email):
        errors.append("Please enter a valid email address (Ex: johndoe@domain.com).")
    missing = [k for k in store.ADDRESS_FIELDS if not address.get(k)]
    if missing:
        errors.append(
            "Please fill in the required fields of the shipping address: "
            + ", ".join(ADDRESS_LABELS[k] for k in missing)
            + "."
        )
    method = str(form.get("shipping_method", ""))
    if method not in store.SHIPPING_METHODS:
        errors.append("The shipping method is missing. Select the shipping method and try again.")
    if form.get("payment_method") != "checkmo":
        errors.append("The requested Payment Method is not available.")
    if errors:
        for e in errors:
            flash(request, e, "error")
        request.session["checkout_form"] = {k: str(v) for k, v in form.items()}
        return RedirectResponse("/checkout/", status_code=303)
    try:
        order_id = store.place_order(
            shop.conn,
            cart_id,
            customer_id=customer["id"] if customer else None,
            email=email,
            firstname=customer["firstname"] if customer else address["firstname"],
            lastname=customer["lastname"] if customer else address["lastname"],
            shipping_address=address,
            shipping_method=method,
        )
    except store.OrderError as err:
        flash(request, str(err), "error")
        request.session["checkout_form"] = {k: str(v) for k, v in form.items()}
        return RedirectResponse("/checkout/", status_code=303)
    if customer is not None and saved is None and form.get("save_in_address_book"):
        has_any = shop.conn.execute("SELECT 1 FROM addresses WHERE customer_id = ?", (customer["id"],)).fetchone()
        shop.conn.execute(
            "INSERT INTO addresses (customer_id, firstname, lastname, street, city, region, postcode, country,"
            " telephone, is_default_billing, is_default_shipping) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (customer["id"], *(address[k] for k in store.ADDRESS_FIELDS), int(not has_any), int(not has_any)),
        )
    request.session.pop("cart_id", None)
    request.session["last_order_id"] = order_id
    return RedirectResponse("/checkout/onepage/success/", status_code=303)


async def success(request: Request) -> Response:
    shop = shop_of(request)
    order_id = request.session.pop("last_order_id", None)
    order = store.load_order(shop.conn, order_id) if order_id else None
    if order is None:
        return RedirectResponse("/checkout/cart/", status_code=302)
    return shop.render(request, "success.html", {"title": "Success Page", "order": order})


ROUTES = [
    Route("/checkout/cart/", cart_page),
    Route("/checkout/cart/index/", cart_page),
    Route("/checkout/cart/add/product/{id:id}/", add, methods=["POST"]),
    Route("/checkout/cart/updatePost/", update, methods=["POST"]),
    Route("/checkout/cart/delete/", delete, methods=["POST"]),
    Route("/checkout/cart/couponPost/", coupon, methods=["POST"]),
    Route("/checkout/", checkout_page),
    Route("/checkout/index/", checkout_page),
    Route("/checkout/onepage/placeOrder/", place_order, methods=["POST"]),
    Route("/checkout/onepage/success/", success),
]
