"""The parts of Magento's REST API that WebArena's evaluators call on the storefront:
an admin token, orders with searchCriteria, and a product's reviews."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from webrl.sites.platform import check_password, int_param
from webrl.sites.shopping.web import shop_of
from webrl.sites.store import store

ORDER_FIELDS = (
    "id",
    "increment_id",
    "customer_id",
    "customer_email",
    "customer_firstname",
    "customer_lastname",
    "status",
    "subtotal",
    "shipping_amount",
    "discount_amount",
    "grand_total",
    "coupon_code",
    "shipping_method",
    "payment_method",
    "created_at",
    "updated_at",
)
FIELD_ALIASES = {"entity_id": "id", "shipping_description": "shipping_method"}
CONDITIONS = {
    "eq": "=",
    "neq": "!=",
    "gt": ">",
    "lt": "<",
    "gteq": ">=",
    "lteq": "<=",
    "like": "LIKE",
    "nlike": "NOT LIKE",
    "from": ">=",
    "to": "<=",
}
# The longest filter value taken (a 400 beyond): longer than any order field holds, and short enough that neither a
# LIKE pattern (SQLite's limit: 50,000 bytes) nor an `in` list (one variable a value) reaches SQLite's limits.
MAX_FILTER_VALUE = 4096
REST_ERROR_AUTH = {
    "message": "The consumer isn't authorized to access %resources.",
    "parameters": {"resources": "Magento_Sales::actions_view"},
}


def parse_search_criteria(request: Request) -> dict[str, Any]:
    """searchCriteria[...] query parameters as nested dicts/lists, e.g.
    searchCriteria[filterGroups][0][filters][0][field]=status -> {'filterGroups': {'0': {'filters': {'0': {...}}}}}."""
    tree: dict[str, Any] = {}
    for key, value in request.query_params.multi_items():
        if not key.startswith("searchCriteria"):
            continue
        parts = re.findall(r"\[([^\]]*)\]", key[len("searchCriteria") :])
        node = tree
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                break
        else:
            if parts:
                node[parts[-1]] = value
    return tree


def _indexed(node: Any) -> list[Any]:
    if not isinstance(node, dict):
        return []
    return [node[k] for k in sorted(node, key=lambda k: int(k) if k.isascii() and k.isdigit() else 0)]


def order_json(order: dict[str, Any]) -> dict[str, Any]:
    """An order in (a subset of) Magento's REST shape."""
    items = [
        {
            "item_id": item["id"],
            "order_id": order["id"],
            "product_id": item["product_id"],
            "sku": item["sku"],
            "name": item["name"],
            "price": item["price"],
            "base_price": item["price"],
            "qty_ordered": item["qty_ordered"],
            "qty_invoiced": item["qty_invoiced"],
            "qty_shipped": item["qty_shipped"],
            "qty_canceled": item["qty_canceled"],
            "row_total": item["row_total"],
            "base_row_total": item["row_total"],
            "product_type": "simple",
            "product_options": item["options"],
        }
        for item in order["items"]
    ]
    billing = order["billing_address"]
    return {
        "entity_id": order["id"],
        "increment_id": order["increment_id"],
        "status": order["status"],
        "state": order["state"],
        "created_at": order["created_at"],
        "updated_at": order["updated_at"],
        "customer_id": order["customer_id"],
        "customer_is_guest": 1 if order["customer_id"] is None else 0,
        "customer_email": order["customer_email"],
        "customer_firstname": order["customer_firstname"],
        "customer_lastname": order["customer_lastname"],
        "subtotal": order["subtotal"],
        "base_subtotal": order["subtotal"],
        "shipping_amount": order["shipping_amount"],
        "discount_amount": -order["discount_amount"] if order["discount_amount"] else 0,
        "grand_total": order["grand_total"],
        "base_grand_total": order["grand_total"],
        "total_qty_ordered": sum(i["qty_ordered"] for i in order["items"]),
        "coupon_code": order["coupon_code"],
        "shipping_description": order["shipping_method"],
        "order_currency_code": "USD",
        "payment": {"method": "checkmo", "title": order["payment_method"]},
        "billing_address": {**billing, "street": [billing.get("street", "")]},
        "items": items,
        "status_histories": [
            {
                "entity_id": h["id"],
                "status": h["status"],
                "comment": h["comment"] or None,
                "is_customer_notified": h["is_customer_notified"],
                "created_at": h["created_at"],
            }
            for h in reversed(order["history"])
        ],
    }


def authorized(request: Request) -> bool:
    """Whether the request carries a bearer token the admin token endpoint handed out."""
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else ""
    return token in shop_of(request).admin_tokens


async def admin_token(request: Request) -> Response:
    shop = shop_of(request)
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError:
        return JSONResponse({"message": "Decoding error: the request body is not valid JSON."}, status_code=400)
    username = str(body.get("username", "")) if isinstance(body, dict) else ""
    password = str(body.get("password", "")) if isinstance(body, dict) else ""
    row = shop.conn.execute("SELECT * FROM admin_users WHERE username = ?", (username,)).fetchone()
    if row is None or not check_password(password, row["password_hash"]):
        return JSONResponse(
            {
                "message": "The account sign-in was incorrect or your account is disabled "
                "temporarily. Please wait and try again later."
            },
            status_code=401,
        )
    token = secrets.token_hex(16)
    shop.admin_tokens[token] = row["id"]
    return JSONResponse(token)


async def orders(request: Request) -> Response:
    shop = shop_of(request)
    if not authorized(request):
        return JSONResponse(REST_ERROR_AUTH, status_code=401)
    criteria = parse_search_criteria(request)
    where, params, echo_groups = [], [], []
    for group in _indexed(criteria.get("filterGroups") or criteria.get("filter_groups")):
        ors, echo_filters = [], []
        for f in _indexed(group.get("filters") if isinstance(group, dict) else None):
            if not isinstance(f, dict) or "field" not in f:
                continue
            field = FIELD_ALIASES.get(f["field"], f["field"])
            cond = f.get("condition_type") or f.get("conditionType") or "eq"
            value = f.get("value", "")
            if not isinstance(value, str) or len(value) > MAX_FILTER_VALUE:
                return JSONResponse(
                    {
                        "message": f'The value of the "{f["field"]}" filter is not text of at most '
                        f"{MAX_FILTER_VALUE} characters."
                    },
                    status_code=400,
                )
            echo_filters.append({"field": f["field"], "value": value, "condition_type": cond})
            if field not in ORDER_FIELDS:
                return JSONResponse({"message": f'"{f["field"]}" is not a valid field.'}, status_code=400)
            if cond in ("in", "nin"):
                values = [v.strip() for v in value.split(",")]
                ors.append(f"{field} {'NOT ' if cond == 'nin' else ''}IN ({','.join('?' * len(values))})")
                params += values
            elif cond in ("null", "notnull"):
                ors.append(f"{field} IS {'NOT ' if cond == 'notnull' else ''}NULL")
            elif cond in CONDITIONS:
                ors.append(f"{field} {CONDITIONS[cond]} ?")
                params.append(value)
            else:
                return JSONResponse({"message": f'Invalid condition type "{cond}".'}, status_code=400)
        if ors:
            where.append("(" + " OR ".join(ors) + ")")
        echo_groups.append({"filters": echo_filters})
    order_by, echo_sorts = [], []
    for s in _indexed(criteria.get("sortOrders") or criteria.get("sort_orders")):
        if not isinstance(s, dict) or "field" not in s:
            continue
        field = FIELD_ALIASES.get(s["field"], s["field"])
        direction = "DESC" if str(s.get("direction", "ASC")).upper() == "DESC" else "ASC"
        if field not in ORDER_FIELDS:
            return JSONResponse({"message": f'"{s["field"]}" is not a valid field.'}, status_code=400)
        order_by.append(f"{field} {direction}")
        echo_sorts.append({"field": s["field"], "direction": direction})
    order_by.append("id " + ("DESC" if order_by and order_by[0].endswith("DESC") else "ASC"))
    sql_where = " WHERE " + " AND ".join(where) if where else ""
    total = shop.conn.execute(f"SELECT COUNT(*) FROM orders{sql_where}", params).fetchone()[0]
    page_size = criteria.get("pageSize") or criteria.get("page_size")
    current = criteria.get("currentPage") or criteria.get("current_page")
    sql = f"SELECT id FROM orders{sql_where} ORDER BY {', '.join(order_by)}"
    echo: dict[str, Any] = {"filter_groups": echo_groups}
    if echo_sorts:
        echo["sort_orders"] = echo_sorts
    page_size = int_param(page_size, 0, 0)  # 0: no paging; numbers past 10^9 clamped, not SQLite's overflow
    if page_size:
        page = int_param(current, 1)
        sql += " LIMIT ? OFFSET ?"
        params = [*params, page_size, (page - 1) * page_size]
        echo["page_size"] = page_size
        echo["current_page"] = page
    ids = [r[0] for r in shop.conn.execute(sql, params)]
    items = [order_json(store.load_order(shop.conn, i)) for i in ids]
    return JSONResponse({"items": items, "search_criteria": echo, "total_count": total})


async def reviews(request: Request) -> Response:
    shop = shop_of(request)
    if not authorized(request):
        return JSONResponse(
            {
                "message": "The consumer isn't authorized to access %resources.",
                "parameters": {"resources": "Magento_Review::reviews"},
            },
            status_code=401,
        )
    product = store.product_by_sku(shop.conn, request.path_params["sku"])
    if product is None:
        return JSONResponse(
            {"message": "The product that was requested doesn't exist. Verify the product and try again."},
            status_code=404,
        )
    status_ids = {"Approved": 1, "Pending": 2, "Not Approved": 3}
    rows = shop.conn.execute("SELECT * FROM reviews WHERE product_id = ? ORDER BY created_at, id", (product["id"],))
    return JSONResponse(
        [
            {
                "id": r["id"],
                "title": r["title"],
                "detail": r["detail"],
                "nickname": r["nickname"],
                "ratings": [
                    {
                        "vote_id": r["id"],
                        "rating_id": 4,
                        "rating_name": "Rating",
                        "percent": r["rating"] * 20,
                        "value": r["rating"],
                    }
                ],
                "review_entity": "product",
                "review_type": 2,
                "review_status": status_ids.get(r["status"], 2),
                "created_at": r["created_at"],
                "entity_pk_value": product["id"],
                "store_id": 1,
                "stores": [1],
            }
            for r in rows
        ]
    )


ROUTES = [
    route
    for prefix in ("/rest/V1", "/rest/default/V1", "/rest/all/V1")
    for route in (
        Route(f"{prefix}/integration/admin/token", admin_token, methods=["POST"]),
        Route(f"{prefix}/orders", orders),
        Route(f"{prefix}/products/{{sku}}/reviews", reviews),
    )
]
