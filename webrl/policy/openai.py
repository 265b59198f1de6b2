"""A policy served by any OpenAI-compatible endpoint: a vLLM server (completion form, the WebRL
prompt byte for byte) or an API model (chat form). The API key comes from $OPENAI_API_KEY and is
never logged or stored."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from webrl.errors import WebrlError
from webrl.policy.base import PolicyInput, Response, Sampling
from webrl.policy.prompt import chat_messages, webrl_prompt

TIMEOUT_S = 300


class OpenAIPolicy:
    def __init__(self, model: str, base_url: str, chat: bool = False, api_key_env: str = "OPENAI_API_KEY",
                 logprobs: bool = False):
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.chat = chat
        self.logprobs = logprobs  # completion form: ask for each sampled token's logprob (RL needs them)
        self.name = f"openai:{model}@{self.base_url}" + ("?chat" if chat else "")
        key = os.environ.get(api_key_env)
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}

    def act(self, inputs: list[PolicyInput], sampling: Sampling) -> list[Response]:
        with ThreadPoolExecutor(max_workers=min(len(inputs), 16) or 1) as pool:
            return list(pool.map(lambda x: self._one(x, sampling), inputs))

    def _one(self, x: PolicyInput, sampling: Sampling) -> Response:
        body: dict = {"model": self.model, "temperature": sampling.temperature, "top_p": sampling.top_p,
                      "max_tokens": sampling.max_tokens, "stop": list(sampling.stop)}
        if self.chat:
            body["messages"] = chat_messages(x.task.intent, x.history, x.observation.text)
            path = "/chat/completions"
        else:
            body["prompt"] = webrl_prompt(x.task.intent, x.history, x.observation.text)
            path = "/completions"
            if self.logprobs:
                body["logprobs"] = 0  # the sampled tokens' own logprobs, no top-k alternatives
        start = time.perf_counter()
        try:
            reply = httpx.post(self.base_url + path, json=body, headers=self._headers, timeout=TIMEOUT_S)
            reply.raise_for_status()
            choice = reply.json()["choices"][0]
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as err:
            # The status and reason only: never the request headers, which hold the key.
            raise WebrlError(f"policy {self.name}: {type(err).__name__}: {str(err).splitlines()[0][:200]}") from None
        text = choice["message"]["content"] if self.chat else choice["text"]
        logprobs = (choice.get("logprobs") or {}).get("token_logprobs") if self.logprobs else None
        return Response(text or "", token_logprobs=logprobs,
                        meta={"latency_s": round(time.perf_counter() - start, 3), "usage": reply.json().get("usage")})
