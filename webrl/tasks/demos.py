"""Demonstrations from scripted solutions: the oracle runs each task in the real environment and every
step of a successful episode becomes one SFT record, `{"prompt": <the exact WebRL prompt>,
"response": <the action text>}` (plus task id and step), the shape phase 0 of the replay buffer uses too."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.async_api import async_playwright

from webrl.browser import launch_chromium
from webrl.env.browser_env import BrowserEnv
from webrl.policy.base import PolicyInput, Sampling
from webrl.policy.oracle import OraclePolicy
from webrl.policy.prompt import webrl_prompt
from webrl.tasks.model import Task


async def write_demos(tasks: list[Task], backend, out: Path, on_task=lambda task, ok: None) -> tuple[int, int]:
    """Append the demos of every task whose scripted solution succeeds; (episodes kept, records written)."""
    oracle, kept, written = OraclePolicy(), 0, 0
    async with async_playwright() as playwright:
        browser = await launch_chromium(playwright)
        env = BrowserEnv(browser, backend, 0)
        try:
            with out.open("w") as sink:
                for task in tasks:
                    records = []
                    obs, _ = await env.reset(task)
                    while True:
                        [response] = oracle.act([PolicyInput(env.task, env.history, obs)], Sampling())
                        records.append({"task_id": task.task_id, "step": len(env.history),
                                        "prompt": webrl_prompt(env.task.intent, env.history, obs.text),
                                        "response": response.text})
                        obs, reward, terminated, truncated, _ = await env.step(response.text)
                        if terminated or truncated:
                            break
                    ok = reward == 1.0
                    if ok:
                        sink.writelines(json.dumps(r) + "\n" for r in records)
                        kept, written = kept + 1, written + len(records)
                    on_task(task, ok)
        finally:
            await env.close()
            await browser.close()
    return kept, written
