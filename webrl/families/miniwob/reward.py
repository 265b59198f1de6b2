"""``miniwob_reward``: a MiniWoB++ episode is scored by the page itself (its `core.endEpisode`).

The page keeps its outcome in globals: ``WOB_DONE_GLOBAL`` (the episode ended), ``WOB_RAW_REWARD_GLOBAL`` (the
task's reward in [-1, 1]), ``WOB_REWARD_GLOBAL`` (the same scaled down by the time taken, for tasks that ask for
it) and ``WOB_REWARD_REASON``. Success is raw reward > 0, the convention of MiniWoB++ papers (and BrowserGym);
every global is kept in the details. An episode the page did not end (the agent stopped, or a limit was hit)
scores 0, and so does one whose agent left the environment's page (Go Backward to the blank page before it).
"""

from __future__ import annotations

from typing import Any

from webrl.evaluators.result import EvaluationError

EPISODE_STATE_JS = """() => typeof WOB_DONE_GLOBAL === 'undefined' ? null : (
  {done: WOB_DONE_GLOBAL, raw_reward: WOB_RAW_REWARD_GLOBAL, reward: WOB_REWARD_GLOBAL,
   reason: WOB_REWARD_REASON === null ? null : String(WOB_REWARD_REASON)})"""


async def episode_state(page) -> dict[str, Any] | None:
    """The page's episode globals: done, raw_reward, reward (time-scaled), reason; None on a page that is not a
    MiniWoB++ environment."""
    return await page.evaluate(EPISODE_STATE_JS)


async def miniwob_reward(task, answer, page, **_) -> dict[str, Any]:
    """The family's evaluator of its eval type (webrl.tasks.family.Evaluator): the same in every mode."""
    if page is None:
        raise EvaluationError("miniwob_reward needs the page")
    state = await episode_state(page)
    if state is None:
        return {
            "type": "miniwob_reward",
            "score": 0.0,
            "done": False,
            "raw_reward": 0,
            "reward": 0,
            "reason": f"the agent left the environment's page (now {page.url})",
        }
    success = bool(state["done"]) and state["raw_reward"] > 0
    return {"type": "miniwob_reward", "score": 1.0 if success else 0.0, **state}
