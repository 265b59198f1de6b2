"""Signed-in browser state per site, made by submitting each site's real login form (as WebArena's auto-login
does) and reused while the site has not been reset since (a reset drops its sessions, whoever made it).

The form is submitted over HTTP by the browser context's own request client (cookies land in that context), not
by rendering the login page: the same GET and POST a browser makes, with every field of the form (hidden ones,
such as Magento's form_key or GitLab's authenticity_token, included), in ~130 ms instead of ~600 ms.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urljoin

from playwright.async_api import Browser

from webrl.errors import WebrlError
from webrl.sitelist import SITE_LIST
from webrl.sites.base import ACCOUNTS, SiteBackend

# site: (login page path, the user and password fields' names), from webrl.sitelist
LOGINS = {site.name: (site.login.path, site.login.fields) for site in SITE_LIST if site.login}


class AuthCache:
    def __init__(self, browser: Browser, backend: SiteBackend, instance: int):
        self.browser, self.backend, self.instance = browser, backend, instance
        self._cookies: dict[str, tuple[object, list[dict]]] = {}  # site -> (its last reset when signed in, cookies)

    async def storage_state(self, sites: list[str], last_resets: dict | None = None) -> dict:
        """A Playwright storage state signed in to every site of `sites` that has an account. `last_resets`: when each
        site was last reset (the backend's `last_resets`); a site reset since its sign-in is signed in to again."""
        last_resets = last_resets or {}
        for site in sites:
            stamp, cached = last_resets.get(site), self._cookies.get(site)
            if site in LOGINS and (cached is None or cached[0] != stamp):
                self._cookies[site] = (stamp, await self._login(site))
        return {"cookies": [c for s in sites if s in self._cookies for c in self._cookies[s][1]], "origins": []}

    async def _login(self, site: str) -> list[dict]:
        path, names = LOGINS[site]
        base = self.backend.urls(self.instance)[site]
        context = await self.browser.new_context()
        try:
            page = await context.request.get(base + path)
            form = LoginForm.find(await page.text(), names[1])
            if form is None:
                raise WebrlError(f"signing in to {site}: {page.url} shows no login form with a '{names[1]}' field")
            fields = {**form.fields, **dict(zip(names, ACCOUNTS[site], strict=True))}
            answer = await context.request.post(urljoin(page.url, form.action or page.url), form=fields)
            if LoginForm.find(await answer.text(), names[1]) is not None:
                raise WebrlError(
                    f"signing in to {site} as {ACCOUNTS[site][0]} failed: {answer.url} shows the login form again"
                )
            return await context.cookies()
        finally:
            await context.close()


class LoginForm(HTMLParser):
    """The first form of a page that has an input named `password`: its action and the fields it would send."""

    def __init__(self, password: str):
        super().__init__()
        self.password = password
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self.found = False
        self._form: tuple[str, dict[str, str], bool] | None = None  # (action, fields, has the password field)

    @classmethod
    def find(cls, html: str, password: str) -> LoginForm | None:
        parser = cls(password)
        parser.feed(html)
        return parser if parser.found else None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        if self.found:
            return
        if tag == "form":
            self._form = (attributes.get("action", ""), {}, False)
        elif tag == "input" and self._form is not None and attributes.get("name"):
            action, fields, has_password = self._form
            kind = attributes.get("type", "text").lower()
            if kind not in ("checkbox", "radio", "submit", "button", "image") or "checked" in attributes:
                fields[attributes["name"]] = attributes.get("value", "")
            self._form = (action, fields, has_password or attributes["name"] == self.password)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._form is not None and not self.found:
            self.action, self.fields, self.found = self._form
            self._form = None
