"""No dead internal links: a bounded breadth-first crawl of every site from its front page (signed in where the
site has accounts, as the agent is) follows the page links an agent can click and finds no 404 or 500. A dead
link is a trap for an agent: it looks like a way forward and leads nowhere."""

from __future__ import annotations

import re
from collections import deque
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from webrl.sites.base import ACCOUNTS

PAGES = 300  # per site: enough to reach every kind of page from the front page, breadth first
# links that end the session or act (they are buttons in a form on the real sites; some are links here)
SKIPPED = ("sign_out", "logout", "/delete", "toggle_star")
SIGN_IN = {
    "gitlab": ("/users/sign_in", "user[login]", "user[password]"),
    "reddit": ("/login", "_username", "_password"),
    "shopping": ("/customer/account/loginPost/", "login[username]", "login[password]"),
    "shopping_admin": ("/admin/admin/index/index/", "login[username]", "login[password]"),
}


def dead_links(base: str, site: str) -> tuple[int, list[tuple[str, int, str]]]:
    """(pages visited, [(url, status, the page that links to it)]) of a crawl from the front page."""
    origin = urlsplit(base)
    with httpx.Client(base_url=f"{origin.scheme}://{origin.netloc}", timeout=20, follow_redirects=True) as client:
        if site in SIGN_IN:
            path, user_field, password_field = SIGN_IN[site]
            user, password = ACCOUNTS[site]
            client.post(path, data={user_field: user, password_field: password})
        start = origin.path or "/"
        seen, queue, dead = {start}, deque([(start, "")]), []
        visited = 0
        while queue and visited < PAGES:
            path, referrer = queue.popleft()
            response = client.get(path)
            visited += 1
            if response.status_code >= 400:
                dead.append((path, response.status_code, referrer))
                continue
            if "text/html" not in response.headers.get("content-type", ""):
                continue
            for href in re.findall(r'<a\b[^>]*\shref="([^"#]+)', response.text):
                url = urlsplit(urljoin(str(response.url), href.replace("&amp;", "&")))
                target = url.path + (f"?{url.query}" if url.query else "")
                if url.netloc == origin.netloc and target not in seen and not any(s in target for s in SKIPPED):
                    seen.add(target)
                    queue.append((target, path))
    return visited, dead


@pytest.mark.slow  # up to 300 pages a site
@pytest.mark.parametrize("site", ["gitlab", "reddit", "shopping", "shopping_admin", "map", "homepage"])
def test_no_internal_link_is_dead(site_servers, site):
    backend = site_servers(site)
    try:
        visited, dead = dead_links(backend.urls(0)[site], site)
    finally:
        backend.reset()
    assert visited > 1 and dead == [], dead
