"""Launching Chromium through Playwright: Playwright's own build when installed, else the system's."""

from __future__ import annotations

import shutil
from pathlib import Path

# Flags that keep a headless Chromium quiet and offline-friendly (no update checks, no sync).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SYSTEM_CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


def chromium_executable(playwright) -> str | None:
    """None when Playwright's bundled browser exists; else the path of a system Chromium."""
    if Path(playwright.chromium.executable_path).exists():
        return None
    for name in SYSTEM_CHROMIUM:
        if path := shutil.which(name):
            return path
    raise FileNotFoundError(
        "no Chromium found: install Debian's `chromium` package or run `playwright install chromium`"
    )


def launch_chromium(playwright, headless: bool = True):
    """A Browser from a sync Playwright; with an async Playwright, an awaitable of one."""
    return playwright.chromium.launch(
        executable_path=chromium_executable(playwright), headless=headless, args=CHROMIUM_ARGS
    )
