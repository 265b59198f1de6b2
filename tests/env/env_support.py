"""Shared by the env tests: a fresh real Chromium page for one async test body."""

from __future__ import annotations

import asyncio

VIEWPORT = {"width": 1280, "height": 720}


def with_page(body, url: str | None = None, html: str | None = None):
    """asyncio.run(body(page)) on a fresh page of a fresh Chromium, at `url` or showing `html`."""

    async def main():
        from playwright.async_api import async_playwright

        from webrl.browser import launch_chromium

        async with async_playwright() as p:
            browser = await launch_chromium(p)
            try:
                page = await (await browser.new_context(viewport=VIEWPORT)).new_page()
                page.set_default_timeout(15_000)
                if url is not None:
                    await page.goto(url)
                if html is not None:
                    await page.set_content(html)
                return await body(page)
            finally:
                await browser.close()

    return asyncio.run(main())
