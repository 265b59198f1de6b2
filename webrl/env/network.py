"""An episode's network trace as HAR 1.2, built from the browser context's request events.

Playwright's own HAR recording (`record_har_path`) is written when its context closes, and the environment keeps one
context for episode after episode (webrl.env.browser_env), so the trace is made here from the same events: every
request that finished or failed while an episode ran, with its method, URL, all request headers (the browser's
`Sec-Fetch-*` included: WebArena-Verified tells a user's navigation by them), its body, the response's status,
headers, cookies and redirect target, and the response body where it is JSON or form data (the kinds
WebArena-Verified's evaluator parses; pages, scripts and images keep their size only, so a trace stays small).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

from playwright.async_api import Error as PlaywrightError

BODY_LIMIT = 1 << 20  # a response body larger than this is left out (its size is kept)
# The response bodies WebArena-Verified's evaluator parses (its parse_har_content); other bodies keep their size only
PARSED_BODIES = ("json", "application/x-www-form-urlencoded", "multipart/form-data")


def _headers(headers: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in headers.items()]


def _cookies(set_cookie: list[str]) -> list[dict[str, str]]:
    """The name and value of each Set-Cookie header (attributes dropped)."""
    cookies = []
    for header in set_cookie:
        for line in header.split("\n"):  # Playwright joins repeated headers with newlines
            name, sep, rest = line.partition("=")
            if sep:
                cookies.append({"name": name.strip(), "value": rest.split(";", 1)[0].strip()})
    return cookies


class NetworkRecorder:
    """Records the requests of one context while an episode runs (`start` ... `har`)."""

    def __init__(self) -> None:
        self.recording = False
        self.entries: list[dict[str, Any]] = []
        self._pending: set[asyncio.Task] = set()

    def attach(self, context) -> None:
        context.on("requestfinished", lambda request: self._record(request, failed=False))
        context.on("requestfailed", lambda request: self._record(request, failed=True))

    def start(self) -> None:
        """A new episode: forget the last one's requests (one still being read is dropped when it lands)."""
        self.entries = []
        self.recording = True

    def stop(self) -> None:
        self.recording = False

    def _record(self, request, failed: bool) -> None:
        if not self.recording:
            return
        entries = self.entries
        task = asyncio.ensure_future(self._entry(request, failed, entries))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def har(self) -> dict[str, Any]:
        """The episode's trace so far as a HAR document, entries in the order the requests started."""
        if self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)
        entries = sorted(self.entries, key=lambda e: e["startedDateTime"])
        return {"log": {"version": "1.2", "creator": {"name": "webrl", "version": "1"}, "entries": entries}}

    async def _entry(self, request, failed: bool, entries: list) -> None:
        try:
            entry = await _har_entry(request, failed)
        except PlaywrightError:  # the page or context went away while it was read: the request is lost
            return
        entries.append(entry)


async def _har_entry(request, failed: bool) -> dict[str, Any]:
    timing = request.timing
    started = timing.get("startTime") or 0
    headers = await request.all_headers()
    entry: dict[str, Any] = {
        "startedDateTime": datetime.fromtimestamp(started / 1000, UTC).isoformat() if started else "",
        "time": max(0.0, timing.get("responseEnd", -1)),
        "request": {
            "method": request.method,
            "url": request.url,
            "httpVersion": "HTTP/1.1",
            "headers": _headers(headers),
            "queryString": [],
            "cookies": [],
            "headersSize": -1,
            "bodySize": len(request.post_data_buffer or b""),
        },
        "response": {
            "status": 0,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "headers": [],
            "cookies": [],
            "content": {"size": 0, "mimeType": ""},
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": 0, "receive": 0},
    }
    if request.post_data is not None:
        entry["request"]["postData"] = {"mimeType": headers.get("content-type", ""), "text": request.post_data}
    if failed:
        entry["response"]["_failure"] = request.failure
        return entry
    response = await request.response()
    if response is None:
        return entry
    response_headers = await response.all_headers()
    mime = response_headers.get("content-type", "")
    content: dict[str, Any] = {"size": int(response_headers.get("content-length", -1) or -1), "mimeType": mime}
    if any(kind in mime for kind in PARSED_BODIES) and not 300 <= response.status < 400:
        body = await response.body()
        content["size"] = len(body)
        if len(body) <= BODY_LIMIT:
            content["text"] = body.decode("utf-8", errors="replace")
    redirected = request.redirected_to
    entry["response"].update(
        status=response.status,
        statusText=response.status_text,
        headers=_headers(response_headers),
        cookies=_cookies([response_headers["set-cookie"]] if "set-cookie" in response_headers else []),
        content=content,
        redirectURL=redirected.url if redirected is not None else response_headers.get("location", ""),
    )
    return entry


def har_bytes(har: dict[str, Any]) -> bytes:
    return json.dumps(har, separators=(",", ":")).encode()
