"""Model specs: `tiny` built offline, SmolLM2 converted from its wheel, Hub ids from the local HF cache, the
errors a user sees, and `webrl models` as a user runs it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from webrl.errors import UsageError
from webrl.policy import models
from webrl.policy.base import Sampling
from webrl.policy.hf import HFPolicy
from webrl.policy.models import (
    BOS,
    PAD,
    SMOLLM2,
    folder_size,
    load_causal_lm,
    load_tokenizer,
    prepared_models,
    resolve_model,
)
from webrl.policy.prompt import END_OF_TURN, SYSTEM_PROMPT, webrl_prompt

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def webrl(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "webrl", *args], env=env, capture_output=True, text=True, check=False, timeout=300
    )


def user_env(tmp_path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBRL_")}
    return {**env, "WEBRL_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "200", **extra}


def test_tiny_builds_once_and_reloads_offline(tmp_path, offline):
    path = resolve_model("tiny", tmp_path)
    weights = (path / "model.safetensors").stat().st_mtime_ns
    assert resolve_model("tiny", tmp_path) == path and (path / "model.safetensors").stat().st_mtime_ns == weights
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no half-written folder left behind
    assert prepared_models(tmp_path) == [(path, folder_size(path))] and folder_size(path) > 1e6
    tokenizer = load_tokenizer(path)
    ids = tokenizer("Round 0<|start_header_id|>user").input_ids
    assert ids[0] == tokenizer.bos_token_id and tokenizer.bos_token == BOS
    assert tokenizer.convert_tokens_to_ids("<|start_header_id|>") in ids  # a header is one special token
    assert (tokenizer.pad_token, tokenizer.eos_token) == (PAD, END_OF_TURN)
    model = load_causal_lm(path)
    assert model.config.eos_token_id == tokenizer.eos_token_id and not model.training
    assert model(**tokenizer("hello", return_tensors="pt")).logits.shape[-1] == len(tokenizer)


def test_tinys_corpus_is_the_text_it_will_see_not_source_code():
    """The tokenizer (hence the vocabulary and the random initialisation) changes with the prompt text and the site
    templates only: an edit to a comment of the prompt module must not make another model."""
    corpus = models._tiny_corpus()
    assert SYSTEM_PROMPT in corpus and any(text.startswith("Task Instruction: ") for text in corpus)
    assert not any("def webrl_prompt" in text or '"""' in text for text in corpus)
    assert sum("<html" in text or "{%" in text for text in corpus) > 20  # the sites' page templates


# The reader's identity: its committed vocabulary, and its initial weights for a seed (torch 2.13's CPU generator).
# Nothing else may change them (a site template edit must not); a deliberate change updates these pins.
READER_VOCAB_SHA256 = "c95b267960660bf0334fb979d5c20315a6d6a06ba5be5cc4c17e75419a52e0da"
READER_WEIGHTS_SHA256 = {
    0: "9dba451646e8e1b4c1ece7f91d4800bf026abfe0acf2ce39d818fd587b86dad4",
    1: "c100b5c1ade9308ab36de363d37c2747391c28647dc6bb80bc2a28e5e7630177",
}


def weights_digest(model) -> str:
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.contiguous().numpy().tobytes())
    return digest.hexdigest()


def test_the_readers_vocabulary_and_initial_weights_are_pinned(tmp_path, offline):
    assert hashlib.sha256(models.reader_vocab_path().read_bytes()).hexdigest() == READER_VOCAB_SHA256
    for seed, pinned in READER_WEIGHTS_SHA256.items():
        path = resolve_model(f"reader:{seed}", tmp_path)
        assert weights_digest(load_causal_lm(path)) == pinned, f"reader:{seed}"
    assert resolve_model("reader", tmp_path) == resolve_model("reader:0", tmp_path)
    assert models.seeded("reader", 3) == "reader:3" and models.seeded("tiny", 3) == "tiny"


def test_the_reader_reads_a_word_as_one_token_wherever_it_stands(tmp_path, offline):
    tokenizer = load_tokenizer(resolve_model("reader", tmp_path))

    def tokens(text: str) -> list[str]:
        return tokenizer.convert_ids_to_tokens(tokenizer(text, add_special_tokens=False).input_ids)

    # The quoted word of the instruction, the button's text on the page and the typed argument: one token each time,
    # and a word the vocabulary lacks is spelt in the same pieces in all three.
    assert tokens("yes") == ["yes"] and len(tokens("Zorblax")) > 1
    for word in ("yes", "Zorblax"):
        pieces = tokens(word)
        instruction = tokens(f'Click on the "{word}" button.')
        page = tokens(f'<button id="12"> {word} </button>')
        answer = tokens(f'do(action="Type", argument="{word}", element="12")')
        for seen in (instruction, page, answer):
            assert seen[seen.index(pieces[0]) : seen.index(pieces[0]) + len(pieces)] == pieces, seen
        assert "12" in page and "12" in answer  # an element id is one token on the page and in the answer
    # Decoding gives back exactly the text: spaces, newlines and punctuation included.
    text = 'Round 1\n\n# Element: the "OK" button\ndo(action="Type", argument="a  b\tc", element="7")'
    ids = tokenizer(text + END_OF_TURN).input_ids
    assert ids[0] == tokenizer.bos_token_id and ids[-1] == tokenizer.eos_token_id
    assert tokenizer.decode(ids, skip_special_tokens=True) == text


def test_bad_specs_are_usage_errors(tmp_path, offline):
    with pytest.raises(UsageError, match="valid forms"):
        resolve_model("gpt-7", tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no config.json"):
        resolve_model(str(tmp_path / "empty"), tmp_path)
    with pytest.raises(UsageError, match="not in the local Hugging Face cache.*HF_HUB_OFFLINE"):
        resolve_model("webrl-test/not-cached-anywhere", tmp_path)


def test_hub_ids_come_from_the_local_hf_cache(tmp_path):
    """A Hub id resolves to its snapshot in the HF cache, with downloads off (a cached copy of `tiny`)."""
    repo = tmp_path / "hub" / "models--webrl-test--tiny"
    shutil.copytree(resolve_model("tiny", tmp_path / "state" / "models"), repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    env = user_env(tmp_path, HF_HUB_CACHE=str(tmp_path / "hub"), HF_HUB_OFFLINE="1")
    found = webrl(env, "models", "prepare", "webrl-test/tiny")
    assert found.returncode == 0, found.stderr
    assert f"webrl-test/tiny: {repo / 'snapshots' / COMMIT} (3." in found.stdout
    missing = webrl(env, "models", "prepare", "webrl-test/other")
    assert missing.returncode == 2 and "not in the local Hugging Face cache" in missing.stderr


@pytest.mark.slow  # builds models in subprocesses (~13 s)
def test_models_prepare_and_list_on_the_command_line(tmp_path):
    env = user_env(tmp_path)
    before = webrl(env, "models", "list")
    assert before.returncode == 0 and "nothing prepared yet" in before.stdout and SMOLLM2 in before.stdout
    prepared = webrl(env, "models", "prepare", "tiny")
    assert prepared.returncode == 0, prepared.stderr
    folder = next((tmp_path / "state" / "models").iterdir())
    assert prepared.stdout.startswith(f"tiny: {folder} (") and " MB, " in prepared.stdout
    listed = webrl(env, "models", "list")
    assert listed.returncode == 0 and folder.name in listed.stdout and str(folder) in listed.stdout
    bad = webrl(env, "models", "prepare", "nope")
    assert bad.returncode == 2 and "valid forms" in bad.stderr and "Traceback" not in bad.stderr
    usage = webrl(env, "models", "prepare", "--help")
    assert usage.returncode == 0 and "ORG/NAME" in usage.stdout


@pytest.mark.slow  # converts and runs a 135M model
def test_smollm2_converts_from_the_wheel_and_answers_sensibly(tmp_path, offline, monkeypatch):
    path = resolve_model(SMOLLM2, tmp_path)
    assert path == tmp_path / SMOLLM2 and [p.name for p in tmp_path.iterdir()] == [SMOLLM2]
    config = json.loads((path / "config.json").read_text())
    assert config["dtype"] == "bfloat16" and "quantization_config" not in config
    assert 250e6 < (path / "model.safetensors").stat().st_size < 300e6  # bf16, half of fp32
    written = (path / "model.safetensors").stat().st_mtime_ns
    with monkeypatch.context() as patch:  # a second resolve uses the folder: no conversion, nothing rewritten
        patch.setattr(models, "_convert_gguf", lambda *args: pytest.fail("converted again"))
        assert resolve_model(SMOLLM2, tmp_path) == path
    assert (path / "model.safetensors").stat().st_mtime_ns == written

    policy = HFPolicy(SMOLLM2, cache_dir=tmp_path)
    assert len(policy.tokenizer(END_OF_TURN).input_ids) > 1  # Llama-3 headers are plain text to SmolLM2
    chat = policy.tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}], add_generation_prompt=True, tokenize=False
    )
    answer = policy.complete([chat], Sampling(max_tokens=24))[0]
    assert "Paris" in answer.text and answer.meta["finish_reason"] == "stop"  # ended by its own <|im_end|>
    assert "<|im_end|>" not in answer.text and len(answer.token_logprobs) == answer.meta["completion_tokens"]
    webrl_answer = policy.complete([webrl_prompt("Buy socks.", [], "<html> </html>")], Sampling(max_tokens=4))[0]
    assert webrl_answer.meta["completion_tokens"] <= 4 and len(webrl_answer.token_logprobs) <= 4
