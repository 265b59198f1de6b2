"""Launching Chromium through Playwright: Playwright's own build when installed, else the system's.

Headless, the system's headless shell (Debian's `chromium-headless-shell`, Chromium's old headless mode) is
preferred to the full browser: it renders the same pages with the same Blink, but its browser process does far less
(bench/throughput.py: ~27% less CPU per oracle step, half of it in the browser process). Its default hinting of
fallback fonts (symbols such as ★) differs from the full browser's, which takes Debian's fontconfig default
("slight"), so every headless launch asks for that hinting (the full browser ignores the switch): the observation
is then byte-identical to the full browser's (tests/env/test_observation.py checks it where both are installed).
WEBRL_CHROMIUM names an executable to use instead.
"""

from __future__ import annotations

import os
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
    # For the guard (webrl.env.guard), whose proxy carries no UDP: WebRTC may only use the proxy (so no STUN, TURN or
    # peer packet leaves the browser), and no QUIC (HTTP/3, WebTransport).
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-quic",
]
HEADLESS_ARGS = ["--font-render-hinting=slight"]  # as the full browser under Debian's fontconfig (see above)
SYSTEM_CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
# The binary itself first: Debian's /usr/bin/chromium-headless-shell is a shell script that does not exec it.
SYSTEM_HEADLESS_SHELL = (
    "/usr/lib/chromium/chromium-headless-shell",
    "chromium-headless-shell",
    "chrome-headless-shell",
)


def chromium_executable(playwright, headless: bool = True) -> str | None:
    """WEBRL_CHROMIUM when set; else None when Playwright's bundled browser exists (Playwright then picks its own
    headless shell where installed); else the system's headless shell (headless only), or the system's Chromium."""
    if named := os.environ.get("WEBRL_CHROMIUM"):
        return named
    if Path(playwright.chromium.executable_path).exists():
        return None
    for name in (SYSTEM_HEADLESS_SHELL if headless else ()) + SYSTEM_CHROMIUM:
        if path := shutil.which(name):
            return path
    raise FileNotFoundError(
        "no Chromium found: install Debian's `chromium` package or run `playwright install chromium`"
    )


def launch_chromium(playwright, headless: bool = True):
    """A Browser from a sync Playwright; with an async Playwright, an awaitable of one."""
    return playwright.chromium.launch(
        executable_path=chromium_executable(playwright, headless),
        headless=headless,
        args=CHROMIUM_ARGS + (HEADLESS_ARGS if headless else []),
    )
