"""The evaluation helper functions: the shopping ones against the running embedded storefront's
REST endpoints, the GitLab member-role one against the embedded GitLab's members page in Chromium, the pure ones
as tables, and the whitelist that ``func:`` expressions are evaluated against."""

from __future__ import annotations

import asyncio

import pytest
from eval_support import make_task

from webrl.evaluators import evaluate
from webrl.evaluators.helpers import (
    PseudoPage,
    call_expression,
    gitlab_get_project_memeber_role,
    helper_namespace,
    reddit_get_post_url,
    shopping_get_auth_token,
    shopping_get_latest_order_url,
    shopping_get_sku_latest_review_author,
    shopping_get_sku_latest_review_rating,
)
from webrl.evaluators.result import EvaluationError

R = "http://r:9999"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"{R}/f/books/12/a-title", f"{R}/f/books/12/"),
        (f"{R}/f/books/12/a-title/comment/5?x=1", f"{R}/f/books/12/"),
        (f"{R}/f/books/12", f"{R}/f/books/12/"),
        (f"{R}/f/books/", f"{R}/f/books//"),  # four path parts, an empty id: the original's result, kept
        (f"{R}/f/books", f"{R}/f/books"),  # fewer parts: unchanged
        (f"{R}/user/someone/12", f"{R}/user/someone/12"),  # not a forum path: unchanged
        (f"{R}/", f"{R}/"),
    ],
)
def test_reddit_get_post_url(url, expected):
    assert reddit_get_post_url(url) == expected


def test_pseudo_page_overrides_only_the_url():
    class Page:
        url = "http://a/real"
        title = "T"

    fake = PseudoPage(Page(), "http://a/other")
    assert fake.url == "http://a/other" and fake.title == "T"


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('true')",  # not a helper
        "open('/etc/passwd')",  # builtins are not in the namespace
        "reddit_get_post_url(page.url)",  # attribute access
        "reddit_get_post_url('x')[0]",  # subscript
        "[c for c in 'ab']",
        "reddit_get_post_url(*['x'])",
        "lambda: 1",
        "reddit_get_post_url('x'",  # syntax error
    ],
)
def test_func_expressions_are_whitelisted(expression):
    with pytest.raises(EvaluationError):
        asyncio.run(call_expression(expression, helper_namespace({}), {"page": object()}))


def test_func_expression_calls_a_helper():
    value = asyncio.run(call_expression("reddit_get_post_url('http://r/f/a/1/t')", helper_namespace(None), {}))
    assert value == "http://r/f/a/1/"
    with pytest.raises(EvaluationError, match="shopping site's URL"):
        asyncio.run(call_expression("shopping_get_latest_order_url()", helper_namespace(None), {}))


def test_shopping_helpers_against_the_embedded_store(pristine_store):
    shop = pristine_store.urls(0)["shopping"]
    latest = pristine_store.query(
        "shopping", "SELECT increment_id FROM orders ORDER BY created_at DESC, id DESC LIMIT 1"
    )[0]
    reviewed = pristine_store.query(
        "shopping",
        "SELECT p.sku, p.id FROM products p WHERE (SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id)"
        " >= 2 LIMIT 1",
    )[0]
    last_review = pristine_store.query(
        "shopping",
        "SELECT nickname, rating FROM reviews WHERE product_id = ? ORDER BY created_at DESC, id DESC LIMIT 1",
        (reviewed["id"],),
    )[0]
    unreviewed = pristine_store.query(
        "shopping",
        "SELECT sku FROM products p WHERE NOT EXISTS (SELECT 1 FROM reviews r WHERE r.product_id = p.id) LIMIT 1",
    )[0]

    async def calls():
        return (
            await shopping_get_auth_token(shopping=shop),
            await shopping_get_latest_order_url(shopping=shop),
            await shopping_get_sku_latest_review_author(reviewed["sku"], shopping=shop),
            await shopping_get_sku_latest_review_rating(reviewed["sku"], shopping=shop),
            await shopping_get_sku_latest_review_author(unreviewed["sku"], shopping=shop),
            await shopping_get_sku_latest_review_rating(unreviewed["sku"], shopping=shop),
        )

    token, order_url, author, rating, no_author, no_rating = asyncio.run(calls())
    assert isinstance(token, str) and len(token) >= 16
    assert order_url == f"{shop}/sales/order/view/order_id/{int(latest['increment_id'])}/"
    assert (author, rating) == (last_review["nickname"], str(last_review["rating"] * 20))
    assert (no_author, no_rating) == ("", "")
    with pytest.raises(EvaluationError, match="HTTP 404"):
        asyncio.run(shopping_get_sku_latest_review_author("NO-SUCH-SKU", shopping=shop))


def test_shopping_helpers_in_program_html(pristine_store, async_browser):
    urls = pristine_store.urls(0)
    shop = urls["shopping"]
    sku, nickname = pristine_store.query(
        "shopping",
        "SELECT p.sku, r.nickname FROM reviews r JOIN products p ON p.id = r.product_id"
        " ORDER BY r.created_at DESC, r.id DESC LIMIT 1",
    )[0]
    latest = pristine_store.query(
        "shopping", "SELECT increment_id FROM orders ORDER BY created_at DESC, id DESC LIMIT 1"
    )[0]
    task = make_task(
        {
            "eval_types": ["program_html"],
            "reference_answers": None,
            "reference_url": "",
            "program_html": [
                {
                    "url": "last",
                    "locator": f"func:shopping_get_sku_latest_review_author('{sku}')",
                    "required_contents": {"exact_match": nickname},
                },
                {
                    "url": "func:shopping_get_latest_order_url()",
                    "locator": "",
                    "required_contents": {"must_include": ["<html"]},
                },
            ],
        }
    )

    async def scenario(page):
        await page.goto(shop)
        return await evaluate(task, None, page, urls=urls)

    result = async_browser.run(scenario)
    assert result.score == 1.0, result.details
    checks = result.details[-1]["checks"]
    assert checks[1]["url"] == f"{shop}/sales/order/view/order_id/{int(latest['increment_id'])}/"
    # without the site URLs the shopping helpers cannot run: an error, not a silent score

    async def without_urls(page):
        await page.goto(shop)  # a site page (about:blank would not be judged at all: test_site_pages.py)
        return await evaluate(task, None, page)

    assert async_browser.run(without_urls).status == "error"


def test_gitlab_member_role_on_the_embedded_gitlab(site_servers, async_browser):
    gitlab = site_servers("gitlab")
    gitlab.reset()
    base = gitlab.urls(0)["gitlab"]
    roles = {"Guest": 10, "Reporter": 20, "Developer": 30, "Maintainer": 40, "Owner": 50}
    members = gitlab.query(
        "gitlab",
        "SELECT u.username, m.access_level FROM project_members m"
        " JOIN projects p ON p.id = m.project_id JOIN users u ON u.id = m.user_id"
        " JOIN namespaces n ON n.id = p.namespace_id"
        " WHERE n.path = 'byteblaze' AND p.path = 'dotfiles' AND u.username != 'byteblaze'"
        " ORDER BY u.username",
    )
    other = members[0]
    expected_role = next(name for name, level in roles.items() if level == other["access_level"])

    async def scenario(page):
        await page.goto(f"{base}/users/sign_in")
        await page.get_by_test_id("username-field").fill("byteblaze")
        await page.get_by_test_id("password-field").fill("hello1234")
        await page.get_by_test_id("sign-in-button").click()
        await page.wait_for_url(f"{base}/dashboard/projects")
        await page.goto(f"{base}/byteblaze/dotfiles/-/project_members")
        direct = (
            await gitlab_get_project_memeber_role(page, "byteblaze"),
            await gitlab_get_project_memeber_role(page, other["username"]),
            await gitlab_get_project_memeber_role(page, "no-such-user"),
        )
        task = make_task(
            {
                "eval_types": ["program_html"],
                "reference_answers": None,
                "reference_url": "",
                "program_html": [
                    {
                        "url": f"{base}/byteblaze/dotfiles/-/project_members",
                        "locator": f"func:gitlab_get_project_memeber_role(__page__, '{other['username']}')",
                        "required_contents": {"must_include": [expected_role]},
                    }
                ],
            }
        )
        result = await evaluate(task, None, page, mode="vab")
        await page.goto(f"{base}/dashboard/projects")  # not a members page: ""
        off_page = await gitlab_get_project_memeber_role(page, "byteblaze")
        return direct, result, off_page

    direct, result, off_page = async_browser.run(scenario)
    assert direct == ("Owner", expected_role, "")
    assert result.score == 1.0, result.details
    assert off_page == ""
