"""The evaluation helper functions that ``program_html`` targets call as ``func:...``, and the
whitelisted namespace they are called from.

Contracts (same as the originals'):
- ``shopping_get_auth_token``: POST ``{SHOPPING}/rest/default/V1/integration/admin/token`` with the shopping-site
  admin account (admin / admin1234) on the **storefront**, returns the token.
- ``shopping_get_latest_order_url``: GET ``{SHOPPING}/rest/V1/orders`` sorted by created_at DESC, page size 1, with
  the token; returns ``{SHOPPING}/sales/order/view/order_id/{int(increment_id)}/`` (it assumes that the entity id
  equals the increment id, as the original does).
- ``shopping_get_sku_latest_review_author`` / ``_rating``: GET ``{SHOPPING}/rest/V1/products/{sku}/reviews`` with
  the token; the last review's ``nickname`` / ``str(ratings[0]["percent"])``, or "" when there is none.
- ``reddit_get_post_url``: ``scheme://host/f/<forum>/<post_id>/`` for a URL whose path is ``/f/<forum>/<id>...``
  (at least four '/'-separated path parts, the first 'f'); any other URL unchanged.
- ``gitlab_get_project_memeber_role`` (the original's spelling): on a project-members page, the role text of the
  row whose ``td[data-label='Account'] span.gl-avatar-labeled-sublabel`` reads ``@<account>`` (the i-th such span
  pairs with the i-th ``td.col-max-role span``), or "" on any failure.

The shopping helpers take the storefront base URL as the keyword ``shopping``; ``helper_namespace(urls)`` binds it
from the site URLs so that the task expressions (``func:shopping_get_latest_order_url()``) keep their form. Page
helpers are ``async`` (Playwright's async API) and the evaluator awaits whatever a helper returns.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import urlparse

from webrl.evaluators.result import EvaluationError

SHOPPING_SITE_ADMIN = ("admin", "admin1234")  # the REST account on the storefront
HTTP_TIMEOUT_S = 30
_DUNDER = re.compile(r"__\w+__")  # a quoted variable name in a func: expression ('__last_url__')


# -- shopping (REST on the storefront) ------------------------------------------------------------------------


async def _get_json(url: str, *, token: str, params: dict | None = None) -> Any:
    import httpx

    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT_S) as client:
        response = await client.get(
            url, params=params, headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        )
    if response.status_code != 200:  # the originals assert a 200
        raise EvaluationError(f"GET {url} answered HTTP {response.status_code}")
    return response.json()


async def shopping_get_auth_token(*, shopping: str) -> str:
    import httpx

    url = f"{shopping.rstrip('/')}/rest/default/V1/integration/admin/token"
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT_S) as client:
        response = await client.post(url, json={"username": SHOPPING_SITE_ADMIN[0], "password": SHOPPING_SITE_ADMIN[1]})
    if response.status_code != 200:
        raise EvaluationError(f"POST {url} answered HTTP {response.status_code}")
    return response.json()


async def shopping_get_latest_order_url(*, shopping: str) -> str:
    base = shopping.rstrip("/")
    token = await shopping_get_auth_token(shopping=base)
    body = await _get_json(
        f"{base}/rest/V1/orders",
        token=token,
        params={
            "searchCriteria[sortOrders][0][field]": "created_at",
            "searchCriteria[sortOrders][0][direction]": "DESC",
            "searchCriteria[pageSize]": "1",
        },
    )
    try:
        increment_id = body["items"][0]["increment_id"]
    except (KeyError, IndexError, TypeError):
        raise EvaluationError("the shop has no orders (REST /rest/V1/orders returned none)") from None
    return f"{base}/sales/order/view/order_id/{int(increment_id)}/"


async def _latest_review(sku: str, shopping: str) -> dict | None:
    base = shopping.rstrip("/")
    token = await shopping_get_auth_token(shopping=base)
    reviews = await _get_json(f"{base}/rest/V1/products/{sku}/reviews", token=token)
    return reviews[-1] if reviews else None


async def shopping_get_sku_latest_review_author(sku: str, *, shopping: str) -> str:
    review = await _latest_review(sku, shopping)
    return "" if review is None else review["nickname"]


async def shopping_get_sku_latest_review_rating(sku: str, *, shopping: str) -> str:
    review = await _latest_review(sku, shopping)
    return "" if review is None else str(review["ratings"][0]["percent"])


# -- reddit and gitlab ----------------------------------------------------------------------------------------


def reddit_get_post_url(url: str) -> str:
    parsed = urlparse(url)
    parts = parsed.path.split("/")  # "/f/forum/12/slug" -> ["", "f", "forum", "12", "slug"]
    if len(parts) < 4 or parts[1] != "f":
        return url
    return f"{parsed.scheme}://{parsed.netloc}/f/{parts[2]}/{parts[3]}/"


MEMBER_ROLE_JS = """(account) => {
    const names = [...document.querySelectorAll("td[data-label='Account'] span.gl-avatar-labeled-sublabel")];
    const index = names.findIndex((el) => el.outerText === '@' + account);
    return document.querySelectorAll("td.col-max-role span")[index].outerText;
}"""


async def gitlab_get_project_memeber_role(page, account: str) -> str:
    try:
        role = await page.evaluate(MEMBER_ROLE_JS, account)
    except Exception:  # noqa: BLE001 - no such row (index -1 -> undefined) or not a members page: "" like the original
        return ""
    return role if isinstance(role, str) else ""


class PseudoPage:
    """A page whose ``url`` is overridden (to evaluate a recorded trajectory against another URL); every other
    attribute is the wrapped page's."""

    def __init__(self, original_page, url: str):
        self.url = url
        self.original_page = original_page

    def __getattr__(self, name: str):
        return getattr(self.original_page, name)


# -- the whitelisted namespace and the expression interpreter -------------------------------------------------

SHOPPING_HELPERS = (
    "shopping_get_auth_token",
    "shopping_get_latest_order_url",
    "shopping_get_sku_latest_review_author",
    "shopping_get_sku_latest_review_rating",
)
HELPERS: dict[str, Callable] = {
    "shopping_get_auth_token": shopping_get_auth_token,
    "shopping_get_latest_order_url": shopping_get_latest_order_url,
    "shopping_get_sku_latest_review_author": shopping_get_sku_latest_review_author,
    "shopping_get_sku_latest_review_rating": shopping_get_sku_latest_review_rating,
    "reddit_get_post_url": reddit_get_post_url,
    "gitlab_get_project_memeber_role": gitlab_get_project_memeber_role,
}


def helper_namespace(urls: dict[str, str] | None) -> dict[str, Callable]:
    """The only names a ``func:`` expression may call, with the shop's base URL bound."""
    namespace: dict[str, Callable] = {}
    for name, function in HELPERS.items():
        if name in SHOPPING_HELPERS:
            if urls and urls.get("shopping"):
                namespace[name] = partial(function, shopping=urls["shopping"])
            else:
                namespace[name] = partial(_no_url, name)
        else:
            namespace[name] = function
    return namespace


def _no_url(name: str, *args, **kwargs):
    raise EvaluationError(f"{name} needs the shopping site's URL (pass urls= to evaluate)")


async def call_expression(expression: str, namespace: dict[str, Callable], variables: dict[str, Any]) -> Any:
    """Evaluate a ``func:`` expression such as ``reddit_get_post_url('__last_url__')`` or
    ``gitlab_get_project_memeber_role(page, 'byteblaze')`` WITHOUT ``eval``: the expression is parsed and only
    calls of whitelisted helpers, string/number literals, lists/tuples of them and the given variables (``page``,
    ``__last_url__``) are allowed; no builtins, attributes or subscripts. Coroutine results are awaited.

    A variable is bound after parsing, never spliced into the text: the originals replace ``__last_url__`` in the
    text, so a URL holding ``','`` became code. The tasks write it quoted (``'__last_url__'``), so a string literal
    that is exactly a ``__dunder__`` variable's name stands for that variable too."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as err:
        raise EvaluationError(f"func expression {expression!r} is not valid: {err.msg}") from None

    async def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _DUNDER.fullmatch(node.value):
            if node.value in variables:
                return variables[node.value]
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [await value(n) for n in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Name) and node.id in variables:
            return variables[node.id]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            function = namespace.get(node.func.id)
            if function is None:
                raise EvaluationError(f"func expression calls {node.func.id!r}, which is not an evaluation helper")
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                raise EvaluationError(f"func expression {expression!r}: * and ** arguments are not allowed")
            args = [await value(a) for a in node.args]
            kwargs = {k.arg: await value(k.value) for k in node.keywords}
            result = function(*args, **kwargs)
            return await result if inspect.isawaitable(result) else result
        raise EvaluationError(
            f"func expression {expression!r}: {type(node).__name__} is not allowed "
            f"(only helper calls with literal arguments)"
        )

    return await value(tree.body)
