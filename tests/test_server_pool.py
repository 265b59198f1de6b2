"""The pool of OpenAI-compatible servers behind `openai:MODEL@URL1,URL2`: an episode stays on its server, a new
one goes to the least-loaded server, a failed server is left out and its episodes move; against two real local
stand-in servers that answer with their own name."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from webrl.env.observation import Observation
from webrl.errors import UsageError, WebrlError
from webrl.policy.base import PolicyInput, Sampling
from webrl.policy.factory import make_policy
from webrl.policy.openai import OpenAIPolicy
from webrl.policy.pool import ServerPool

TASK_FIELDS = {
    "task_id": 1,
    "sites": ["shopping"],
    "start_url": "__SHOPPING__",
    "intent": "Buy socks.",
    "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["x"]}},
}
OBS = Observation(text="<html></html>", url="http://x/", title="t", ids=[], boxes={})


class Stub:
    """An OpenAI-compatible server whose every answer is its name, with the HTTP status `status`. It counts the
    requests it receives; while `gate` is clear, a request waits for it (in flight; `entered` says one came)."""

    def __init__(self, name: str):
        self.name, self.status, self.requests = name, 200, 0
        self.gate, self.entered = threading.Event(), threading.Event()
        self.gate.set()
        self._count = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["content-length"]))
                with stub._count:
                    stub.requests += 1
                stub.entered.set()
                stub.gate.wait(3)
                choice = {"text": stub.name, "message": {"content": stub.name}}
                payload = json.dumps({"choices": [choice], "usage": {"completion_tokens": 1}}).encode()
                self.send_response(stub.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()  # quick to shut down

    def stop(self) -> None:
        """Shut down: connections are refused from now on."""
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stubs():
    a, b = Stub("a"), Stub("b")
    yield a, b
    for stub in (a, b):
        stub.stop()


def ask(policy: OpenAIPolicy, episode: str) -> str:
    """The answering server's name, for one decision of `episode`."""
    from webrl.tasks.model import Task

    x = PolicyInput(Task.model_validate(TASK_FIELDS), [], OBS, episode=episode)
    return policy.act([x], Sampling())[0].text


def test_an_episode_stays_on_its_server_and_a_new_one_goes_to_the_least_loaded(stubs):
    a, b = stubs
    policy = OpenAIPolicy("m", [a.url, b.url], timeout_s=2)
    a.gate.clear()
    held = threading.Thread(target=ask, args=(policy, "1:0"))  # episode 1's first request, in flight on a
    held.start()
    assert a.entered.wait(2)
    assert ask(policy, "2:0") == "b"  # a is busy
    a.gate.set()
    held.join()
    # Both idle now: without stickiness, each request would go to a (the first of equals).
    assert {episode: {ask(policy, episode) for _ in range(3)} for episode in ("1:0", "2:0")} == {
        "1:0": {"a"},
        "2:0": {"b"},
    }
    assert ask(policy, "3:0") == "a"
    assert (a.requests, b.requests) == (5, 4)
    assert policy.pool.stats()[a.url] == {"served": 5, "failures": 0, "in_flight": 0, "down": False}


@pytest.mark.parametrize("fault", ["shut down", "stops answering", "503"])
def test_a_failed_server_is_left_out_and_its_episode_moves(stubs, fault):
    a, b = stubs
    policy = OpenAIPolicy("m", [a.url, b.url], timeout_s=0.5)
    assert ask(policy, "1:0") == "a"
    {"shut down": a.stop, "stops answering": a.gate.clear, "503": lambda: setattr(a, "status", 503)}[fault]()
    assert [ask(policy, "1:0") for _ in range(3)] == ["b"] * 3  # the failed request was retried on b
    assert ask(policy, "2:0") == "b"  # a new episode too: a is left out, idle as it is
    assert a.requests == (1 if fault == "shut down" else 2)
    stats = policy.pool.stats()
    assert stats[a.url] == {"served": 1, "failures": 1, "in_flight": 0, "down": True}
    assert stats[b.url] == {"served": 4, "failures": 0, "in_flight": 0, "down": False}


def test_a_left_out_server_is_tried_again_after_a_while(stubs):
    a, b = stubs

    def send(url: str) -> str:
        return httpx.post(url + "/completions", json={}, timeout=1).raise_for_status().json()["choices"][0]["text"]

    pool = ServerPool([a.url, b.url], down_s=0.3)
    a.status = 503
    assert pool.call("1:0", send) == "b"
    a.status = 200
    assert pool.call("2:0", send) == "b"
    time.sleep(0.3)
    assert pool.call("3:0", send) == "a"

    # With every server down, each request still tries them: a server that recovered answers at once.
    alone = ServerPool([b.url])
    b.status = 503
    with pytest.raises(WebrlError, match="503"):
        alone.call(None, send)
    b.status = 200
    assert alone.call(None, send) == "b" and alone.stats()[b.url]["down"] is False


def test_all_servers_down_is_one_clear_error(stubs, monkeypatch):
    a, b = stubs
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    policy = make_policy(f"openai:m@{a.url},{b.url}")
    a.stop()
    b.stop()
    with pytest.raises(WebrlError) as err:
        policy.complete_text("hello", Sampling())
    message = str(err.value)
    assert f"every server failed ({a.url}, {b.url})" in message and "ConnectError" in message
    assert "sk-secret" not in message
    assert all(s["failures"] == 1 and s["in_flight"] == 0 for s in policy.pool.stats().values())


def test_a_request_error_is_not_failed_over(stubs):
    a, b = stubs
    a.status = 400
    policy = OpenAIPolicy("m", [a.url, b.url])
    with pytest.raises(WebrlError, match="400 Bad Request"):
        ask(policy, "1:0")
    assert b.requests == 0
    assert policy.pool.stats()[a.url] == {"served": 1, "failures": 0, "in_flight": 0, "down": False}


def test_the_spec_lists_servers():
    two = make_policy("openai:m@http://a:1,https://b:2/v1/")
    assert two.pool.urls == ["http://a:1", "https://b:2/v1"] and two.name == "openai:m@http://a:1,https://b:2/v1"
    assert make_policy("openai:m@http://a:1/v1/?chat").name == "openai:m@http://a:1/v1?chat"  # as before pools
    bad = ["http://a:1,", ",http://a:1", "a:1", "http://", "ftp://a", "http://a:1,http://a:1/", "http://a:1?x"]
    for urls in bad:
        with pytest.raises(UsageError, match="valid forms"):
            make_policy(f"openai:m@{urls}")
