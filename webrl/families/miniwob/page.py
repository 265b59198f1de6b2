"""The episode protocol of a MiniWoB++ page, as the package's own driver runs it: the page loads showing a
"START" cover; the harness seeds the page's random generator (`Math.seedrandom(seed)`), sets the episode time
limit (`core.EPISODE_MAX_TIME`, in ms), calls `core.startEpisodeReal()` (which generates the problem and starts
the timer), waits for `WOB_TASK_READY` and for the problem's images. The utterance is the `#query` text
(`core.getUtterance()`, or its `utterance` field where it returns one). The page ends the episode itself
(`core.endEpisode`: `WOB_DONE_GLOBAL`, the rewards; see `webrl.families.miniwob.reward`), or the timer does with
reward -1.

The page's own score panel (last reward, average, time left, episodes done), its click visualiser and the START
cover are hidden before the episode starts: the panel would leak the reward into the observation. They are
absolutely positioned, so hiding them moves nothing else.
"""

from __future__ import annotations

from webrl.families.miniwob.reward import episode_state

# MiniWoB's limits (10-30 s) are for fast scripted agents; an LLM on a CPU needs seconds per step.
DEFAULT_TIME_LIMIT_S = 600.0
READY_TIMEOUT_MS = 5000

HIDDEN_CSS = "#reward-display, #click-canvas, #sync-task-cover { display: none !important; }"

START_JS = """async ([seed, limitMs, readyTimeoutMs]) => {
  Math.seedrandom(seed);
  core.EPISODE_MAX_TIME = limitMs;
  core.startEpisodeReal();
  const until = Date.now() + readyTimeoutMs;
  while (!WOB_TASK_READY) {
    if (Date.now() > until) throw new Error('the MiniWoB task did not become ready');
    await new Promise(resolve => setTimeout(resolve, 20));
  }
  // The images of the new problem (some are CSS `content: url()`, without a size until loaded): an element is only
  // labelled in the observation once it has a box.
  const loading = () => [...document.images].some(img => !img.complete) || [...document.body.querySelectorAll('*')]
    .some(el => getComputedStyle(el).content.startsWith('url(') && el.getClientRects().length > 0
                && el.getClientRects()[0].width === 0);
  await new Promise(resolve => requestAnimationFrame(resolve));
  while (loading() && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 20));
  const utterance = core.getUtterance();  // some environments return {utterance, fields}
  return typeof utterance === 'string' ? utterance : utterance.utterance;
}"""


async def start_episode(page, seed: int, time_limit_s: float = DEFAULT_TIME_LIMIT_S, restart: bool = False) -> str:
    """Start the episode of `seed` on a loaded environment page; return its utterance. `restart`: the page ran an
    earlier episode, which is ended first (`core.endEpisode` does nothing if the page ended it), as MiniWoB's own
    driver does between episodes on one load; the task builder does the same, and gets the same problems."""
    if restart:
        await page.evaluate("() => core.endEpisode(0, false, 'the harness started another episode')")
    else:
        await page.add_style_tag(content=HIDDEN_CSS)
    return await page.evaluate(START_JS, [seed, int(time_limit_s * 1000), READY_TIMEOUT_MS])


async def episode_done(page) -> bool:
    state = await episode_state(page)
    return state is not None and bool(state["done"])
