"""Policies by name: the spec strings of the command line (POLICY_FORMS) and the model servers' lifetime."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

from webrl.errors import unknown_form
from webrl.policy.base import Policy

POLICY_FORMS = (
    "oracle                       run each task's scripted solution",
    "random[:SEED]                uniformly random valid actions over the page's element ids",
    (
        "openai:MODEL@BASE_URL[,...]  an OpenAI-compatible server (vLLM or an API), or several serving the same "
        "model (each episode stays on one); add ?chat for the chat form; key from $OPENAI_API_KEY"
    ),
    (
        "vllm:MODEL_SPEC              a vLLM server webrl starts and stops itself (tiny, or an HF folder); "
        "needs scripts/install-vllm.sh"
    ),
    (
        "hf:MODEL_SPEC                transformers in this process (tiny, smollm2-135m, ORG/NAME or an HF folder; "
        "see `webrl models list`)"
    ),
)


def make_policy(spec: str, models_dir: Path | None = None, context: int | None = None) -> Policy:
    """Build a policy from its command-line spec (see POLICY_FORMS); model specs of hf:/vllm: are prepared in
    `models_dir` (default: `<state dir>/models` of the environment's configuration). `context` caps an hf:
    model's prompt plus answer in tokens (below its own context); a server (vllm:, openai:) has its own limit."""
    return policy_builder(spec, models_dir, context)()


def policy_builder(spec: str, models_dir: Path | None = None, context: int | None = None) -> Callable[[], Policy]:
    """What builds the policy `spec` names, without building it (a bad spec is refused before any model loads, or
    before a cluster's workers start); the usage error listing the forms for a spec of none of them."""
    kind, _, rest = spec.partition(":")
    if kind == "oracle" and not rest:
        from webrl.policy.oracle import OraclePolicy

        return OraclePolicy
    if kind == "random" and (not rest or rest.isdigit()):
        from webrl.policy.random import RandomPolicy

        return lambda: RandomPolicy(int(rest or 0))
    if kind == "openai" and "@" in rest:
        from webrl.policy.openai import OpenAIPolicy

        model, _, urls = rest.partition("@")
        urls, _, option = urls.partition("?")
        pool = _server_list(urls)
        if model and pool and option in ("", "chat", "completion"):
            return lambda: OpenAIPolicy(model=model, base_urls=pool, chat=option == "chat")
    if kind == "vllm" and rest:
        from webrl.policy.vllm import VLLMPolicy

        return lambda: VLLMPolicy(rest, models_dir)
    if kind == "hf" and rest:

        def hf() -> Policy:
            from webrl.policy.hf import HFPolicy  # torch and transformers: only when one is built

            return HFPolicy(rest, models_dir, context=context)

        return hf
    raise unknown_form(f"policy spec '{spec}'", POLICY_FORMS)


def _server_list(urls: str) -> list[str] | None:
    """The servers of `urls` ("URL1,URL2,..."), or None unless each is a distinct http(s) URL with a host."""
    pool = urls.split(",")
    if all(url.startswith(("http://", "https://")) and url.partition("://")[2].strip("/") for url in pool):
        if len({url.rstrip("/") for url in pool}) == len(pool):
            return pool
    return None


@contextmanager
def serving(policy: Policy, starting: Callable[[], AbstractContextManager] = nullcontext) -> Iterator[Policy]:
    """Start a policy that runs its own model server (vllm:) before the first episode, inside `starting()` (a
    spinner), so that a failed start is one clear error rather than a policy error per episode; stop it
    afterwards, whatever happens."""
    try:
        with starting():
            policy.start()
        yield policy
    finally:
        policy.close()
