"""Fixtures for the evaluator tests: a real Chromium driven through Playwright's **async** API (the evaluators'
API) from a background event loop, a tiny local web server for hand-made pages, and a stand-in for an
OpenAI-compatible judge endpoint."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from webrl.sites.task_sets import resolve_task_set
from webrl.tasks import Task


@pytest.fixture(scope="session")
def lite_tasks() -> list[Task]:
    return resolve_task_set("webarena-lite", "/nonexistent")  # from its PyPI distribution


class AsyncBrowser:
    """One async Chromium for the session, on an event loop in a background thread. ``run(fn)`` gives
    ``await fn(page)`` a fresh context and page and returns its result."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.playwright, self.browser = self.call(self._start())

    def call(self, coroutine, timeout: float = 120):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    async def _start(self):
        from playwright.async_api import async_playwright

        from webrl.browser import launch_chromium

        playwright = await async_playwright().start()
        return playwright, await launch_chromium(playwright)

    def run(self, fn):
        async def with_page():
            context = await self.browser.new_context(viewport={"width": 1280, "height": 720})
            page = await context.new_page()
            page.set_default_timeout(15_000)
            try:
                return await fn(page)
            finally:
                await context.close()

        return self.call(with_page())

    def close(self):
        async def stop():
            await self.browser.close()
            await self.playwright.stop()

        self.call(stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture(scope="session")
def async_browser():
    runner = AsyncBrowser()
    yield runner
    runner.close()


class _Server:
    def __init__(self, handler_cls):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler_cls)
        self.server.owner = self
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class _PageHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?", 1)[0]
        pages = self.server.owner.pages
        body = pages.get(path, pages.get(path.rstrip("/")))
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def static_site():
    """``static_site.base`` serves ``static_site.pages[path]`` (HTML strings; the query string and a trailing
    slash are ignored)."""
    server = _Server(_PageHandler)
    server.pages = {}
    yield server
    server.close()


class _ChatHandler(BaseHTTPRequestHandler):
    def do_POST(self):
        owner = self.server.owner
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        owner.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        status, content = owner.answer(body)
        data = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                ],
            }
        ).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def chat_server():
    """A local stand-in for an OpenAI-compatible /chat/completions endpoint. The real judge is an external API
    that cannot be reached from the tests; this answers like one. Set ``chat_server.answer = lambda body:
    (status, text)``; ``chat_server.requests`` records what was sent."""
    server = _Server(_ChatHandler)
    server.requests = []
    server.answer = lambda body: (200, "correct")
    yield server
    server.close()
