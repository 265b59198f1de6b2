"""``miniwob_reward``: a MiniWoB++ episode is scored by the page itself (its `core.endEpisode`).

The page keeps its outcome in globals: ``WOB_DONE_GLOBAL`` (the episode ended), ``WOB_RAW_REWARD_GLOBAL`` (the
task's reward in [-1, 1]), ``WOB_REWARD_GLOBAL`` (the same scaled down by the time taken, for tasks that ask for
it) and ``WOB_REWARD_REASON``. Success is raw reward > 0, the convention of MiniWoB++ papers (and BrowserGym);
every global is kept in the details. An episode the page did not end (the agent stopped, or a limit was hit)
scores 0.
"""

from __future__ import annotations

from typing import Any

EPISODE_STATE_JS = """() => ({done: WOB_DONE_GLOBAL, raw_reward: WOB_RAW_REWARD_GLOBAL, reward: WOB_REWARD_GLOBAL,
                             reason: WOB_REWARD_REASON === null ? null : String(WOB_REWARD_REASON)})"""


async def episode_state(page) -> dict[str, Any]:
    """The page's episode globals: done, raw_reward, reward (time-scaled), reason."""
    return await page.evaluate(EPISODE_STATE_JS)


async def miniwob_reward(page) -> dict[str, Any]:
    state = await episode_state(page)
    success = bool(state["done"]) and state["raw_reward"] > 0
    return {"type": "miniwob_reward", "score": 1.0 if success else 0.0, **state}
