"""The policies: spec parsing, the random baseline, the oracle's element lookup, and the OpenAI-compatible
client against a local stand-in server (an external model API cannot run here)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from webrl.env.actions import parse_action
from webrl.env.observation import Observation
from webrl.errors import UsageError, WebrlError
from webrl.policy.base import PolicyInput, Sampling
from webrl.policy.factory import make_policy, serving
from webrl.policy.oracle import OracleError, find_element
from webrl.policy.prompt import webrl_prompt
from webrl.tasks.model import Task
from webrl.tasks.script import before

TASK = Task.model_validate(
    {
        "task_id": 1,
        "sites": ["shopping"],
        "start_url": "__SHOPPING__",
        "intent": "Buy socks.",
        "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["x"]}},
        "cheat": ['do(action="Click", element="{Sign In}")', 'exit(message="done")'],
    }
)
HTML = (
    '<html> <a id="0" data-text="Sign In"> Sign In </a> <input id="1" type="text" '
    'placeholder="Search entire store here..."> </input> <button id="2" title="Search"> Search </button> </html>'
)
OBS = Observation(
    text=HTML,
    url="http://x/",
    title="t",
    ids=[0, 1, 2],
    boxes={0: (10, 10, 100, 20), 1: (10, 40, 300, 20), 2: (280, 40, 20, 20)},
)


@pytest.mark.parametrize("spec", ["gpt", "random:x", "openai:model", "oracle:1", "openai:@http://x"])
def test_bad_specs_list_the_valid_forms(spec):
    with pytest.raises(UsageError, match="valid forms"):
        make_policy(spec)


@pytest.mark.parametrize("spec", ["oracle", "random:1", "openai:model@http://127.0.0.1:1"])
def test_a_policy_without_a_server_of_its_own_starts_and_closes_as_a_no_op(spec):
    """serving() and the Ray workers start and close every policy, without asking whether it has a server."""
    policy = make_policy(spec)
    with serving(policy) as served:
        assert served is policy


def test_random_policy_acts_validly_and_is_seeded():
    first = [r.text for r in make_policy("random:7").act([PolicyInput(TASK, [], OBS)] * 30, Sampling())]
    again = [r.text for r in make_policy("random:7").act([PolicyInput(TASK, [], OBS)] * 30, Sampling())]
    assert first == again
    actions = [parse_action(t) for t in first]
    assert all(a.kind != "none" for a in actions)
    assert {a.element for a in actions if a.element is not None} <= {0, 1, 2}


def test_oracle_finds_elements_by_what_a_person_sees():
    assert find_element("Sign In", OBS) == 0
    assert find_element("placeholder=Search entire store here...", OBS) == 1
    assert find_element("title=Search", OBS) == 2
    # by position: the smallest box that holds the point (the button lies on the search field)
    assert find_element("@60,20", OBS) == 0 and find_element("@100,50", OBS) == 1 and find_element("@290,50", OBS) == 2
    # by its neighbour: the labelled element printed just before (a product's photo, an <img> without text)
    assert find_element(before("title=Search"), OBS) == 1 and find_element(before("before(title=Search)"), OBS) == 0
    with pytest.raises(OracleError, match="no labelled element before"):
        find_element(before("Sign In"), OBS)
    oracle = make_policy("oracle")
    assert oracle.act([PolicyInput(TASK, [], OBS)], Sampling())[0].text == 'do(action="Click", element="0")'
    assert oracle.act([PolicyInput(TASK, ["x"], OBS)], Sampling())[0].text == 'exit(message="done")'
    missing = Task.model_validate({**TASK.model_dump(), "cheat": ['do(action="Click", element="{Nope}")']})
    reply = oracle.act([PolicyInput(missing, [], OBS)], Sampling())[0].text
    assert parse_action(reply).kind == "none" and "Nope" in reply  # a counted no-op, not a crash


def test_oracle_reads_the_compact_observation():
    # no spaces beside tags, and a data-text equal to the text printed as the text only
    compact = Observation(
        text='<html><body><a id="0">Sign In</a><div data-text="Hat,more"><button id="1" title="Add">Hat</button>'
        '</div><span id="2">Red Hat</span></body></html>',
        url="http://x",
        title="",
        ids=[0, 1, 2],
        boxes={},
        kind="compact",
    )
    assert find_element("Sign In", compact) == 0 and find_element("Red Hat", compact) == 2
    assert find_element("data-text=Hat", compact) == 1 and find_element("title=Add", compact) == 1
    assert find_element(before("data-text=Red Hat"), compact) == 1


def test_oracle_reads_raw_values_and_text_a_page_without_charset_shows():
    raw = (
        '<html> <button id="0" title="a "b"" data-text="Say "hi" <now>"> Say "hi" <now> </button>'
        ' <input id="1" placeholder="x > y" data-bbox="1,2,3,4"> </input> <b id="2"> CafÃ© </b>'
        ' <i id="3" title="&quot;q&quot;"> R&D </i> </html>'
    )
    obs = Observation(text=raw, url="http://x/", title="t", ids=[0, 1, 2, 3], boxes={})
    assert find_element('Say "hi" <now>', obs) == 0 and find_element('title=a "b"', obs) == 0
    assert find_element("placeholder=x > y", obs) == 1 and find_element("Café", obs) == 2
    assert find_element('title="q"', obs) == 3 and find_element("R&D", obs) == 3  # escaped (--escape-text) or not


@pytest.fixture
def model_server():
    """A stand-in for an OpenAI-compatible server: records requests, answers with a fixed action."""
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            seen.append((self.path, dict(self.headers), body))
            if body["model"] == "down":
                self.send_response(503)
                self.end_headers()
                return
            action = 'do(action="Click", element="0")'
            choice = {"message": {"content": action}} if self.path.endswith("chat/completions") else {"text": action}
            payload = json.dumps({"choices": [choice], "usage": {"completion_tokens": 9}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1", seen
    server.shutdown()


def test_openai_policy_completion_and_chat(model_server, monkeypatch):
    url, seen = model_server
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    completion = make_policy(f"openai:webrl-8b@{url}")
    [reply] = completion.act([PolicyInput(TASK, [], OBS)], Sampling())
    path, headers, body = seen[-1]
    assert path == "/v1/completions" and body["prompt"] == webrl_prompt("Buy socks.", [], HTML)
    assert body["temperature"] == 0.0 and body["stop"] == ["<|eot_id|>"]
    assert headers["Authorization"] == "Bearer sk-secret-123"
    assert reply.text == 'do(action="Click", element="0")' and reply.meta["usage"]["completion_tokens"] == 9

    chat = make_policy(f"openai:gpt-4o@{url}?chat")
    chat.act([PolicyInput(TASK, ["exit(message=1)"], OBS)], Sampling())
    path, _, body = seen[-1]
    assert path == "/v1/chat/completions" and body["messages"][0]["role"] == "system"

    with pytest.raises(WebrlError) as err:
        make_policy(f"openai:down@{url}").act([PolicyInput(TASK, [], OBS)], Sampling())
    assert "503" in str(err.value) and "sk-secret" not in str(err.value)
