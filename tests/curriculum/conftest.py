"""Shared pieces of the curriculum tests: the real embedded sites (all five), the evolver's template
pool built from their snapshots (once per session: the pool takes a while), and a local
OpenAI-compatible server with canned replies (GPT-4o cannot run here; the server stands in for its HTTP API)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

ALL_SITES = ("shopping", "shopping_admin", "reddit", "gitlab", "map")


@pytest.fixture(scope="session")
def all_sites(site_servers):
    return site_servers(*ALL_SITES)


@pytest.fixture(scope="session")
def evolver(all_sites):
    from webrl.curriculum.evolve import Evolver

    return Evolver.from_snapshots(Path(all_sites.paths.snapshots))


def _answer(handler: BaseHTTPRequestHandler, status: int, content: str | None = None) -> None:
    """One reply: a chat completion whose message is `content`, or a bare error status."""
    data = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
    handler.send_response(status)
    handler.send_header("content-length", str(len(data) if content is not None else 0))
    handler.end_headers()
    if content is not None:
        handler.wfile.write(data)


@pytest.fixture
def chat_server():
    """`chat_server(reply)`: a local OpenAI-compatible /chat/completions endpoint whose answer is `reply(user
    message text)`; returns (base URL, the request bodies received). Model "down" answers 503."""
    servers = []

    def start(reply: Callable[[str], str]) -> tuple[str, list[dict]]:
        bodies: list[dict] = []

        class Handler(BaseHTTPRequestHandler):
            log_message = staticmethod(lambda *args: None)

            def do_POST(self):
                bodies.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
                if bodies[-1]["model"] == "down":
                    _answer(self, 503)
                else:
                    _answer(self, 200, reply(bodies[-1]["messages"][-1]["content"]))

        server = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}/v1", bodies

    yield start
    for server in servers:
        server.shutdown()
