"""BrowserEnv on the real embedded shop: dirty sites reset before an episode, the origin guard,
WebRL's limits, and per-step timings."""

from __future__ import annotations

import asyncio
from urllib.parse import quote

import httpx
import pytest
from env_support import with_page  # tests/env is on sys.path (no __init__.py)

from webrl.env.browser_env import AT_REST_JS, REST_WATCH_JS, SHORT_TIMER_MS, BrowserEnv, EnvOptions, Limits
from webrl.env.observation import observe
from webrl.tasks.model import Task


def task(**extra) -> Task:
    return Task.model_validate(
        {
            "task_id": 7,
            "sites": ["shopping"],
            "start_url": "__SHOPPING__",
            "storage_state": None,
            "intent": "Look around.",
            "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["socks"]}},
            **extra,
        }
    )


def run(backend, body, limits=Limits(), options=EnvOptions(), **env_settings):
    async def main():
        from playwright.async_api import async_playwright

        from webrl.browser import launch_chromium

        async with async_playwright() as p:
            browser = await launch_chromium(p)
            env = BrowserEnv(browser, backend, 0, limits=limits, options=options, **env_settings)
            try:
                return await body(env)
            finally:
                await env.shutdown()
                await browser.close()

    return asyncio.run(main())


def test_dirty_sites_are_reset_and_clean_ones_are_not(site_servers):
    backend = site_servers("shopping", "shopping_admin")
    backend.reset()
    httpx.get(backend.urls(0)["shopping"] + "/catalogsearch/result/", params={"q": "dirty"})
    assert backend.is_dirty("shopping", 0)

    async def body(env):
        _, first = await env.reset(task())
        _, second = await env.reset(task())
        return first, second

    first, second = run(backend, body)
    # The admin shares the shop's database, so its restore goes with it.
    assert first["reset_sites"] == ["shopping", "shopping_admin"] and not backend.is_dirty("shopping", 0)
    assert second["reset_sites"] == []  # clean: not reset again


@pytest.mark.slow  # several resets and sign-ins (~5 s)
def test_a_reset_that_takes_a_signed_in_site_along_signs_in_again(site_servers):
    """An admin task's reset restores the store database under the shop too and drops the shop's sessions: the
    next shop task must sign in afresh rather than reuse the dead session (it found itself signed out)."""
    backend = site_servers("shopping", "shopping_admin")
    backend.reset()
    shop_task = task(storage_state="./.auth/shopping_state.json")
    admin_task = task(
        sites=["shopping_admin"], start_url="__SHOPPING_ADMIN__", storage_state="./.auth/shopping_admin_state.json"
    )

    async def body(env):
        await env.reset(shop_task)
        signed_in = "Sign Out" in await env.page.inner_text("body")
        httpx.get(backend.urls(0)["shopping"] + "/catalogsearch/result/", params={"q": "dirty"})
        _, admin = await env.reset(admin_task)
        _, shop = await env.reset(shop_task)
        return signed_in, admin["reset_sites"], shop["reset_sites"], "Sign Out" in await env.page.inner_text("body")

    assert run(backend, body) == (True, ["shopping", "shopping_admin"], [], True)


LEAVE_TRACES_JS = """() => { document.cookie = 'trace=1; path=/'; localStorage.setItem('trace', '1');
                               sessionStorage.setItem('trace', '1'); }"""
READ_TRACES_JS = """() => [document.cookie.includes('trace=1'), localStorage.getItem('trace'),
                          sessionStorage.getItem('trace'), history.length]"""


def test_an_episode_inherits_nothing_from_the_one_before(site_servers):
    """Episodes share one tab (a new one costs a renderer start), so the reset must leave nothing behind: cookies,
    local and session storage, history, extra tabs; also on an origin the tab has left (session storage belongs
    to the tab)."""
    backend = site_servers("shopping", "shopping_admin")
    urls = backend.urls(0)
    both = task(sites=["shopping", "shopping_admin"])

    async def traces_after(moves):
        await env_box["env"].reset(both)
        env = env_box["env"]
        first_tab = env.page
        await env.page.evaluate(LEAVE_TRACES_JS)
        await env.page.goto(urls["shopping"] + "/customer/account/login/")
        await env.context.new_page()
        if moves:
            await env.page.goto(urls["shopping_admin"] + "/")
            await env.page.evaluate(LEAVE_TRACES_JS)
        await env.reset(both)
        traces = await env.page.evaluate(READ_TRACES_JS)
        return traces, len(env.context.pages), env.page is first_tab  # the same tab, cleaned

    env_box = {}

    async def body(env):
        env_box["env"] = env
        return await traces_after(moves=False), await traces_after(moves=True)

    # history: about:blank and the start page, as in a new tab
    assert run(backend, body) == (([False, None, None, 2], 1, True),) * 2


def test_only_the_task_sites_and_homepage_are_reachable(site_servers):
    backend = site_servers("shopping", "shopping_admin", "homepage")
    urls = backend.urls(0)

    async def body(env):
        await env.reset(task())
        # no-cors: an allowed cross-origin request resolves (opaque, status 0); a blocked one rejects.
        fetch = "url => fetch(url, {mode: 'no-cors'}).then(r => r.status, () => 'blocked')"
        targets = (urls["shopping"] + "/", urls["homepage"] + "/", urls["shopping_admin"] + "/")
        return [await env.page.evaluate(fetch, u) for u in targets], list(env.blocked)

    statuses, blocked = run(backend, body)
    admin = httpx.URL(urls["shopping_admin"])
    assert statuses == [200, 0, "blocked"]
    assert blocked == [f"{admin.host}:{admin.port}"]  # recorded for the trajectory (tests/env/test_sandbox.py: more)


def test_limits_and_timings(site_servers):
    backend = site_servers("shopping", "shopping_admin")

    async def body(env):
        await env.reset(task())
        results = [await env.step("I think I should look for socks.") for _ in range(3)]
        blocked = env.blocked
        await env.reset(task())
        repeats = [await env.step('do(action="Scroll Down")') for _ in range(3)]
        return results, repeats, blocked

    results, repeats, blocked = run(backend, body, Limits(max_steps=10, max_parse_failures=3, max_repeats=3))
    *_, (obs, reward, terminated, truncated, info) = results
    assert truncated and not terminated and reward == 0.0
    assert info["truncated_by"] == "3 consecutive unparseable responses"
    assert info["eval"].score == 0.0  # evaluated like any other ending
    assert results[0][4]["error"].startswith("unparseable response")
    *_, (_, _, _, truncated, info) = repeats
    assert truncated and info["truncated_by"] == "3 identical actions"
    assert {"act", "settle", "wait_rest", "observe", "total"} <= set(info["timings_ms"])
    assert blocked == []


def test_an_action_that_fails_before_any_input_skips_the_settle(site_servers):
    backend = site_servers("shopping", "shopping_admin")

    async def body(env):
        await env.reset(task())
        return await env.step('do(action="Click", element="99999")')

    obs, _, _, _, info = run(backend, body)
    assert info["error"].startswith("element 99999 is not on the page")
    assert not any(key.startswith("wait_") for key in info["timings_ms"])  # the page is as it was: no wait
    assert obs.text


# The DOM-quiet wait of _settle, timed in the page (free of round trips): `ago` ms after the action began.
QUIET_IN_PAGE = f"""async ([ago, change]) => {{
  if (change !== null) setTimeout(() => document.body.append("changed"), change);
  const start = performance.now();
  await ({AT_REST_JS})([30, 1000, 3000, ago]);
  return performance.now() - start;
}}"""


def test_the_dom_quiet_window_counts_from_the_last_change_or_the_action():
    async def body(page):
        await page.add_init_script(REST_WATCH_JS % SHORT_TIMER_MS)
        await page.goto("data:text/html,<p>a page</p>")
        await page.wait_for_timeout(100)  # parsed 100 ms ago: quiet since
        waits = {
            "quiet since the action began 50 ms ago": await page.evaluate(QUIET_IN_PAGE, [50, None]),
            "the action began 10 ms ago": await page.evaluate(QUIET_IN_PAGE, [10, None]),
            "a change 15 ms into the wait": await page.evaluate(QUIET_IN_PAGE, [0, 15]),
        }
        await observe(page)  # its data-label-id marks are not changes of the page
        waits["after an observation"] = await page.evaluate(QUIET_IN_PAGE, [50, None])
        await page.evaluate("() => { delete window.__webrl_dom_changed; }")
        waits["an unwatched document"] = await page.evaluate(QUIET_IN_PAGE, [50, None])
        return waits

    waits = with_page(body)
    assert waits["quiet since the action began 50 ms ago"] < 5
    assert 15 <= waits["the action began 10 ms ago"] < 200  # the window's rest: ~20 ms
    assert 40 <= waits["a change 15 ms into the wait"] < 300  # ~15 + 30 ms
    assert waits["after an observation"] < 5
    assert 25 <= waits["an unwatched document"] < 300  # a whole window from the call, as before


def test_the_env_observes_with_its_options(site_servers):
    backend = site_servers("shopping", "shopping_admin")

    async def body(env):
        seen, _ = await env.reset(task())
        return seen, await observe(env.page, escape=True, click_at="line"), await observe(env.page)

    seen, asked, default = run(backend, body, options=EnvOptions(escape_text=True, click_at="line"))
    assert seen.text == asked.text and seen.boxes == asked.boxes
    # webrl's first line boxes are not rounded; VAB's data-bbox is
    assert seen.boxes != default.boxes and all(float(v).is_integer() for box in default.boxes.values() for v in box)


MOTION_PAGE = """<style>
  #box { width: 10px; transition: width 400ms linear; }  #box.wide { width: 300px; }
  @keyframes grow { from { height: 1px; } to { height: 50px; } }
  .grow { animation: grow 300ms linear; }  .spin { animation: grow 1s linear infinite; }
</style><div id="box"></div><div id="other"></div><div id="spinner" class="spin"></div><div id="jq"></div>"""
# Starts one kind of motion (name) and waits for the page to be at rest; resolves to [ms waited, caps hit].
MOTION_JS = f"""async ([name, movingCap]) => {{
  const start = performance.now();
  if (name === "transition") document.getElementById("box").classList.add("wide");
  if (name === "css animation") document.getElementById("other").classList.add("grow");
  if (name === "web animation") document.getElementById("other").animate([{{opacity: 0}}, {{opacity: 1}}], 300);
  if (name === "jquery") jQuery("#jq").fadeOut(300);
  if (name === "longer than the cap") document.getElementById("other").animate([{{opacity: 0}}, {{opacity: 1}}], 5000);
  const capped = await ({AT_REST_JS})([30, 1000, movingCap, 1000]);
  return [performance.now() - start, capped];
}}"""


def test_the_page_is_observed_at_rest_not_mid_animation():
    """CSS transitions and animations, Web Animations and jQuery's animation queue (the real jQuery, as MiniWoB++
    pages load it) are waited for; an endless one (a spinner) is not; a long one only up to the cap, which is
    reported."""
    from webrl.sites.miniwob import html_dir

    jquery = html_dir() / "core" / "jquery-ui" / "external" / "jquery" / "jquery.js"

    async def body(page):
        await page.add_script_tag(path=str(jquery))
        waits = {}
        for name in ("nothing", "transition", "css animation", "web animation", "jquery", "longer than the cap"):
            waits[name] = await page.evaluate(MOTION_JS, [name, 600])
        return waits

    waits = with_page(body, html=MOTION_PAGE)
    assert waits["nothing"][0] < 100 and waits["nothing"][1] == []  # the spinner never holds the wait
    for name, least in (("transition", 380), ("css animation", 280), ("web animation", 280), ("jquery", 280)):
        assert least <= waits[name][0] < least + 600 and waits[name][1] == [], (name, waits[name])
    assert 590 <= waits["longer than the cap"][0] < 1500 and waits["longer than the cap"][1] == ["animation"]


TIMER_PAGE = """<button id="menu">menu</button><ul id="sub" hidden><li>an item</li></ul><script>
  (function tick() { setTimeout(tick, 50); })();  // the page's own clocks: a loop of timers and an interval
  setInterval(() => setTimeout(() => {}, 100), 50);
  const sub = document.getElementById("sub");
  document.getElementById("menu").addEventListener("click", (e) => {
    const delay = Number(e.detail) || 300, id = setTimeout(() => { sub.hidden = false; }, delay);
    if (delay === 1) clearTimeout(id);
  });
</script>"""
# Clicks the menu (detail: the timer it sets, 1 = set and cleared) or not, waits for rest: [ms waited, caps, shown].
CLICKED_JS = f"""async (detail) => {{
  const start = performance.now();
  if (detail !== null) document.getElementById("menu").dispatchEvent(new MouseEvent("click", {{detail}}));
  const capped = await ({AT_REST_JS})([30, 1000, 3000, 1000]);
  return [performance.now() - start, capped, !document.getElementById("sub").hidden];
}}"""


def test_what_a_page_does_a_moment_after_an_action_is_waited_for():
    """A submenu that opens 300 ms after a click (jQuery UI menus, autocompletes) is observed open: the short timers
    the page's handlers set are waited for, not its own loops of timers, long timers or cleared ones."""

    async def body(page):
        await page.add_init_script(REST_WATCH_JS % SHORT_TIMER_MS)
        await page.goto("data:text/html," + quote(TIMER_PAGE))
        await page.wait_for_timeout(200)
        waits = {
            "nothing": await page.evaluate(CLICKED_JS, None),
            "a cleared timer": await page.evaluate(CLICKED_JS, 1),
            "a long timer": await page.evaluate(CLICKED_JS, 5000),
        }
        waits["a 300 ms timer"] = await page.evaluate(CLICKED_JS, 300)
        return waits

    waits = with_page(body)
    for name in ("nothing", "a cleared timer", "a long timer"):
        assert waits[name][0] < 150 and waits[name][1:] == [[], False], (name, waits[name])
    assert 290 <= waits["a 300 ms timer"][0] < 1000 and waits["a 300 ms timer"][1:] == [[], True]
