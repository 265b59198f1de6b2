"""The sandbox against a hostile agent: script on the site's page (as a `goto [javascript:...]` or a link in user
content would run) tries every way out (fetch, WebSocket, WebRTC, WebTransport, beacons, frames, popups, another
site of the instance); `goto` and links leave for javascript:, data:, file:, other origins; a page the agent wrote
tries to satisfy the evaluators; a site is reset under an episode. Loopback listeners stand in for the forbidden
targets and count what reaches them: nothing may. No address off this machine is ever contacted."""

from __future__ import annotations

import asyncio
import socket
import threading
from contextlib import contextmanager

import httpx
import pytest
from test_browser_env import run, task  # tests/env is on sys.path (no __init__.py)

from webrl.env.browser_env import BrowserEnv
from webrl.errors import SitesChanged


class Listeners:
    """A TCP and a UDP socket on loopback that count the connections and packets that reach them."""

    def __init__(self):
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.tcp_port, self.udp_port = self.tcp.getsockname()[1], self.udp.getsockname()[1]
        self.connections = self.packets = 0
        self._threads = [
            threading.Thread(target=self._accept, daemon=True),
            threading.Thread(target=self._receive, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def _receive(self):
        while True:
            try:
                self.udp.recv(2048)
            except OSError:
                return
            self.packets += 1

    def close(self):
        for sock in (self.tcp, self.udp):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


@contextmanager
def listeners():
    found = Listeners()
    try:
        yield found
    finally:
        found.close()


# Every way out a page's script has, at once; resolves to what the page saw of each.
HOSTILE_JS = """async ([tcp, udp, other]) => {
  const seen = {};
  const to = (p) => `http://127.0.0.1:${p}/`;
  const settle = (name, promise) => promise.then((r) => { seen[name] = r; }, () => { seen[name] = "blocked"; });
  const waits = [
    settle("fetch", fetch(to(tcp), {mode: "no-cors"}).then(() => "reached")),
    settle("other site", fetch(other, {mode: "no-cors"}).then(() => "reached")),
    settle("websocket", new Promise((ok, fail) => {
      const ws = new WebSocket(`ws://127.0.0.1:${tcp}/`);
      ws.onopen = () => ok("open"); ws.onerror = () => fail();
    })),
    settle("webtransport", typeof WebTransport === "undefined" ? Promise.resolve("absent")
      : new WebTransport(`https://127.0.0.1:${udp}/`).ready.then(() => "open")),
  ];
  navigator.sendBeacon(to(tcp), "x");
  const frame = document.createElement("iframe"); frame.src = to(tcp); document.body.append(frame);
  const image = new Image(); image.src = to(tcp) + "pixel.png";
  window.open(to(tcp));
  const rtc = new RTCPeerConnection({iceServers: [{urls: `stun:127.0.0.1:${udp}`},
    {urls: `turn:127.0.0.1:${tcp}?transport=tcp`, username: "u", credential: "p"}]});
  rtc.createDataChannel("out");
  seen.candidates = [];
  rtc.onicecandidate = (e) => { if (e.candidate) seen.candidates.push(e.candidate.candidate); };
  await rtc.setLocalDescription(await rtc.createOffer());
  await Promise.all(waits);
  await new Promise((done) => setTimeout(done, 1500));  // STUN, TURN and the frame had their time
  return seen;
}"""


def test_a_hostile_page_reaches_nothing_but_the_task_sites(site_servers):
    backend = site_servers("shopping", "shopping_admin", "homepage")
    urls = backend.urls(0)

    with listeners() as out:

        async def body(env):
            await env.reset(task())
            shop = await env.page.evaluate("u => fetch(u).then(r => r.status)", urls["shopping"] + "/")
            seen = await env.page.evaluate(HOSTILE_JS, [out.tcp_port, out.udp_port, urls["shopping_admin"] + "/"])
            return shop, seen, list(env.blocked)

        shop, seen, blocked = run(backend, body)
        connections, packets = out.connections, out.packets
        tcp = f"127.0.0.1:{out.tcp_port}"
    assert shop == 200  # the task's own site answers through the guard
    assert seen["fetch"] == seen["other site"] == seen["websocket"] == "blocked"
    assert seen["webtransport"] in ("blocked", "absent")
    assert not [c for c in seen["candidates"] if " udp " in c]  # no UDP candidate: WebRTC has no way out
    assert connections == 0 and packets == 0
    admin = httpx.URL(urls["shopping_admin"])
    assert tcp in blocked and f"{admin.host}:{admin.port}" in blocked  # recorded in the episode


def test_the_guard_holds_between_episodes_and_after_the_last_step(site_servers):
    """The evaluation and the time until the next episode are no gap: a script left running on the last page keeps
    knocking, and a connection the last episode's pages kept alive does not serve the next episode's page."""
    backend = site_servers("shopping", "shopping_admin", "homepage")
    urls = backend.urls(0)
    admin_only = task(sites=["shopping_admin"], start_url="__SHOPPING_ADMIN__")
    knock = "p => { setInterval(() => fetch(`http://127.0.0.1:${p}/`, {mode: 'no-cors'}).catch(() => {}), 10); }"
    fetch = "u => fetch(u, {mode: 'no-cors'}).then(() => 'reached', () => 'blocked')"

    with listeners() as out:

        async def body(env):
            await env.reset(task())
            await env.page.evaluate(fetch, urls["shopping"] + "/")  # a kept-alive connection to the shop
            await env.page.evaluate(knock, out.tcp_port)
            *_, info = await env.step('exit(message="socks")')  # evaluated: the harness may look anywhere
            await asyncio.sleep(1)
            await env.reset(admin_only)
            return info["eval"].score, await env.page.evaluate(fetch, urls["shopping"] + "/")

        score, shop = run(backend, body)
        connections = out.connections
    assert score == 1.0 and shop == "blocked" and connections == 0


@pytest.mark.parametrize(
    "url",
    [
        "javascript:window.name='ran'",
        "data:text/html,<script>window.name='ran'</script>",
        "file:///etc/hostname",
        "view-source:{shop}/",
        "blob:http://127.0.0.1:{tcp}/0a0a0a0a-0000-4000-8000-000000000000",
        "http://127.0.0.1:{tcp}/",
        "about:blank",
    ],
)
def test_goto_off_the_sites_is_refused_before_the_browser_sees_it(site_servers, url):
    backend = site_servers("shopping", "shopping_admin")
    shop = backend.urls(0)["shopping"]

    with listeners() as out:
        target = url.format(shop=shop, tcp=out.tcp_port)

        async def body(env):
            await env.reset(task())
            start = env.page.url
            *_, info = await env.step(f"```goto [{target}]```")
            return info["error"], env.page.url == start, await env.page.evaluate("window.name"), list(env.blocked)

        error, stayed, name, blocked = run(backend, body, action_space="webarena")
        connections = out.connections
    assert error.startswith("goto to") and "refused" in error
    assert stayed and name != "ran" and connections == 0 and blocked == [target]


LINKS_JS = """(tcp) => {
  for (const [text, href] of [["script link", "javascript:window.name='ran'"], ["data link", "data:text/html,x"],
                              ["away link", `http://127.0.0.1:${tcp}/`]]) {
    const a = document.createElement("a"); a.href = href; a.textContent = text; a.style.fontSize = "40px";
    document.body.prepend(a, document.createElement("br"));
  }
  const form = document.createElement("form");
  form.action = "javascript:window.name='ran'";
  form.innerHTML = '<input name="q" placeholder="form field" style="font-size: 40px">';
  document.body.prepend(form);
}"""
ACTIONS = {
    "webrl": {
        "click": 'do(action="Click", element="{}")',
        "enter": 'do(action="Search", element="{}", argument="x")',
        "press": 'do(action="Press Enter")',
        "nothing": "Nothing to do.",
    },
    "webarena": {
        "click": "```click [{}]```",
        "enter": "```type [{}] [x] [1]```",
        "press": "```press [Enter]```",
        "nothing": "```hover [99999]```",
    },
}


@pytest.mark.parametrize(("space", "observation"), [("webrl", "webrl"), ("webarena", "webrl"), ("webarena", "axtree")])
def test_a_link_or_form_off_the_sites_is_refused_in_both_action_spaces(site_servers, space, observation):
    """Links and forms as user content could carry them (the embedded sites' Markdown refuses unsafe links; a real
    site may not): a click on the link, typing into the form with Enter, and Enter on a focused link are refused,
    not made, wherever the element is observed."""
    backend = site_servers("shopping", "shopping_admin")
    actions = ACTIONS[space]

    with listeners() as out:

        async def body(env):
            await env.reset(task())
            await env.page.evaluate(LINKS_JS, out.tcp_port)
            obs, *_ = await env.step(actions["nothing"])  # a step that changes nothing: the links are observed
            errors = []
            for text, how in (
                ("script link", "click"),
                ("data link", "click"),
                ("away link", "click"),
                ("form field", "enter"),
            ):
                [element] = [i for i, line in _labelled(obs.text) if text in line]
                *_, info = await env.step(actions[how].format(element))
                errors.append(info["error"])
            await env.page.focus("a[href^=javascript]")  # as Tab presses would
            *_, info = await env.step(actions["press"])
            errors.append(info["error"])
            return errors, await env.page.evaluate("window.name")

        errors, name = run(backend, body, action_space=space, observation=observation)
        connections = out.connections
    assert all(e and "refused" in e for e in errors), errors
    assert name != "ran" and connections == 0


def _labelled(text: str):
    """(element id, line) for each line of a simplified-HTML observation that carries an id."""
    import re

    for line in text.splitlines():
        if found := re.search(r"id=['\"](\d+)['\"]|\[(\d+)\]", line):
            yield found.group(1) or found.group(2), line


@pytest.mark.slow  # several resets and sign-ins (~5 s)
def test_an_outside_reset_signs_in_again_or_fails_the_episode(site_servers):
    """`webrl reset --force` between two episodes: the next one signs in again (its cached session died with the
    reset) instead of starting signed out. During an episode: the episode is not scored (an environment fault)."""
    backend = site_servers("shopping", "shopping_admin")
    shop_task = task(storage_state="./.auth/shopping_state.json")

    async def body(env: BrowserEnv):
        await env.reset(shop_task)
        await asyncio.to_thread(backend.reset, ["shopping"])  # as `webrl reset --force` from another shell
        await env.reset(shop_task)
        signed_in = "Sign Out" in await env.page.inner_text("body")
        await asyncio.to_thread(backend.reset, ["shopping"])
        try:
            await env.step('exit(message="socks")')
        except SitesChanged as err:
            return signed_in, str(err)
        return signed_in, None

    signed_in, error = run(backend, body)
    assert signed_in and error is not None and "was reset during its episode" in error
