"""The browser environment: one episode of one task in a browser tab, Gymnasium style.

    env = BrowserEnv(browser, backend, instance=0)
    obs, info = await env.reset(task)
    obs, reward, terminated, truncated, info = await env.step(response_text)
    await env.close()       # the episode (the next reset also closes it)
    await env.shutdown()    # the env: its tab and browser context

Limits follow WebRL's evaluation scripts: 30 steps, 5 consecutive unparseable responses, 5 identical
actions in a row. There are no fixed sleeps: after each action the env waits until the page is at rest (load,
then network quiet, DOM quiet and no animation or short timer pending, each capped) and records how long each part
took.
The agent reaches only the task's sites and the homepage: the browser context's every connection goes through
webrl's proxy (webrl.env.guard), and an action that would load anything else (a `goto`, a link or form at a click
point, Enter on a focused one) is refused before the browser sees it (webrl.env.actions); what was blocked is
recorded.
Every episode starts in the same tab, cleaned of everything earlier episodes left (see `_clean_tab`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypedDict
from urllib.parse import urlsplit

from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from webrl.env.actions import Action, ActionError, execute, parse_action
from webrl.env.auth import AuthCache
from webrl.env.guard import OriginGuard
from webrl.env.network import NetworkRecorder
from webrl.env.observation import Observation, observe
from webrl.errors import SitesChanged
from webrl.evaluators.judge import Judge
from webrl.evaluators.result import EvalResult
from webrl.evaluators.router import evaluate
from webrl.sites.base import SiteBackend
from webrl.tasks.family import family_of
from webrl.tasks.load import PLACEHOLDER, substitute
from webrl.tasks.model import Task
from webrl.timing import timed

VIEWPORT = {"width": 1280, "height": 720}
LOAD_CAP_MS = 5000
NETWORK_QUIET_MS, NETWORK_QUIET_CAP_MS = 30, 500  # (Playwright's "networkidle" always costs 500 ms)
DOM_QUIET_MS, DOM_QUIET_CAP_MS = 30, 1000
MOVING_CAP_MS = 3000  # animations and short timers: VAB's fixed sleep after every action is 3 s
SHORT_TIMER_MS = 1000  # a page's timers up to this long are part of what an action does (REST_WATCH_JS)
# What a new episode must not inherit from an earlier one on an origin (cookies are cleared for all at once);
# Chromium's local_storage covers the tab's session storage too (tests/env/test_browser_env.py checks it).
CLEARED_STORAGE = "local_storage,indexeddb,websql,cache_storage,service_workers,file_systems,shared_storage"

# Every document of the tab records when its DOM last changed (an init script, so a new document is watched from its
# first node on); the marking's own `data-label-id` writes do not count. Nothing is written into the DOM. It also
# keeps the short timers (up to SHORT_TIMER_MS) that the page's event handlers and scripts set and that have not
# fired: what a page does a moment after an action (a submenu that opens 300 ms after its item is hovered, an
# autocomplete that searches 300 ms after the last key). Timers set by timer callbacks are not kept: a page's own
# polling or animation loop would never let it rest.
REST_WATCH_JS = """((shortTimer) => {
  const clock = () => performance.timeOrigin + performance.now();
  const own = (r) => r.type === "attributes" && r.attributeName === "data-label-id";
  window.__webrl_dom_changed = clock();
  new MutationObserver((records) => { if (!records.every(own)) window.__webrl_dom_changed = clock(); })
    .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const pending = new Set(), setTimer = window.setTimeout, clearTimer = window.clearTimeout;
  const setRepeat = window.setInterval;
  let inTimer = 0;
  const marked = (handler, done) => function (...args) {
    done?.();
    inTimer++;
    try { return handler.apply(this, args); } finally { inTimer--; }
  };
  window.setTimeout = function (handler, delay, ...args) {
    if (typeof handler !== "function") return setTimer.call(window, handler, delay, ...args);
    const kept = !inTimer && !(Number(delay) > shortTimer);
    const id = setTimer.call(window, marked(handler, kept ? () => pending.delete(id) : null), delay, ...args);
    if (kept) pending.add(id);
    return id;
  };
  window.setInterval = function (handler, ...rest) {
    return setRepeat.call(window, typeof handler === "function" ? marked(handler) : handler, ...rest);
  };
  window.clearTimeout = function (id) { pending.delete(id); return clearTimer.call(window, id); };
  window.__webrl_rest = {pending, setTimer};
})(%d);"""
# Resolves once the page is at rest: the DOM has had no change for `quiet` ms, counted from the later of its last
# change and the action's start (`ago` ms before this call), or `dom_cap` ms have passed; and nothing is moving or
# about to (a CSS transition or animation or a Web Animation of finite length, jQuery's animation queue, a short
# timer of REST_WATCH_JS's), or `moving_cap` ms have passed. A document that is not watched (its init script did not
# run) counts its DOM from this call, as a MutationObserver started here would. Resolves to the names of the caps
# that were hit.
AT_REST_JS = """([quiet, domCap, movingCap, ago]) => new Promise((resolve) => {
  const clock = () => performance.timeOrigin + performance.now();
  const start = clock();
  const watched = typeof window.__webrl_dom_changed === "number";
  const rest = window.__webrl_rest, wait = rest?.setTimer ?? setTimeout;
  const finite = (a) => a.playState === "running" && a.effect !== null
    && Number.isFinite(a.effect.getComputedTiming().endTime);
  const moving = () => document.getAnimations().some(finite) || (window.jQuery?.timers?.length ?? 0) > 0
    || (rest?.pending.size ?? 0) > 0;
  const check = () => {
    const now = clock(), elapsed = now - start;
    const domLeft = (watched ? Math.max(window.__webrl_dom_changed, start - ago) : start) + quiet - now;
    const animating = moving();
    const domDone = domLeft <= 0 || elapsed >= domCap, movingDone = !animating || elapsed >= movingCap;
    if (domDone && movingDone) {
      resolve([...(domLeft > 0 ? ["dom"] : []), ...(animating ? ["animation"] : [])]);
    } else {
      wait(check, movingDone ? Math.min(domLeft, domCap - elapsed) : Math.min(20, movingCap - elapsed));
    }
  };
  check();
})"""


@dataclass(frozen=True)
class EnvOptions:
    """Where the env departs from VAB's WebRL observation and clicks, on request; the defaults are VAB's."""

    escape_text: bool = False  # print ", <, > in the simplified HTML as &quot; &lt; &gt; (VAB prints them raw)
    click_at: Literal["box", "line"] = "box"  # "box": VAB's click points, "line": webrl's (webrl.env.actions)


@dataclass(frozen=True)
class Limits:
    max_steps: int = 30
    max_parse_failures: int = 5
    max_repeats: int = 5


@dataclass
class TrajectoryStep:
    """One step of a trajectory, as stored in the run's JSONL."""

    index: int
    url: str
    response: str
    action: dict
    error: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    capped: list[str] = field(default_factory=list)  # the waits for rest that hit their cap ("load", "dom", ...)


class ResetInfo(TypedDict):
    reset_sites: list[str]  # the sites reset before the episode
    reset_ms: float
    timings_ms: dict[str, float]  # close, reset, sign_in, context, start_page, episode_start, observe
    skipped_tabs: list[str]  # start tabs on a site this backend does not run (left out, the task goes on)


class StepInfo(TypedDict):
    error: str | None  # why the action failed (unparseable, refused, element missing, ...)
    timings_ms: dict[str, float]
    eval: EvalResult | None  # the evaluation, on the episode's last step
    truncated_by: str | None  # the limit that ended an episode the agent did not end


class StepResult(NamedTuple):
    observation: Observation
    reward: float  # the evaluation's score on the last step, 0 before
    terminated: bool  # the agent answered, or the page ended the episode (MiniWoB++)
    truncated: bool  # a limit ended it
    info: StepInfo


class BrowserEnv:
    def __init__(
        self,
        browser: Browser,
        backend: SiteBackend,
        instance: int = 0,
        *,
        observation: str = "webrl",
        action_space: str = "webrl",
        limits: Limits = Limits(),
        mode: str = "webarena",
        judge: Judge | None = None,
        family_options: dict[str, Any] | None = None,
        options: EnvOptions = EnvOptions(),
        record_network: bool = False,
    ):
        self.browser, self.backend, self.instance = browser, backend, instance
        self.observation_kind, self.action_space, self.limits = observation, action_space, limits
        self.options = options
        # family_options: the run's values of the task families' settings (TaskFamily.options; unset: defaults)
        self.mode, self.judge, self.family_options = mode, judge, family_options or {}
        # record_network: every episode's network trace as HAR (`trace`, which a task family's mode may judge)
        self.record_network = record_network
        self.network = NetworkRecorder()
        self.trace: dict | None = None
        self.auth = AuthCache(browser, backend, instance)
        self.context = self.page = self.task = None
        self.tab = self._cdp = None  # the tab every episode starts in (see _clean_tab)
        self.guard = OriginGuard()  # the proxy of the tab's context: what the page may connect to
        self._visited: set[str] = set()  # the origins the agent could reach since the tab was last cleaned
        self._resets_at_start: dict = {}  # when the episode's sites were last reset, as its reset left them
        # the HTTP status each page's document answered with (the guard judges only a 2xx last page), from the
        # browser's events: nothing a page's script does changes it
        self._document_status: dict = {}

    # -- episode ------------------------------------------------------------------------------

    async def reset(self, task: Task) -> tuple[Observation, ResetInfo]:
        """A fresh episode of `task`; the info holds the sites reset and where the reset's time went
        (`timings_ms`: close, reset, sign_in, context, start_page, episode_start, observe)."""
        timings: dict[str, float] = {}
        with timed(timings, "close"):
            await self.close()
        # In a worker thread: a reset can take seconds (a Docker container is recreated), and the other
        # --parallel workers share this event loop.
        urls, reset, reset_ms = await asyncio.to_thread(self._reset_sites, task)
        timings["reset"] = round(reset_ms, 1)
        self._resets_at_start = await asyncio.to_thread(self._last_resets, task)
        self.task = substitute(task, urls)
        self.family = family_of(self.task)  # how its episodes start and end
        # Tasks that need an account name a storage state (WebArena's convention); map tasks have none.
        login = [s for s in self.task.sites if s in urls] if self.task.storage_state else []
        with timed(timings, "sign_in"):
            storage = await self.auth.storage_state(login, self._resets_at_start)  # again after any reset
        with timed(timings, "context"):
            restart = await self._shows_start_page()
            await self._clean_tab(storage["cookies"], keep_page=restart)
            allowed = [u for site, u in urls.items() if site in self.task.sites or site == "homepage"]
            self.guard.allow(allowed)
            self.blocked = self.guard.blocked = []  # what was refused this episode: by the proxy, or a navigation
            self.trace = None
            self._document_status.clear()
            if self.record_network:
                self.network.start()  # from the start page's load on: every request the episode made
            self._visited |= {_origin(u) for u in allowed}  # the agent reaches no other origin
        # A further start tab on a site the backend does not run (Wikipedia, which 23 WebArena-Verified tasks open
        # beside the map or GitLab) is left out and recorded: the agent works without it, as its score will show.
        tabs = [] if restart else self.task.start_urls
        skipped = [url for url in tabs[1:] if PLACEHOLDER.match(url)]
        with timed(timings, "start_page"):
            self.page = self.tab  # the agent starts on the first start URL's page
            for i, url in enumerate(url for url in tabs if url not in skipped):
                page = self.tab if i == 0 else await self.context.new_page()
                loading = time.perf_counter()
                await page.goto(url)
                if i == 0:
                    await self._settle(page, loading)
        with timed(timings, "episode_start"):
            starting = time.perf_counter()
            if await self.family.start(self.page, self.task, restart, self.family_options):
                await self._settle(self.page, starting)
        self.steps: list[TrajectoryStep] = []
        self.history: list[str] = []
        self.answer: str | None = None
        self.page_ended = False  # the page ended the episode (MiniWoB++)
        self._parse_failures = 0
        with timed(timings, "observe"):
            self.obs = await self._observe()
        return self.obs, ResetInfo(
            reset_sites=reset, reset_ms=round(reset_ms, 1), timings_ms=timings, skipped_tabs=skipped
        )

    async def step(self, text: str) -> StepResult:
        """Apply one raw model response."""
        timings: dict[str, float] = {}
        start = time.perf_counter()  # the settle waits for what the action began
        with timed(timings, "total"):
            with timed(timings, "act"):
                action = parse_action(text, self.action_space)
                error, untouched, capped = None, action.kind in ("exit", "stop", "none"), []
                if action.kind == "none":
                    self._parse_failures += 1
                    error = f"unparseable response: {action.error}"
                else:
                    self._parse_failures = 0
                    if action.kind in ("exit", "stop"):
                        self.answer = action.argument or ""
                    else:
                        try:
                            # Tab actions (webarena space) return the page that is now current.
                            cdp = self._cdp if self.page is self.tab else None  # the tab's session (typing asks it)
                            self.page = (
                                await execute(action, self.page, self.obs, self.options.click_at, cdp, self._may_visit)
                                or self.page
                            )
                        except ActionError as err:
                            error, untouched = str(err), err.untouched
            with timed(timings, "settle"):
                if not untouched:  # an answer, an unparseable response or a failed action before any input
                    capped = await self._settle(self.page, start, timings)
            self.steps.append(
                TrajectoryStep(len(self.steps), self.page.url, text, _action_dict(action), error, timings, capped)
            )
            self.history.append(text)

            # A page may end its episode itself (MiniWoB++: a right or wrong submit): the agent's last step.
            self.page_ended = await self.family.ended(self.page)
            terminated = self.answer is not None or self.page_ended
            truncated = not terminated and self._limit_reached()
            with timed(timings, "observe"):
                self.obs = obs = await self._observe()
        reward, result = 0.0, None
        if terminated or truncated:
            with timed(timings, "evaluate"):
                result = await self.evaluate_episode()
            reward = result.score or 0.0
        info = StepInfo(error=error, timings_ms=timings, eval=result, truncated_by=self._why_truncated())
        return StepResult(obs, reward, terminated, truncated, info)

    async def _observe(self) -> Observation:
        return await observe(
            self.page, self.observation_kind, escape=self.options.escape_text, click_at=self.options.click_at
        )

    async def evaluate_episode(self) -> EvalResult:
        if await asyncio.to_thread(self._last_resets, self.task) != self._resets_at_start:
            raise SitesChanged(
                f"a site of task {self.task.task_id} was reset during its episode (webrl reset --force?)"
            )
        if self.record_network:  # the agent's trace ends here: the evaluators' own requests are not in it
            self.trace = await self.network.har()
            self.network.stop()
        urls = self.backend.urls(self.instance)
        self.guard.allow(urls.values())  # the evaluator may open any site of the instance (never anything else)
        answer = self.answer if self.answer is not None else ""
        return await evaluate(
            self.task,
            answer,
            self.page,
            mode=self.mode,
            judge=self.judge,
            urls=urls,
            trace=self.trace["log"]["entries"] if self.trace is not None else None,
            options=self.family_options,
            status=self._document_status.get(self.page),
        )

    def _may_visit(self, url: str) -> bool:
        """Whether the agent may load `url`: an http(s) page of an origin the guard admits; a refusal is recorded."""
        if self.guard.admits(url):
            return True
        self.blocked.append(url[:200])
        return False

    async def _shows_start_page(self) -> bool:
        """Whether the episode can start on the page the tab shows, where its family allows it (MiniWoB++): the
        previous episode's page of the same start URL, with a new tab's history (about:blank, then the page). The
        family's start then gives the same problem as a fresh load (checked by the utterance, and in tests/env by
        the observation) without the load."""
        if (
            not self.family.reuses_page(self.task)
            or not self._tab_alive()
            or self.tab.url != self.task.start_urls[0]
            or len(self.context.pages) != 1
        ):
            return False
        history = await self._cdp.send("Page.getNavigationHistory")
        return [e["url"] for e in history["entries"]] == ["about:blank", self.tab.url] and history["currentIndex"] == 1

    def _reset_sites(self, task: Task) -> tuple[dict[str, str], list[str], float]:
        """The site URLs of this instance, and the sites reset: the task's dirty ones (clean ones are not) and any
        that went with them (a site sharing their database or their container), which lost their sessions too."""
        urls = self.backend.urls(self.instance)
        start = time.perf_counter()
        dirty = [s for s in task.sites if s in urls and self.backend.is_dirty(s, self.instance, task.writes)]
        reset = sorted({r.site for r in self.backend.reset(dirty, self.instance)}) if dirty else []
        return urls, reset, (time.perf_counter() - start) * 1000

    def _last_resets(self, task: Task) -> dict:
        """When each of the task's sites on this instance was last reset: a change during the episode means
        somebody else reset it."""
        return {site: when for site, when in self.backend.last_resets(self.instance).items() if site in task.sites}

    async def close(self) -> None:
        """End the episode; its tab stays open for the next one."""
        self.page = None

    async def shutdown(self) -> None:
        """Close the tab and its context (a later reset opens new ones)."""
        context = self.context
        self.context = self.tab = self.page = self._cdp = None
        if context is not None:
            await context.close()
        await self.guard.close()

    def _tab_alive(self) -> bool:
        return (
            self.tab is not None
            and not self.tab.is_closed()
            and self.context.browser is self.browser
            and self.browser.is_connected()
        )

    async def _clean_tab(self, cookies: list[dict], keep_page: bool = False) -> None:
        """Give the episode a tab with nothing of any earlier episode: no other tabs, no cookies but the sign-in's,
        no local or session storage, IndexedDB or caches on the origins the agent could reach, and no history. One
        tab serves episode after episode because a new one costs 150-300 ms of CPU on 2 cores (a renderer starts)
        against ~130 ms for a navigation in a live one; the HTTP cache is kept. `keep_page`: the page stays (a
        page the next episode starts on, see _shows_start_page)."""
        if not self._tab_alive():
            await self._open_tab()
        else:
            for other in self.context.pages:
                if other is not self.tab:
                    await other.close()
            self.guard.allow([])  # nothing until the new episode's sites, while the last page still runs
            if not keep_page:
                # History as a new tab's: about:blank, then the start page (Go Backward leads to about:blank, not to
                # an earlier episode); leaving the last page also stops its scripts before its storage is cleared.
                await self.tab.goto("about:blank")
                await self._cdp.send("Page.resetNavigationHistory")
            await asyncio.gather(
                self.context.clear_cookies(),
                *(
                    self._cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": CLEARED_STORAGE})
                    for origin in self._visited
                ),
            )
        self._visited = set()
        if cookies:
            await self.context.add_cookies(cookies)
        self._inflight, self._last_network = 0, time.perf_counter()

    async def _open_tab(self) -> None:
        await self.shutdown()
        proxy = await self.guard.start()
        self.context = await self.browser.new_context(viewport=VIEWPORT, proxy={"server": proxy})
        await self.context.add_init_script(REST_WATCH_JS % SHORT_TIMER_MS)
        self.network.attach(self.context)
        self.context.on("request", lambda _: self._count_request(+1))
        self.context.on("requestfinished", lambda _: self._count_request(-1))
        self.context.on("requestfailed", lambda _: self._count_request(-1))
        self.context.on("response", self._document_response)
        self.tab = await self.context.new_page()
        self._cdp = await self.context.new_cdp_session(self.tab)

    # -- limits, waiting, guarding -----------------------------------------------------------------

    def _limit_reached(self) -> bool:
        return self._why_truncated() is not None

    def _why_truncated(self) -> str | None:
        if self.answer is not None or self.page_ended:
            return None
        if len(self.steps) >= self.limits.max_steps:
            return f"max steps ({self.limits.max_steps})"
        if self._parse_failures >= self.limits.max_parse_failures:
            return f"{self.limits.max_parse_failures} consecutive unparseable responses"
        last = [s.action.get("text") for s in self.steps[-self.limits.max_repeats :]]
        if len(last) == self.limits.max_repeats and last[0] and len(set(last)) == 1:
            return f"{self.limits.max_repeats} identical actions"
        return None

    async def _settle(self, page, since: float, timings: dict[str, float] | None = None) -> list[str]:
        """Wait until the page is at rest after what began at `since` (perf_counter: the action, the start page's
        load): loaded, then network quiet, DOM quiet and no animation running (watched together, each capped), each
        quiet window counted from the last request or DOM change, and the DOM's from `since` at the earliest. A cap
        that is hit, or a navigation meanwhile, ends that wait: the page is then as still as it gets. Returns the
        names of the caps that were hit."""
        timings = {} if timings is None else timings
        capped: list[str] = []

        async def wait_for(name: str, wait):
            with timed(timings, f"wait_{name}"):
                try:
                    return await wait
                except PlaywrightTimeoutError:
                    capped.append(name)
                except PlaywrightError:  # a navigation replaced the document meanwhile: it is loaded, or loading
                    pass

        await wait_for("load", page.wait_for_load_state("load", timeout=LOAD_CAP_MS))
        ago = (time.perf_counter() - since) * 1000
        quiet, rest = await asyncio.gather(
            wait_for("network", self._network_quiet()),
            wait_for("rest", page.evaluate(AT_REST_JS, [DOM_QUIET_MS, DOM_QUIET_CAP_MS, MOVING_CAP_MS, ago])),
        )
        return capped + ([] if quiet is not False else ["network"]) + (rest or [])

    def _document_response(self, response) -> None:
        """Keep the status of a page's document: the last response to a navigation of its main frame (a redirect's
        target's, after the redirect's own)."""
        request = response.request
        if request.is_navigation_request() and request.frame.parent_frame is None:
            self._document_status[request.frame.page] = response.status

    def _count_request(self, change: int) -> None:
        self._inflight += change
        self._last_network = time.perf_counter()

    async def _network_quiet(self) -> bool:
        """No request in flight for NETWORK_QUIET_MS (capped at NETWORK_QUIET_CAP_MS: then False): checked every 5 ms
        while one is, else once the window since the last request event would end."""
        deadline = time.perf_counter() + NETWORK_QUIET_CAP_MS / 1000
        while (now := time.perf_counter()) < deadline:
            left = self._last_network + NETWORK_QUIET_MS / 1000 - now
            if self._inflight <= 0 and left <= 0:
                return True
            await asyncio.sleep(min(0.005 if self._inflight > 0 else left, deadline - now))
        return False


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _action_dict(action: Action) -> dict:
    return {"kind": action.kind, "element": action.element, "argument": action.argument, "text": action.text}
