"""The pluggable LLM judge behind ``fuzzy_match`` and the unachievable-reason rule.

A judge is anything with a ``name`` (recorded with every result) and ``complete(messages) -> str``.
``OpenAIJudge`` talks plain HTTP to an OpenAI-compatible ``/chat/completions`` endpoint at temperature 0 (the
originals used gpt-4-1106-preview, temperature 0, top_p 1, max_tokens 768). The API key comes from an environment
variable and is never logged or put into an error message.

The messages keep the originals' structure and decision words, in our own wording:
- fuzzy match: a grading instruction, the question, the reference, a note that 'N/A' means "not achievable", the
  student answer, and a request to conclude with correct / incorrect / partially correct. The reply is lower-cased;
  'partially correct' or 'incorrect' in it scores 0, otherwise 'correct' must be in it (score 1), otherwise the
  reply is unparsable (the originals raise an AssertionError).
- VAB variant: the same, ending with "output only one of these options".
- unachievable match: the task, the actual reason, the reported reason, and a request to answer 'same' or
  'different'. 'different' in the reply scores 0, otherwise 'same' must be in it (score 1).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Protocol, runtime_checkable

from webrl.errors import UsageError, WebrlError
from webrl.evaluators.result import AssertionFailed, EvaluationError

SYSTEM = "You are a helpful assistant."
MAX_TOKENS = 768


@runtime_checkable
class Judge(Protocol):
    name: str

    def complete(self, messages: list[dict]) -> str: ...


class JudgeReplyError(Exception):
    """The judge's reply contains none of the decision words."""


def fuzzy_messages(question: str, reference: str, answer: str, *, vab: bool = False) -> list[dict]:
    ending = (
        "Reply with exactly one of 'correct', 'incorrect' or 'partially correct', and output nothing else."
        if vab
        else "End your judgement with one of: correct, incorrect, partially correct."
    )
    user = (
        "You are helping a teacher grade a student's answer. Decide whether the student answer says the same "
        "thing as the reference answer; the wording may differ as long as the meaning is the same.\n"
        f"question: {question}\n"
        f"reference answer: {reference}\n"
        "The string 'N/A' means that the task is not achievable.\n"
        f"student answer: {answer}\n"
        f"{ending}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def ua_messages(intent: str, actual_reason: str, reported_reason: str) -> list[dict]:
    user = (
        f"task: {intent}\n"
        f"actual unachievable reason: {actual_reason}\n"
        f"reported unachievable reason: {reported_reason}\n"
        "The task above cannot be done, for the actual reason given. An agent reported the reason shown. "
        "Decide whether the reported reason agrees with the actual one. If it does, respond with 'same'; "
        "otherwise respond with 'different'."
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def decide_fuzzy(reply: str) -> float:
    text = reply.lower()
    if "partially correct" in text or "incorrect" in text:
        return 0.0
    if "correct" in text:
        return 1.0
    raise JudgeReplyError(f"fuzzy-match reply has none of correct/incorrect/partially correct: {reply[:200]!r}")


def decide_ua(reply: str) -> float:
    text = reply.lower()
    if "different" in text:
        return 0.0
    if "same" in text:
        return 1.0
    raise JudgeReplyError(f"unachievable-match reply has neither 'same' nor 'different': {reply[:200]!r}")


class OpenAIJudge:
    """An OpenAI-compatible chat endpoint: POST ``{base_url}/chat/completions``."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        *,
        timeout_s: float = 120,
        retries: int = 3,
    ):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.retries = retries
        self.name = f"openai:{model}@{self.base_url}"

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIJudge({self.name!r})"

    def complete(self, messages: list[dict]) -> str:
        import httpx

        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body = {"model": self.model, "messages": messages, "temperature": 0, "top_p": 1, "max_tokens": MAX_TOKENS}
        url = f"{self.base_url}/chat/completions"
        problem = ""
        for attempt in range(self.retries):
            try:
                response = httpx.post(url, json=body, headers=headers, timeout=self.timeout_s)
            except httpx.HTTPError as err:
                problem = f"{type(err).__name__}"
            else:
                if response.status_code == 200:
                    try:
                        return response.json()["choices"][0]["message"]["content"] or ""
                    except (ValueError, KeyError, IndexError, TypeError):
                        raise WebrlError(f"judge {self.name}: unexpected response shape") from None
                problem = f"HTTP {response.status_code}"
                if response.status_code in (400, 401, 403, 404, 422):
                    break  # not worth retrying
            if attempt + 1 < self.retries:
                time.sleep(min(2**attempt, 8))
        raise WebrlError(f"judge {self.name}: request failed ({problem})")


def parse_judge_spec(spec: str | None) -> Judge | None:
    """``"openai:MODEL@URL"`` -> an OpenAIJudge; ``"none"`` (or empty) -> no judge."""
    if spec is None or spec.strip().lower() in ("", "none"):
        return None
    kind, _, rest = spec.partition(":")
    model, _, url = rest.partition("@")
    if kind != "openai" or not model or not url.startswith(("http://", "https://")):
        raise UsageError(
            f"judge {spec!r}: expected 'openai:MODEL@URL' (e.g. openai:gpt-4o@https://api.openai.com/v1) or 'none'"
        )
    return OpenAIJudge(base_url=url, model=model)


async def ask(judge: Judge | None, messages: list[dict], decide) -> tuple[float | None, str | None]:
    """One judge call: (score, reply). No judge -> (None, None): unjudged, never a silent pass or fail.
    An unparsable reply fails the originals' assert: AssertionFailed, which the router turns
    into an error (webarena, vab) or a 0 for the task (browsergym, which catches it)."""
    if judge is None:
        return None, None
    try:
        reply = await asyncio.to_thread(judge.complete, messages)
    except WebrlError as err:
        raise EvaluationError(str(err)) from None
    try:
        return decide(reply), reply
    except JudgeReplyError as err:
        raise AssertionFailed(str(err)) from None
