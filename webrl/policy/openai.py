"""A policy served by any OpenAI-compatible endpoint, or a pool of them: a vLLM server (completion form, the
WebRL prompt byte for byte) or an API model (chat form). The API key comes from $OPENAI_API_KEY and is
never logged or stored."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from webrl.errors import WebrlError
from webrl.policy.base import Policy, PolicyInput, Response, Sampling
from webrl.policy.pool import ServerPool, describe_error
from webrl.policy.prompt import chat_messages, webrl_prompt

TIMEOUT_S = 300


class OpenAIPolicy(Policy):
    """`base_urls`: one server, or a pool of servers of the same model (webrl.policy.pool)."""

    def __init__(
        self,
        model: str,
        base_urls: list[str],
        chat: bool = False,
        api_key_env: str = "OPENAI_API_KEY",
        logprobs: bool = False,
        timeout_s: float = TIMEOUT_S,
    ):
        self.model = model
        self.pool = ServerPool(base_urls)
        self.chat = chat
        self.logprobs = logprobs  # completion form: ask for each sampled token's logprob (RL needs them)
        self.timeout_s = timeout_s
        self.name = f"openai:{model}@{','.join(self.pool.urls)}" + ("?chat" if chat else "")
        key = os.environ.get(api_key_env)
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}

    def act(self, inputs: list[PolicyInput], sampling: Sampling) -> list[Response]:
        with ThreadPoolExecutor(max_workers=min(len(inputs), 16) or 1) as pool:
            return list(pool.map(lambda x: self._one(x, sampling), inputs))

    def _one(self, x: PolicyInput, sampling: Sampling) -> Response:
        if self.chat:
            body = self._body(sampling) | {"messages": chat_messages(x.task.intent, x.history, x.observation.text)}
            path = "/chat/completions"
        else:
            body = self._body(sampling) | {"prompt": webrl_prompt(x.task.intent, x.history, x.observation.text)}
            path = "/completions"
            if self.logprobs:
                body["logprobs"] = 0  # the sampled tokens' own logprobs, no top-k alternatives
                body["return_tokens_as_token_ids"] = True  # vLLM's: the tokens as "token_id:N", so the ids are known
        start = time.perf_counter()
        choice, reply = self._post(path, body, x.episode)
        text = choice["message"]["content"] if self.chat else choice["text"]
        meta = {"latency_s": round(time.perf_counter() - start, 3), "usage": reply.get("usage")}
        sampled = (choice.get("logprobs") or {}) if self.logprobs else {}
        if ids := token_ids(sampled.get("tokens") or []):
            meta["token_ids"] = ids
        return Response(text or "", token_logprobs=sampled.get("token_logprobs"), meta=meta)

    def complete_text(self, prompt: str | list[dict], sampling: Sampling) -> str:
        """One free-form completion outside an episode (the curriculum's task generator): chat messages go to
        /chat/completions, a plain prompt to /completions."""
        chat = isinstance(prompt, list)
        body = self._body(sampling) | ({"messages": prompt} if chat else {"prompt": prompt})
        choice, _ = self._post("/chat/completions" if chat else "/completions", body, None)
        return (choice["message"]["content"] if chat else choice["text"]) or ""

    def _body(self, sampling: Sampling) -> dict:
        body: dict = {
            "model": self.model,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_tokens,
        }
        if sampling.stop:  # an empty stop list is not valid everywhere
            body["stop"] = list(sampling.stop)
        if sampling.seed is not None:  # vLLM and the OpenAI API take a per-request sampling seed
            body["seed"] = sampling.seed
        return body

    def _post(self, path: str, body: dict, episode: str | None) -> tuple[dict, dict]:
        """(the first choice, the whole reply) of one request, on the episode's server of the pool; errors name
        the status, never the key."""

        def send(base_url: str) -> dict:
            reply = httpx.post(base_url + path, json=body, headers=self._headers, timeout=self.timeout_s)
            reply.raise_for_status()
            return reply.json()

        try:
            data = self.pool.call(episode, send)
            return data["choices"][0], data
        except WebrlError as err:  # every server failed
            raise WebrlError(f"policy {self.name}: {err}") from None
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as err:
            # The status and reason only: never the request headers, which hold the key.
            raise WebrlError(f"policy {self.name}: {describe_error(err)}") from None


def token_ids(tokens: list[str]) -> list[int]:
    """The ids of tokens that a vLLM server wrote as "token_id:N"; none if any token is written otherwise."""
    ids = [token.removeprefix("token_id:") for token in tokens]
    return [int(i) for i in ids] if all(t.startswith("token_id:") and i.isdigit() for t, i in zip(tokens, ids)) else []
