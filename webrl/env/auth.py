"""Signed-in browser state per site, made by logging in through each site's real login form (as
WebArena's auto-login does) and reused until the site is reset, which drops its sessions."""

from __future__ import annotations

from webrl.sites.base import ACCOUNTS

LOGINS = {
    # site: (login page path, how to find the user and password fields, the submit button)
    "shopping": ("/customer/account/login/", ("label:Email", "label:Password"), "button:Sign In"),
    "shopping_admin": ("", ("placeholder:user name", "placeholder:password"), "button:Sign in"),
    "reddit": ("/login", ("label:Username", "label:Password"), "button:Log in"),
    "gitlab": ("/users/sign_in", ("testid:username-field", "testid:password-field"), "testid:sign-in-button"),
}


class AuthCache:
    def __init__(self, browser, backend, instance: int):
        self.browser, self.backend, self.instance = browser, backend, instance
        self._cookies: dict[str, list[dict]] = {}

    def forget(self, sites: list[str]) -> None:
        for site in sites:
            self._cookies.pop(site, None)

    async def storage_state(self, sites: list[str]) -> dict:
        """A Playwright storage state signed in to every site of `sites` that has an account."""
        for site in sites:
            if site in LOGINS and site not in self._cookies:
                self._cookies[site] = await self._login(site)
        return {"cookies": [c for s in sites for c in self._cookies.get(s, [])], "origins": []}

    async def _login(self, site: str) -> list[dict]:
        path, fields, submit = LOGINS[site]
        context = await self.browser.new_context()
        try:
            page = await context.new_page()
            await page.goto(self.backend.urls(self.instance)[site] + path)
            for how, value in zip(fields, ACCOUNTS[site], strict=True):
                await _find(page, how).fill(value)
            async with page.expect_navigation():
                await _find(page, submit).click()
            return await context.cookies()
        finally:
            await context.close()


def _find(page, how: str):
    kind, _, value = how.partition(":")
    match kind:
        case "label":
            return page.get_by_label(value, exact=True)
        case "placeholder":
            return page.get_by_placeholder(value, exact=True)
        case "testid":
            return page.get_by_test_id(value)
        case _:
            return page.get_by_role("button", name=value, exact=True)
